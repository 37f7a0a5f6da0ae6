// The file name of a volume's journal record, derived from its CSI volume id.
//
// The id must meet the volume ID rule (journal/volume_id.h), which already
// makes it a safe file name; the mapping below is kept because journals on
// disk use it (and it would stay safe for any bytes). It is injective and
// every name is a single safe path component:
//  - "v." + the id with [A-Za-z0-9-] kept and every other byte written as
//    "_xx" (lower-case hex) + ".rec", when that body is at most 180 bytes -
//    readable for the usual ceph-csi ids ("0001-0009-rook-ceph-...");
//  - otherwise "b." + unpadded base64url of the id + ".rec".
// Neither body contains '.', so the two families cannot collide, and the
// longest name (186 bytes) leaves room for the ".<unix ms>.<n>" suffix of a
// quarantined copy within NAME_MAX (255).
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace nbdk {

inline constexpr std::string_view kRecordFileSuffix = ".rec";

// ValidateVolumeId's InvalidArgument for an id that breaks the rule.
Result<std::string> RecordFileName(std::string_view volume_id);

// Whether `name` has the shape RecordFileName produces (prefix and suffix);
// whether it matches the record inside is checked when the record is read.
bool IsRecordFileName(std::string_view name);

}  // namespace nbdk
