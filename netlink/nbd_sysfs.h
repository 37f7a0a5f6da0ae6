// The one owner of the nbd sysfs path: every file of /dev/nbd<index> under
// sysfs, "<sysfs_root>/block/nbd<index>/<name>", is named by NbdSysfsFile,
// and kSysfsRoot is the one production root every config defaults to.
// The rest is what sysfs says about a device: small pure file reads.
//
// /sys/block/nbd<index>/backend holds the backend identifier given at
// connect time: rbd-nbd's cookie (a random UUID unless --cookie was
// passed). It is how the supervisor and the journal recognise their device.
//
// /sys/block/nbd<index>/pid exists while the device holds a configuration,
// but its CONTENT is the pid of the process that ORIGINALLY mapped it and
// stays so, even after a re-attach by another process (drivers/block/nbd.c:
// nbd_start_device sets nbd->pid = task_pid_nr(current) once, at connect;
// a re-attach goes through nbd_reconnect_socket, which swaps the socket
// and leaves nbd->pid alone; nbd_config_put clears it with the pid file).
// It is a pid in the initial pid namespace. So it can confirm that a live
// `rbd-nbd map` is the device's server, and never finds one by itself.
//
// `sysfs_root` is kSysfsRoot in production, a temporary directory in tests.
// Thread-safe; blocking file I/O, but sysfs reads do not wait on devices.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace nbdk {

inline constexpr char kSysfsRoot[] = "/sys";

// (7, "/sys", "queue/io_timeout") -> "/sys/block/nbd7/queue/io_timeout".
// `index` must not be negative (the readers below check it).
std::string NbdSysfsFile(int index, const std::string& sysfs_root, std::string_view name);

// The cookie of /dev/nbd<index>, without the trailing newline. NotFound when
// the device or its backend file does not exist (not connected, or
// connected without a backend identifier) or the file is empty;
// InvalidArgument for a negative index.
Result<std::string> ReadNbdBackendCookie(int index, const std::string& sysfs_root = kSysfsRoot);

// The device is still the volume's: /dev/<device> ("/dev/nbd7") carries
// `cookie`. FailedPrecondition naming what it carries instead (another
// cookie: another volume's map took the index; none: disconnected); the
// read's error when the backend file cannot be read. Every later use of a
// mapped device (publish, expand, unmap, release) checks this first.
Status CheckNbdBackendCookie(const std::string& device, const std::string& cookie,
                             const std::string& sysfs_root = kSysfsRoot);

// Whether /sys/block/nbd<index>/pid exists (the device is in use). Its
// content is deliberately not read: see above. InvalidArgument for a
// negative index; IoError when the existence cannot be determined.
Result<bool> NbdPidFileExists(int index, const std::string& sysfs_root = kSysfsRoot);

// The content of /sys/block/nbd<index>/pid (see above). NotFound when the
// file does not exist; InvalidArgument for a negative index or content
// that is not a positive pid.
Result<int> ReadNbdPid(int index, const std::string& sysfs_root = kSysfsRoot);

// The names of the devices holding /dev/nbd<index> (device-mapper, md:
// the entries of its holders directory), empty when it has none or the
// device does not exist. InvalidArgument for a negative index; the errno's
// error naming the directory when it cannot be listed.
Result<std::vector<std::string>> ReadNbdHolders(int index, const std::string& sysfs_root = kSysfsRoot);

// What the block layer counts for /dev/nbd<index>: requests the driver
// holds (started, not completed) and requests completed since the device
// was created. A device holding requests whose completed count stands
// still is stalled (supervisor/stall_rule.h).
struct NbdIoCounters {
  uint64_t in_flight = 0;  // reads + writes (the `inflight` file)
  uint64_t completed = 0;  // reads, writes, discards, flushes (`stat`)
};

// Parses the two files' text: `inflight` is "<reads> <writes>", `stat` the
// 11, 15 or 17 fields of Documentation/block/stat.rst (discards since
// 4.18, flushes since 5.5; absent ones count 0). InvalidArgument naming
// the file otherwise.
Result<NbdIoCounters> ParseNbdIoCounters(std::string_view inflight, std::string_view stat);
Result<NbdIoCounters> ReadNbdIoCounters(int index, const std::string& sysfs_root = kSysfsRoot);

// The indexes of every nbd device whose backend cookie is `cookie`, in
// ascending order (a stage retried after a crash finds the device its first
// attempt mapped). IoError when /sys/block cannot be listed.
Result<std::vector<int>> NbdDevicesWithCookie(const std::string& cookie, const std::string& sysfs_root = kSysfsRoot);

}  // namespace nbdk
