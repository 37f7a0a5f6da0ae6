// Base64 as Go's encoding/base64 writes it, in the two flavours ceph-csi's
// encryption uses: StdEncoding ('+', '/'; what encoding/json writes for a
// []byte, so the wrapped key's "dek" and "nonce") and URLEncoding ('-',
// '_'; the volume passphrase). Both pad with '='.
//
// Decoding is Go's StdEncoding.Decode minus its leniencies: no '\r' or '\n'
// skipped, and the unused bits of the last character must be zero (Go's
// Strict mode), so every input has one decoding and one encoding. What
// ceph-csi writes always decodes. Pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"

namespace nbdk {

enum class Base64Alphabet { kStandard, kUrl };

// The padded length of `size` bytes encoded: 4 characters per 3 bytes begun.
constexpr size_t Base64EncodedLength(size_t size) { return (size + 2) / 3 * 4; }

// Writes Base64EncodedLength(in.size()) characters to `out`, nothing else:
// a caller encoding a secret chooses where the characters live.
void EncodeBase64To(std::span<const uint8_t> in, Base64Alphabet alphabet, char* out);
std::string EncodeBase64(std::span<const uint8_t> in, Base64Alphabet alphabet);

// The bytes of standard, padded base64. InvalidArgument naming the offset
// of the first character that cannot be there, or the length when it is
// not a multiple of 4. Never used for a secret (it returns a std::string).
Result<std::string> DecodeBase64Standard(std::string_view text);

}  // namespace nbdk
