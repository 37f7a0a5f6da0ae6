// The cephx key `map` sends in the CSI secret: read from a file, never from
// the command line (argv is world-readable in /proc).
#pragma once

#include <string>

#include "base/status.h"
#include "daemon/ctl/cluster_choice.h"

namespace nbdk::ctl {

// The key of client.<user_id>, found as librados finds it: `keyfile` (the
// --keyfile: a bare key, what `ceph auth get-key` prints, or a keyring)
// when given; else the cluster's ceph.conf settings for the user, `key`
// then `keyfile` then the first existing file of `keyring` (metavariables
// expanded); else the first existing file of Ceph's default keyrings
// (/etc/ceph/$cluster.$name.keyring, $cluster.keyring, keyring). The error
// names the file and what is wrong with it, never a key. BLOCKING.
Result<std::string> ReadCephxKey(const std::string& keyfile, const std::string& user_id, const ChosenCluster& cluster);

// The key in `text` (a bare key or a keyring section for client.<user_id>).
// Pure.
Result<std::string> CephxKeyFrom(const std::string& text, const std::string& user_id);

}  // namespace nbdk::ctl
