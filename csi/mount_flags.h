// Mount flags from a volume capability (a StorageClass's mountOptions), by
// allow-list: the one check of them, run by CreateVolume, NodeStageVolume
// and NodePublishVolume (through csi/volume_capability.h) before any side
// effect.
//
// Allowed: options that tune how a filesystem behaves (atime, discard,
// commit interval, ACLs, quotas, allocation), the SELinux context options
// Kubernetes adds, and "ro". Refused, among others: anything naming a path
// or device (ext4 journal_path, xfs logdev/rtdev), options that trade crash
// safety away (nobarrier, barrier=0), errors=panic (a Ceph hiccup must not
// take the node down), suid and dev (staging mounts are nosuid,nodev), and
// "rw", which would undo a read-only access mode. The spec says flags MAY
// be sensitive, so errors name the flag's index, never its text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace nbdk {

// Splits each flag on commas outside double quotes (a SELinux context value
// may hold commas: context="system_u:object_r:t:s0:c1,c2") into single
// options and checks each against the allow-list for `fs_type` ("ext4",
// "xfs"). `field` names the flags in errors ("volume_capability.mount.
// mount_flags"). InvalidArgument for a malformed or refused option.
Result<std::vector<std::string>> ParseMountFlags(const std::vector<std::string>& flags, const std::string& fs_type,
                                                 const std::string& field);

// The options of a filesystem's staging mount: nosuid,nodev (no set-uid
// programs or device nodes from a volume's content on the node), then the
// allow-listed `flags`, then "ro" when read-only. The stage mounts with
// them and a heal remounts with them.
std::vector<std::string> StagingMountOptions(const std::vector<std::string>& flags, bool read_only);

}  // namespace nbdk
