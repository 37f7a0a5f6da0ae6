// Test-only, in the VM: what a test sees of an encrypted volume on this node
// without asking nbdkeeperd - device-mapper devices as the kernel lists them
// (sysfs, whether or not udev made /dev/mapper links), what is mounted or
// bound at a path, bytes on a device or in a file, the known plaintext the
// tests write, the node journal's record and the stash as JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace nbdk::vmtest {

// One active device-mapper device.
struct MapperView {
  std::string dm;                    // "dm-3": its node is /dev/dm-3
  std::string dev;                   // "253:3"
  std::vector<std::string> backing;  // its slaves: {"nbd0"}
  int64_t bytes = -1;

  bool operator==(const MapperView&) const = default;
};

// The active device-mapper device named `name`; nullopt when none is.
std::optional<MapperView> FindMapper(const std::string& name);
// The names of the active device-mapper devices that start with `prefix`.
std::vector<std::string> MappersNamed(const std::string& prefix);

// "major:minor" of the device mounted at `path` (mountinfo), or of the
// block device node `path` is (a bind mount of one); "" otherwise.
std::string MountedDevice(const std::string& path);
std::string BlockDeviceNumber(const std::string& path);
// A block device's size: /sys/block/<name>/size for "/dev/<name>", the
// BLKGETSIZE64 ioctl for another node (a published block volume); -1 when
// unread.
int64_t BlockDeviceBytes(const std::string& path);

// A 4 KiB block of a recognizable text, the tests' known plaintext, and the
// text itself (what a scan for the plaintext looks for).
const std::string& KnownBlock();
const std::string& KnownText();
// Writes kKnownBlocks copies of KnownBlock() at `offset` of `path`
// (O_DIRECT|O_DSYNC; a file is created) / checks they read back.
inline constexpr int kKnownBlocks = 16;
Status WriteKnown(const std::string& path, int64_t offset = 0);
Status ExpectKnown(const std::string& path, int64_t offset = 0);

// Whether the bytes of `path` hold `needle` anywhere; `direct` reads with
// O_DIRECT (a block device whose page cache may be stale).
Result<bool> Holds(const std::string& path, const std::string& needle, bool direct);

// The JSON payload of the node journal's record of `volume_id` under
// `journal_dir`; the value of a string member of a JSON object text ("" when
// absent or not a string); whether a member is the boolean true.
Result<std::string> JournalRecordJson(const std::string& journal_dir, const std::string& volume_id);
std::string JsonString(const std::string& json, const char* member);
bool JsonTrue(const std::string& json, const char* member);

}  // namespace nbdk::vmtest
