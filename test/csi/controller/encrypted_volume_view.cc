#include "test/csi/controller/encrypted_volume_view.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <rapidjson/document.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "journal/node_record_file_name.h"
#include "journal/node_record_frame.h"

namespace nbdk::vmtest {
namespace {

namespace fs = std::filesystem;
constexpr size_t kBlock = 4096;

std::string FirstLine(const fs::path& path) {
  std::string line;
  std::getline(std::ifstream(path), line);
  return line;
}

struct Freed {
  void operator()(void* p) const { ::free(p); }
};
using AlignedBuffer = std::unique_ptr<char, Freed>;

AlignedBuffer Aligned(size_t bytes) {
  void* p = nullptr;
  return AlignedBuffer(::posix_memalign(&p, kBlock, bytes) == 0 ? static_cast<char*>(p) : nullptr);
}

}  // namespace

std::optional<MapperView> FindMapper(const std::string& name) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/sys/block", ec)) {
    if (FirstLine(entry.path() / "dm" / "name") != name) continue;
    MapperView view;
    view.dm = entry.path().filename();
    view.dev = FirstLine(entry.path() / "dev");
    for (const auto& slave : fs::directory_iterator(entry.path() / "slaves", ec)) {
      view.backing.push_back(slave.path().filename());
    }
    std::sort(view.backing.begin(), view.backing.end());
    view.bytes = BlockDeviceBytes("/dev/" + view.dm);
    return view;
  }
  return std::nullopt;
}

std::vector<std::string> MappersNamed(const std::string& prefix) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/sys/block", ec)) {
    std::string name = FirstLine(entry.path() / "dm" / "name");
    if (!name.empty() && name.rfind(prefix, 0) == 0) names.push_back(name);
  }
  return names;
}

std::string MountedDevice(const std::string& path) {
  // mountinfo: id parent major:minor root mount-point ...; the last mount
  // at a path is the one seen there.
  std::ifstream in("/proc/self/mountinfo");
  std::string line, found;
  while (std::getline(in, line)) {
    std::stringstream fields(line);
    std::string id, parent, dev, root, mount_point;
    fields >> id >> parent >> dev >> root >> mount_point;
    if (mount_point == path) found = dev;
  }
  return found;
}

std::string BlockDeviceNumber(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISBLK(st.st_mode)) return "";
  return std::to_string(major(st.st_rdev)) + ":" + std::to_string(minor(st.st_rdev));
}

int64_t BlockDeviceBytes(const std::string& path) {
  if (path.rfind("/dev/", 0) == 0 && path.find('/', 5) == std::string::npos) {
    std::string sectors = FirstLine("/sys/block/" + path.substr(5) + "/size");
    return sectors.empty() ? -1 : std::atoll(sectors.c_str()) * 512;
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  uint64_t bytes = 0;
  int rc = ::ioctl(fd, BLKGETSIZE64, &bytes);
  ::close(fd);
  return rc == 0 ? static_cast<int64_t>(bytes) : -1;
}

const std::string& KnownText() {
  static const std::string text = "nbdkeeper known plaintext 5c0e7a1";
  return text;
}

const std::string& KnownBlock() {
  static const std::string block = [] {
    std::string b;
    while (b.size() + KnownText().size() + 1 <= kBlock) b += KnownText() + "\n";
    b.resize(kBlock, '.');
    return b;
  }();
  return block;
}

Status WriteKnown(const std::string& path, int64_t offset) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_DIRECT | O_DSYNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::FromErrno(errno, "open " + path);
  AlignedBuffer buf = Aligned(kBlock);
  std::memcpy(buf.get(), KnownBlock().data(), kBlock);
  Status result = Status::Ok();
  for (int i = 0; i < kKnownBlocks && result.ok(); ++i) {
    if (::pwrite(fd, buf.get(), kBlock, offset + i * static_cast<int64_t>(kBlock)) != static_cast<ssize_t>(kBlock)) {
      result = Status::FromErrno(errno, "write " + path);
    }
  }
  ::close(fd);
  return result;
}

Status ExpectKnown(const std::string& path, int64_t offset) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, "open " + path);
  AlignedBuffer buf = Aligned(kBlock);
  Status result = Status::Ok();
  for (int i = 0; i < kKnownBlocks && result.ok(); ++i) {
    int64_t at = offset + i * static_cast<int64_t>(kBlock);
    ssize_t n = ::pread(fd, buf.get(), kBlock, at);
    if (n != static_cast<ssize_t>(kBlock)) {
      result = Status::FromErrno(n < 0 ? errno : EIO, "read " + path + " at " + std::to_string(at));
    } else if (std::memcmp(buf.get(), KnownBlock().data(), kBlock) != 0) {
      result = Status::Corruption(path + ": the known block at " + std::to_string(at) + " reads otherwise");
    }
  }
  ::close(fd);
  return result;
}

Result<bool> Holds(const std::string& path, const std::string& needle, bool direct) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (direct ? O_DIRECT : 0));
  if (fd < 0) return Status::FromErrno(errno, "open " + path);
  constexpr size_t kChunk = 1 << 20;
  AlignedBuffer buf = Aligned(kChunk);
  std::string window;  // the last needle.size() - 1 bytes, then a chunk
  bool found = false;
  for (int64_t at = 0; !found;) {
    ssize_t n = ::pread(fd, buf.get(), kChunk, at);
    if (n < 0) {
      Status s = Status::FromErrno(errno, "read " + path);
      ::close(fd);
      return s;
    }
    if (n == 0) break;
    at += n;
    window.append(buf.get(), static_cast<size_t>(n));
    found = window.find(needle) != std::string::npos;
    window.erase(0, window.size() - std::min(window.size(), needle.size() - 1));
  }
  ::close(fd);
  return found;
}

Result<std::string> JournalRecordJson(const std::string& journal_dir, const std::string& volume_id) {
  auto name = RecordFileName(volume_id);
  if (!name.ok()) return name.status();
  std::ifstream in(journal_dir + "/" + *name, std::ios::binary);
  if (!in) return Status::NotFound("no journal record " + journal_dir + "/" + *name);
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto payload = DecodeRecordFrame(file);
  if (!payload.ok()) return payload.status();
  return std::string(*payload);
}

std::string JsonString(const std::string& json, const char* member) {
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember(member) || !doc[member].IsString()) return "";
  return doc[member].GetString();
}

bool JsonTrue(const std::string& json, const char* member) {
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  return !doc.HasParseError() && doc.IsObject() && doc.HasMember(member) && doc[member].IsBool() &&
         doc[member].GetBool();
}

}  // namespace nbdk::vmtest
