// ProbeDevice (filesystem.h): is a device blank? libblkid's safe probe,
// after a read of the device's head and tail, on a pool thread.
//
// Why not `blkid -p`: it exits 2 both when it found nothing and when it
// could not read the device, and a stage that takes an unreadable device
// for a blank one formats over the data it could not see. Here only a
// device that was read, and on which the probe found nothing, is blank.
#include <blkid/blkid.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "base/unique_fd.h"
#include "csi/node/filesystem.h"

namespace nbdk {
namespace {

// Signatures live near the ends: superblocks and partition tables at the
// head, GPT's backup header and md's 0.90 and 1.0 superblocks at the tail.
constexpr uint64_t kEdgeBytes = 1 << 20;

struct ProbeFree {
  void operator()(blkid_probe probe) const { blkid_free_probe(probe); }
};
using UniqueProbe = std::unique_ptr<std::remove_pointer_t<blkid_probe>, ProbeFree>;

Result<uint64_t> DeviceBytes(int fd, const std::string& device) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Status::FromErrno(errno, "stat " + device);
  if (S_ISREG(st.st_mode)) return static_cast<uint64_t>(st.st_size);
  if (!S_ISBLK(st.st_mode)) return Status::FailedPrecondition(device + " is neither a block device nor a file");
  uint64_t bytes = 0;
  if (::ioctl(fd, BLKGETSIZE64, &bytes) != 0) return Status::FromErrno(errno, "size of " + device);
  return bytes;
}

// Every byte of [offset, offset + length) read, or why not.
Status ReadRange(int fd, const std::string& device, uint64_t offset, uint64_t length) {
  std::vector<char> buffer(std::min<uint64_t>(length, 64 * 1024));
  for (uint64_t done = 0; done < length;) {
    size_t chunk = std::min<uint64_t>(buffer.size(), length - done);
    ssize_t n = ::pread(fd, buffer.data(), chunk, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    std::string at = device + " at byte " + std::to_string(offset + done);
    if (n < 0) return Status::FromErrno(errno, "cannot read " + at);
    if (n == 0) return Status::IoError("cannot read " + at + ": the device ended early");
    done += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

std::string ProbeValue(blkid_probe probe, const char* name) {
  const char* data = nullptr;
  size_t length = 0;
  if (blkid_probe_lookup_value(probe, name, &data, &length) != 0 || data == nullptr) return "";
  return std::string(data, strnlen(data, length));
}

}  // namespace

Result<DeviceSignature> ProbeDeviceSignature(const std::string& device) {
  UniqueFd fd(::open(device.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Status::FromErrno(errno, "open " + device);
  auto bytes = DeviceBytes(fd.get(), device);
  if (!bytes.ok()) return bytes.status();
  // An nbd device without a connection has size 0: nothing was read.
  if (*bytes == 0) return Status::FailedPrecondition(device + " has size 0: there is nothing to probe");
  uint64_t edge = std::min(*bytes, kEdgeBytes);
  if (Status s = ReadRange(fd.get(), device, 0, edge); !s.ok()) return s;
  if (Status s = ReadRange(fd.get(), device, *bytes - edge, edge); !s.ok()) return s;

  UniqueProbe probe(blkid_new_probe());
  if (!probe) return Status::ResourceExhausted("libblkid: no probe for " + device);
  if (blkid_probe_set_device(probe.get(), fd.get(), 0, 0) != 0) return Status::FromErrno(errno, "libblkid " + device);
  blkid_probe_enable_superblocks(probe.get(), 1);
  blkid_probe_set_superblocks_flags(probe.get(), BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE);
  blkid_probe_enable_partitions(probe.get(), 1);
  errno = 0;
  switch (blkid_do_safeprobe(probe.get())) {
    case 1:  // read, and nothing found: the one blank answer
      return DeviceSignature{};
    case 0: {
      DeviceSignature found{ProbeValue(probe.get(), "TYPE"), ProbeValue(probe.get(), "PTTYPE")};
      // Found, with no name we know: not blank either.
      if (found.blank()) found.type = "unnamed";
      return found;
    }
    case -2:
      return Status::FailedPrecondition(device + " carries more than one signature (libblkid's probe is ambivalent)");
    default:
      return Status::IoError("libblkid could not probe " + device + (errno ? ": " + std::string(strerror(errno)) : ""));
  }
}

void ProbeDevice(EventLoop& loop, const std::string& device, std::function<void(Result<DeviceSignature>)> done) {
  RunBlockingResult<DeviceSignature>(
      loop, [device] { return ProbeDeviceSignature(device); }, std::move(done));
}

}  // namespace nbdk
