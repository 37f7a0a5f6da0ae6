#include "csi/node/stash.h"

#include <fcntl.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/durable_file.h"
#include "base/json_writer.h"
#include "base/regular_file.h"

namespace nbdk {
namespace {

constexpr size_t kMaxStashBytes = 64 * 1024;

std::string DirOf(std::string_view staging_target_path) {
  std::string dir(staging_target_path);
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

Status Bad(std::string_view file, std::string_view field, std::string_view what) {
  return Status::Corruption(std::string(file) + ": field " + std::string(field) + ": " + std::string(what));
}

const rapidjson::Value* Member(const rapidjson::Value& object, const char* name) {
  auto it = object.FindMember(name);
  if (it == object.MemberEnd() || it->value.IsNull()) return nullptr;
  return &it->value;
}

Status GetString(const rapidjson::Value& object, const char* name, std::string_view file, std::string* out) {
  const rapidjson::Value* v = Member(object, name);
  if (v == nullptr) return Status::Ok();
  if (!v->IsString()) return Bad(file, name, "expected a string");
  out->assign(v->GetString(), v->GetStringLength());
  return Status::Ok();
}

Status GetBool(const rapidjson::Value& object, const char* name, std::string_view file, bool* out) {
  const rapidjson::Value* v = Member(object, name);
  if (v == nullptr) return Status::Ok();
  if (!v->IsBool()) return Bad(file, name, "expected true or false");
  *out = v->GetBool();
  return Status::Ok();
}

}  // namespace

std::string StashPath(std::string_view staging_target_path) {
  return DirOf(staging_target_path) + "/" + kStashFileName;
}

std::string EncodeStash(const ImageMetaStash& s) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("Version");
  w.Int(s.version);
  WriteJsonMember(w, "pool", s.pool);
  WriteJsonMember(w, "radosNamespace", s.rados_namespace);
  WriteJsonMember(w, "image", s.image);
  WriteJsonMember(w, "unmapOptions", s.unmap_options);
  w.Key("accessType");
  w.Bool(s.nbd_access);
  w.Key("encrypted");
  w.Bool(s.encrypted);
  WriteJsonMember(w, "device", s.device);
  WriteJsonMember(w, "logDir", s.log_dir);
  WriteJsonMember(w, "logFileStrategy", s.log_file_strategy);
  WriteJsonMember(w, "clusterID", s.cluster_id);
  WriteJsonMember(w, "cookie", s.cookie);
  w.EndObject();
  return JsonText(buf);
}

Result<ImageMetaStash> DecodeStash(std::string_view json, std::string_view file) {
  std::string name(file);
  if (json.empty()) return Status::Corruption(name + ": empty file");
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError()) {
    return Status::Corruption(name + ": not valid JSON at offset " + std::to_string(doc.GetErrorOffset()) + ": " +
                              rapidjson::GetParseError_En(doc.GetParseError()));
  }
  if (!doc.IsObject()) return Status::Corruption(name + ": top level is not a JSON object");

  ImageMetaStash s;
  if (const rapidjson::Value* v = Member(doc, "Version")) {
    if (!v->IsInt()) return Bad(file, "Version", "expected an integer");
    s.version = v->GetInt();
  }
  NBDK_RETURN_IF_ERROR(GetString(doc, "pool", file, &s.pool));
  NBDK_RETURN_IF_ERROR(GetString(doc, "radosNamespace", file, &s.rados_namespace));
  NBDK_RETURN_IF_ERROR(GetString(doc, "image", file, &s.image));
  NBDK_RETURN_IF_ERROR(GetString(doc, "unmapOptions", file, &s.unmap_options));
  NBDK_RETURN_IF_ERROR(GetBool(doc, "accessType", file, &s.nbd_access));
  NBDK_RETURN_IF_ERROR(GetBool(doc, "encrypted", file, &s.encrypted));
  NBDK_RETURN_IF_ERROR(GetString(doc, "device", file, &s.device));
  NBDK_RETURN_IF_ERROR(GetString(doc, "logDir", file, &s.log_dir));
  NBDK_RETURN_IF_ERROR(GetString(doc, "logFileStrategy", file, &s.log_file_strategy));
  NBDK_RETURN_IF_ERROR(GetString(doc, "clusterID", file, &s.cluster_id));
  NBDK_RETURN_IF_ERROR(GetString(doc, "cookie", file, &s.cookie));
  if (s.pool.empty()) return Bad(file, "pool", "missing or empty");
  if (s.image.empty()) return Bad(file, "image", "missing or empty");
  return s;
}

Status WriteStash(const std::string& staging_target_path, const ImageMetaStash& stash) {
  return ReplaceFileDurably(StashPath(staging_target_path), EncodeStash(stash), 0600).WithContext("write stash");
}

Result<ImageMetaStash> ReadStash(const std::string& staging_target_path) {
  std::string path = StashPath(staging_target_path);
  // A symlink or FIFO planted at the path is Corruption; a missing file is
  // NotFound.
  Result<UniqueFd> opened = OpenRegularFile(path, O_RDONLY | O_NOFOLLOW);
  if (!opened.ok()) return opened.status().WithContext("read stash");
  UniqueFd fd = std::move(opened).value();
  std::string text;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(errno, "read stash " + path);
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxStashBytes) return Status::Corruption(path + ": larger than 64 KiB");
  }
  return DecodeStash(text, path);
}

Status RemoveStash(const std::string& staging_target_path) {
  return RemoveFileDurably(StashPath(staging_target_path)).WithContext("remove stash");
}

}  // namespace nbdk
