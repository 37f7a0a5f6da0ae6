// What sysfs says about /dev/nbd<index>: small pure file reads.
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
// `sysfs_root` is "/sys" in production, a temporary directory in tests.
// Thread-safe; blocking file I/O, but sysfs reads do not wait on devices.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace nbdk {

// The cookie of /dev/nbd<index>, without the trailing newline. NotFound when
// the device or its backend file does not exist (not connected, or
// connected without a backend identifier) or the file is empty;
// InvalidArgument for a negative index.
Result<std::string> ReadNbdBackendCookie(int index, const std::string& sysfs_root = "/sys");

// Whether /sys/block/nbd<index>/pid exists (the device is in use). Its
// content is deliberately not read: see above. InvalidArgument for a
// negative index; IoError when the existence cannot be determined.
Result<bool> NbdPidFileExists(int index, const std::string& sysfs_root = "/sys");

// The content of /sys/block/nbd<index>/pid (see above). NotFound when the
// file does not exist; InvalidArgument for a negative index or content
// that is not a positive pid.
Result<int> ReadNbdPid(int index, const std::string& sysfs_root = "/sys");

// The indexes of every nbd device whose backend cookie is `cookie`, in
// ascending order (a stage retried after a crash finds the device its first
// attempt mapped). IoError when /sys/block cannot be listed.
Result<std::vector<int>> NbdDevicesWithCookie(const std::string& cookie, const std::string& sysfs_root = "/sys");

}  // namespace nbdk
