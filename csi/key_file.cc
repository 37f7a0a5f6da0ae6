#include "csi/key_file.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <memory>

#include "base/durable_file.h"
#include "base/quote_field.h"

namespace nbdk {

std::string KeyFilePath(const std::string& dir, const std::string& volume_id) { return dir + "/" + volume_id + ".key"; }

Result<std::string> WriteKeyFile(const std::string& dir, const std::string& volume_id, const std::string& key) {
  // Callers pass validated IDs; this keeps the file inside `dir` regardless.
  if (volume_id.empty() || volume_id == "." || volume_id == ".." || volume_id.size() > 200 ||
      volume_id.find('/') != std::string::npos) {
    return Status::InvalidArgument("key file name for volume " + QuoteField(volume_id) + " is not a single file name");
  }
  NBDK_RETURN_IF_ERROR(CheckKeyDir(dir));
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

Status CheckKeyDir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return Status::FromErrno(errno, "create key dir " + dir);
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return Status::FromErrno(errno, "key dir " + dir);
  if (!S_ISDIR(st.st_mode)) return Status::FailedPrecondition("key dir " + dir + " is not a directory");
  if (st.st_uid != ::geteuid()) {
    return Status::FailedPrecondition("key dir " + dir + " is owned by uid " + std::to_string(st.st_uid) +
                                      ", not this daemon's " + std::to_string(::geteuid()));
  }
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return Status::FailedPrecondition("key dir " + dir + " is mode " + mode +
                                      ": the keys' directory must be 0700 (no access for group or others)");
  }
  return Status::Ok();
}

Result<std::vector<std::string>> RemoveStaleKeyFiles(const std::string& dir,
                                                     const std::function<bool(std::string_view volume_id)>& keep,
                                                     std::time_t before) {
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) {
    if (errno == ENOENT) return std::vector<std::string>{};
    return Status::FromErrno(errno, "list key dir " + dir);
  }
  std::vector<std::string> removed;
  constexpr std::string_view kSuffix = ".key";
  while (const dirent* e = ::readdir(d.get())) {
    std::string_view name = e->d_name;
    if (name.size() <= kSuffix.size() || !name.ends_with(kSuffix)) continue;
    std::string path = dir + "/" + std::string(name);
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    bool stale = name.starts_with('.') ? st.st_mtime < before : !keep(name.substr(0, name.size() - kSuffix.size()));
    if (!stale) continue;
    NBDK_RETURN_IF_ERROR(RemoveKeyFile(path));
    removed.emplace_back(name);
  }
  std::sort(removed.begin(), removed.end());
  return removed;
}

}  // namespace nbdk
