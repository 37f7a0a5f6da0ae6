#include "csi/key_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/durable_file.h"
#include "base/quote_field.h"

namespace nbdk {

std::string KeyFilePath(const std::string& dir, const std::string& volume_id) {
  return dir + "/" + volume_id + ".key";
}

Result<std::string> WriteKeyFile(const std::string& dir, const std::string& volume_id, const std::string& key) {
  // Callers pass validated IDs; this keeps the file inside `dir` regardless.
  if (volume_id.empty() || volume_id == "." || volume_id == ".." || volume_id.size() > 200 ||
      volume_id.find('/') != std::string::npos) {
    return Status::InvalidArgument("key file name for volume " + QuoteField(volume_id) + " is not a single file name");
  }
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return Status::FromErrno(errno, "create key dir " + dir);
  std::string path = KeyFilePath(dir, volume_id);
  // The directory is a tmpfs, so its fsync costs nothing; the replace is
  // the one crash-safe one all the same.
  if (Status s = ReplaceFileDurably(path, key + "\n", 0600); !s.ok()) return s.WithContext("key file");
  return path;
}

Status RemoveKeyFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return Status::FromErrno(errno, "remove key file " + path);
  return Status::Ok();
}

}  // namespace nbdk
