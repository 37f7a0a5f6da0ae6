// The one owner of what a cephx user ID and key may be: every door that
// takes them (the Node's and the Controller's request secrets, a
// RadosConfig) checks them here, so that what one accepts the others, and
// rbd-nbd and librados after them, accept too.
//
// A user ID names the user without "client." (librados and rbd-nbd --id
// add it) and becomes one argv token. A key is base64 (Ceph's own are 40
// characters: 28 bytes); surrounding whitespace is not part of it (a
// secret made with `echo` ends in a newline, and Ceph's key file reader
// drops it too). Errors name the field and what is wrong, never the key.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"

namespace nbdk {

inline constexpr size_t kMaxCephxUserIdBytes = 128;

// OK, or InvalidArgument "<field>: ..." when `user_id` is empty, longer
// than kMaxCephxUserIdBytes, has whitespace or a control character, starts
// with '-' or with "client.".
Status CheckCephxUserId(std::string_view field, std::string_view user_id);

// `text` without its surrounding whitespace: the key to write to a key
// file. InvalidArgument "<field>: missing" when nothing else is left,
// "<field>: not a base64 cephx key ..." when a character is not base64.
Result<std::string> ParseCephxKey(std::string_view field, std::string_view text);

}  // namespace nbdk
