#include "encryption/volume_passphrase.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <new>
#include <utility>

#include "encryption/base64.h"

namespace nbdk {

SecretBytes SecretBytes::CopyOf(std::string_view bytes) {
  SecretBytes secret = Zeroed(bytes.size());
  if (!bytes.empty()) std::memcpy(secret.data(), bytes.data(), bytes.size());
  return secret;
}

void SecretBytes::Unmap::operator()(char* p) const { ::munmap(p, length); }

SecretBytes SecretBytes::Zeroed(size_t size) {
  SecretBytes secret;
  // Pages of its own (anonymous: zeros), so that MADV_DONTDUMP covers the
  // secret and nothing else: no core dump holds it, whatever the dump
  // settings (the daemon also turns dumps off, daemon/main.cc).
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t length = (std::max<size_t>(size, 1) + page - 1) / page * page;
  void* p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  (void)::madvise(p, length, MADV_DONTDUMP);
  secret.bytes_ = std::unique_ptr<char, Unmap>(static_cast<char*>(p), Unmap{length});
  secret.size_ = size;
  return secret;
}

SecretBytes::~SecretBytes() { Wipe(); }

SecretBytes::SecretBytes(SecretBytes&& other) noexcept
    : bytes_(std::move(other.bytes_)), size_(std::exchange(other.size_, 0)) {}

SecretBytes& SecretBytes::operator=(SecretBytes&& other) noexcept {
  if (this != &other) {
    Wipe();
    bytes_ = std::move(other.bytes_);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void SecretBytes::Wipe() {
  if (bytes_) OPENSSL_cleanse(bytes_.get(), size_);
  bytes_.reset();
  size_ = 0;
}

Result<SecretBytes> GenerateVolumePassphrase() {
  static_assert(Base64EncodedLength(kVolumePassphraseRandomBytes) == kVolumePassphraseLength);
  std::array<uint8_t, kVolumePassphraseRandomBytes> random;
  bool drawn = RAND_bytes(random.data(), static_cast<int>(random.size())) == 1;
  SecretBytes passphrase = SecretBytes::Zeroed(kVolumePassphraseLength);
  if (drawn) EncodeBase64To(random, Base64Alphabet::kUrl, passphrase.data());
  OPENSSL_cleanse(random.data(), random.size());
  if (!drawn) return Status::Internal("RAND_bytes failed: no random bytes for a volume passphrase");
  return passphrase;
}

}  // namespace nbdk
