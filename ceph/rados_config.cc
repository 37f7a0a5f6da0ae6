#include "ceph/rados_config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "base/regular_file.h"
#include "base/text_rules.h"
#include "ceph/cephx_credentials.h"

namespace nbdk {
namespace {

std::string JoinMonitors(std::vector<std::string> monitors, bool sorted) {
  if (sorted) std::sort(monitors.begin(), monitors.end());
  std::string out;
  for (const auto& m : monitors) {
    if (!out.empty()) out += ',';
    out += m;
  }
  return out;
}

// A file librados must read: the field name leads the message.
Status CheckReadableFile(std::string_view field, const std::string& path) {
  // O_NONBLOCK: a FIFO must fail the check below, not hang the caller.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return Status::FromErrno(errno, std::string(field) + " " + path + ": cannot open");
  }
  struct stat st {};
  int rc = fstat(fd, &st);
  int err = errno;
  close(fd);
  if (rc != 0) return Status::FromErrno(err, std::string(field) + " " + path + ": cannot stat");
  if (!S_ISREG(st.st_mode)) {
    return Status::InvalidArgument(std::string(field) + " " + path + ": not a regular file");
  }
  return Status::Ok();
}

}  // namespace

std::string RadosConfig::Describe() const {
  std::string out = "monitors ";
  out += monitors.empty() ? "(from ceph.conf)" : JoinMonitors(monitors, false);
  if (!ceph_conf.empty()) out += " (conf " + ceph_conf + ")";
  out += " as client." + user_id;
  return out;
}

std::string RadosConfig::CacheKey() const {
  // '\n' cannot occur in a validated field, so the key is unambiguous.
  return ceph_conf + "\n" + JoinMonitors(monitors, true) + "\n" + user_id;
}

int OpTimeoutS(const RadosConfig& config) {
  constexpr int kOsdFailoverS = 20 + 6;
  return config.timeout_s + kOsdFailoverS;
}

RadosConfig RadosConfigForImage(const ImageSpec& image, int timeout_s) {
  RadosConfig config;
  config.ceph_conf = image.ceph_conf;
  config.monitors = image.monitors;
  config.user_id = image.user_id;
  config.keyfile = image.keyfile;
  config.timeout_s = timeout_s;
  return config;
}

Status ValidateRadosConfig(const RadosConfig& config) {
  NBDK_RETURN_IF_ERROR(CheckCephxUserId("user_id", config.user_id));
  for (size_t i = 0; i < config.monitors.size(); ++i) {
    const std::string& m = config.monitors[i];
    if (m.empty() || HasSpaceOrControl(m)) {
      return Status::InvalidArgument("monitors[" + std::to_string(i) + "]: '" + m +
                                     "' is empty or contains a space or control character");
    }
  }
  // librados reads ceph_conf as a list of paths split at these characters.
  if (HasSpaceOrControl(config.ceph_conf) || config.ceph_conf.find_first_of(",;") != std::string::npos) {
    return Status::InvalidArgument("ceph_conf: '" + config.ceph_conf +
                                   "' contains a space, ',', ';' or control character");
  }
  if (config.timeout_s < 1 || config.timeout_s > 3600) {
    return Status::InvalidArgument("timeout_s: " + std::to_string(config.timeout_s) + " is outside 1..3600 seconds");
  }
  if (config.keyfile.empty()) return Status::InvalidArgument("keyfile: missing");
  NBDK_RETURN_IF_ERROR(CheckReadableFile("keyfile", config.keyfile));
  if (!config.ceph_conf.empty()) NBDK_RETURN_IF_ERROR(CheckReadableFile("ceph_conf", config.ceph_conf));
  return Status::Ok();
}

Result<std::string> KeyFingerprint(const std::string& keyfile) {
  // A cephx key file holds ~40 base64 characters; anything big is not one.
  constexpr size_t kMaxKeyfileBytes = 4096;
  NBDK_RETURN_IF_ERROR(CheckReadableFile("keyfile", keyfile));
  // Opened again (a FIFO swapped in after the check must not block either).
  Result<UniqueFd> fd = OpenRegularFile(keyfile, O_RDONLY);
  if (!fd.ok()) return fd.status().WithContext("keyfile");
  std::string content(kMaxKeyfileBytes + 1, '\0');
  ssize_t n = read(fd->get(), content.data(), content.size());
  if (n < 0) return Status::FromErrno(errno, "keyfile " + keyfile + ": cannot read");
  if (static_cast<size_t>(n) > kMaxKeyfileBytes) {
    return Status::InvalidArgument("keyfile " + keyfile + ": larger than " + std::to_string(kMaxKeyfileBytes) +
                                   " bytes, not a cephx key file");
  }
  content.resize(static_cast<size_t>(n));
  size_t first = content.find_first_not_of(" \t\r\n");
  size_t last = content.find_last_not_of(" \t\r\n");
  std::string key = first == std::string::npos ? "" : content.substr(first, last - first + 1);
  if (key.empty()) return Status::InvalidArgument("keyfile " + keyfile + ": empty");
  // In-memory only, compared with other fingerprints of this process: a
  // 64-bit hash of an unknown key cannot be matched by guessing.
  char hex[17];
  snprintf(hex, sizeof(hex), "%016zx", std::hash<std::string>{}(key));
  return std::string(hex);
}

Status StatusFromRados(int rc, std::string_view what) {
  int err = std::abs(rc);
  switch (err) {
    case ESHUTDOWN:
      return Status::Unavailable(std::string(what) + ": client blocklisted or connection shut down (ESHUTDOWN)");
    case ENOTCONN:
    case ECONNREFUSED:
    case EBUSY:  // librbd: the image is in use (watchers, a running operation); retry later
      return Status::Unavailable(Status::FromErrno(err, what).message());
    case EACCES:
    case EPERM:
      return Status::FailedPrecondition(Status::FromErrno(err, what).message() + " (check the cephx user's caps)");
    default:
      return Status::FromErrno(err, what);
  }
}

bool IsConnectionError(int rc) {
  int err = std::abs(rc);
  return err == ESHUTDOWN || err == ENOTCONN || err == ETIMEDOUT;
}

}  // namespace nbdk
