// The options mkfs gets at a volume's first stage, as ceph-csi's Node picks
// them: its defaults for the filesystem type, or the volume context's (the
// StorageClass's) mkfsOptions in their place, never added to them. Pure.
//
// mkfsOptions is outside input that ends up in a root command's argv, so
// every option is checked against an allow-list per filesystem: the ones
// that shape the filesystem (block and inode sizes, reserved blocks,
// features, striping hints, label, lazy init, discard). Anything that names
// a host file or device (mke2fs -d, -z, -l, -E offset, mkfs.xfs -p, -l
// logdev, -r rtdev), changes what is made (-t, -n, -N, -S) or is not listed
// is refused by name. Each option is its own argv element, the value its
// next one ("-m0" becomes "-m", "0"); options are separated by spaces, as
// ceph-csi splits them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace nbdk {

// ceph-csi's defaults, for a fresh device (mkfsDefaultArgs in its
// nodeserver.go): ext4 -m0 -Enodiscard,lazy_itable_init=1,lazy_journal_init=1;
// xfs -K.
std::vector<std::string> DefaultMkfsOptions(std::string_view fs_type);

// `text` (mkfsOptions; "" means the defaults) for `fs_type` ("ext4" or
// "xfs"), as argv elements. InvalidArgument naming the option or value
// that is not allowed, "mkfsOptions: ..."; for another fs_type, InvalidArgument.
Result<std::vector<std::string>> MkfsOptions(std::string_view fs_type, std::string_view text);

}  // namespace nbdk
