// SecretBytes, the one holder of a secret (a volume's LUKS passphrase, the
// StorageClass's encryptionPassphrase, a derived key), and the volume
// passphrase ceph-csi generates.
//
// A SecretBytes owns pages of its own, left out of core dumps
// (MADV_DONTDUMP) and wiped (OPENSSL_cleanse) when it is destroyed or
// assigned over; a move hands the buffer over and leaves the
// source empty, so no copy of the bytes is left behind (a std::string's
// inline buffer would keep one). It cannot be copied, streamed or turned
// into a string implicitly: the bytes are reached only through data() and
// Reveal(), so every use of a secret is visible where it happens. Never
// pass Reveal()'s view to a log, a Status, argv or a file outside the key
// directory's rules.
//
// ceph-csi's volume passphrase (internal/util/crypto.go:245-254, size from
// internal/rbd/encryption.go:62): 20 bytes from crypto/rand, encoded with
// Go's base64.URLEncoding, which pads: 28 characters of [A-Za-z0-9_-]
// ending in one '='. The "28 characters, URL-safe base64" holds;
// the trailing '=' is part of the passphrase LUKS sees.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <memory>
#include <string_view>

#include "base/status.h"

namespace nbdk {

class SecretBytes {
 public:
  SecretBytes() = default;  // empty
  // A copy of `bytes`; the caller wipes its own copy.
  static SecretBytes CopyOf(std::string_view bytes);
  // `size` zero bytes, to be written through data().
  static SecretBytes Zeroed(size_t size);

  ~SecretBytes();
  SecretBytes(SecretBytes&& other) noexcept;
  SecretBytes& operator=(SecretBytes&& other) noexcept;
  SecretBytes(const SecretBytes&) = delete;
  SecretBytes& operator=(const SecretBytes&) = delete;

  char* data() { return bytes_.get(); }
  const char* data() const { return bytes_.get(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // The secret itself, valid while this object lives and is not moved.
  std::string_view Reveal() const { return {bytes_.get(), size_}; }

  // Never printable: streaming one does not compile.
  friend std::ostream& operator<<(std::ostream&, const SecretBytes&) = delete;

 private:
  void Wipe();

  struct Unmap {
    size_t length;
    void operator()(char* p) const;
  };
  std::unique_ptr<char, Unmap> bytes_;
  size_t size_ = 0;
};

// ceph-csi's passphrase: 20 random bytes, 28 characters once encoded.
inline constexpr size_t kVolumePassphraseRandomBytes = 20;
inline constexpr size_t kVolumePassphraseLength = 28;

// A new volume passphrase from OpenSSL's RAND_bytes, encoded as above.
// Internal when the random generator fails (it is not seeded). Thread-safe.
Result<SecretBytes> GenerateVolumePassphrase();

}  // namespace nbdk
