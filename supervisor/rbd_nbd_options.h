// RbdNbdOptions: the rbd-nbd options a StorageClass may add to a mapping
// (the nbd part of its mapOptions, which csi/map_options.h picks out), by
// allow-list. The one parser of them: CreateVolume checks a StorageClass's
// mapOptions with it, NodeStageVolume turns them into argv with it, and the
// supervisor re-checks journaled argv with it before every map or attach.
//
// Ceph's argument parser treats '-' and '_' in option names alike, so names
// are compared normalised ("io-timeout", "io_timeout" and "--io_timeout"
// are one option). Anything not listed is refused, naming the option. Not
// listed on purpose, among others: paths and programs (admin-socket,
// log-file, quiesce-hook, keyring: files Ceph writes, removes or runs as
// root), what nbdkeeper sets itself (device, cookie, id, keyfile, mon_host,
// conf, reattach-timeout, read-only), librbd's cache (kept off: a write it
// acknowledged would be lost with a killed rbd-nbd), and IO or op timeouts
// other than 0 (a Ceph stall longer than them fails IO with EIO, the outage
// nbdkeeper exists to prevent).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace nbdk {

// "try-netlink, exclusive,io_timeout=0" -> {"--try-netlink", "--exclusive",
// "--io-timeout=0"}: comma-separated options, optionally with leading "--",
// blanks around options and empty options dropped; each becomes one argv
// token in its canonical spelling. InvalidArgument naming the option when
// it is not allowed, lacks a value it needs, has one it must not, or has a
// value outside its rule.
Result<std::vector<std::string>> ParseRbdNbdOptions(std::string_view csv);

// Checks argv tokens (a journal record's, or a MapRequest's) against the same
// allow-list, one "--name[=value]" token per option.
Status ValidateRbdNbdOptions(const std::vector<std::string>& tokens);

// The rule for a snapshot's mapping, on tokens the allow-list passed:
// "--exclusive" is refused, naming it. rbd-nbd asks for the image's
// exclusive lock before it moves to the snapshot (where librbd lets it go
// again): a read-only map would take the lock from the image's writer, and
// means nothing on a snapshot no one else may write either.
Status CheckSnapshotMapOptions(const std::vector<std::string>& tokens);

}  // namespace nbdk
