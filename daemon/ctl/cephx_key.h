// The cephx key `map` sends in the CSI secret: read from a file, never from
// the command line (argv is world-readable in /proc).
#pragma once

#include <string>

#include "base/status.h"

namespace nbdk::ctl {

// `keyfile` holds the bare key (what `ceph auth get-key` prints) or a
// keyring ("key = AQ..." under [client.USER]); "" means the keyring
// /etc/ceph/ceph.client.<user_id>.keyring. The error names the file and
// what is wrong with it, never a key.
Result<std::string> ReadCephxKey(const std::string& keyfile, const std::string& user_id);

// The key in `text` (a bare key or a keyring section for client.<user_id>).
// Pure.
Result<std::string> CephxKeyFrom(const std::string& text, const std::string& user_id);

}  // namespace nbdk::ctl
