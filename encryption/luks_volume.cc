#include "encryption/luks_volume.h"

#include <libcryptsetup.h>

#include <cerrno>
#include <memory>
#include <mutex>

#include "base/quote_field.h"

namespace nbdk {
namespace {

// ceph-csi's luksFormat flags (cryptsetup.go:40-45) and the CLI's defaults.
constexpr const char* kCipher = "aes";
constexpr const char* kCipherMode = "xts-plain64";
constexpr size_t kVolumeKeyBytes = 64;  // 512 bits: XTS's two AES-256 keys
constexpr const char* kPbkdfHash = "sha256";
constexpr uint32_t kPbkdfMemoryKib = 32768;
// device-mapper's DM_NAME_LEN (128) counts the terminating NUL.
constexpr size_t kMaxMapperNameBytes = 127;
constexpr std::string_view kMapperPrefix = "luks-rbd-";
// Enough of libcryptsetup's error lines to say why, bounded.
constexpr size_t kMaxReasonBytes = 512;

// Held by every function: libcryptsetup is not safe to call from two
// threads at once (module-level device-mapper state), and the log below is
// one buffer.
std::mutex& CryptLock() {
  static std::mutex lock;
  return lock;
}

// The error lines libcryptsetup logged during the current call (under
// CryptLock). Its other levels (normal, verbose, debug) are dropped: the
// library's default would print them to stdout.
std::string& CryptReason() {
  static std::string reason;
  return reason;
}

void KeepErrors(int level, const char* message, void*) {
  if (level != CRYPT_LOG_ERROR || message == nullptr) return;
  std::string& reason = CryptReason();
  std::string_view line(message);
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.remove_suffix(1);
  if (line.empty() || reason.size() >= kMaxReasonBytes) return;
  if (!reason.empty()) reason += "; ";
  reason += line.substr(0, kMaxReasonBytes - reason.size());
}

// Takes CryptLock, installs the log callback once and clears the reason.
class CryptCall {
 public:
  CryptCall() : lock_(CryptLock()) {
    static std::once_flag installed;
    std::call_once(installed, [] { crypt_set_log_callback(nullptr, KeepErrors, nullptr); });
    CryptReason().clear();
  }

 private:
  std::lock_guard<std::mutex> lock_;
};

// "<what>: <strerror> (<libcryptsetup's reason>)", its code from the errno;
// the reason is library text about devices, quoted like outside input.
Status Failure(int negative_errno, const std::string& what) {
  Status status = Status::FromErrno(-negative_errno, what);
  if (CryptReason().empty()) return status;
  return Status(status.code(), status.message() + " (" + QuoteField(CryptReason()) + ")");
}

using CryptDevicePtr = std::unique_ptr<crypt_device, decltype(&crypt_free)>;

Result<CryptDevicePtr> InitByPath(const std::string& device) {
  crypt_device* cd = nullptr;
  int r = crypt_init(&cd, device.c_str());
  if (r < 0) return Failure(r, "open " + device);
  return CryptDevicePtr(cd, crypt_free);
}

// The context of the active mapping, after telling "not active" and "no
// device-mapper" apart (crypt_init_by_name says ENODEV for both).
Result<CryptDevicePtr> InitByName(const std::string& mapper_name) {
  switch (crypt_status(nullptr, mapper_name.c_str())) {
    case CRYPT_INVALID:
      return Status::Unavailable("mapper " + QuoteField(mapper_name) + ": device-mapper is not available");
    case CRYPT_INACTIVE:
      return Status::NotFound("mapper " + QuoteField(mapper_name) + " is not active");
    default:
      break;
  }
  crypt_device* cd = nullptr;
  int r = crypt_init_by_name(&cd, mapper_name.c_str());
  if (r < 0) return Failure(r, "mapper " + QuoteField(mapper_name));
  return CryptDevicePtr(cd, crypt_free);
}

}  // namespace

Result<std::string> LuksMapperName(std::string_view volume_id) {
  if (volume_id.empty()) return Status::InvalidArgument("LUKS mapper name: the volume ID is empty");
  if (volume_id.find('/') != std::string_view::npos) {
    return Status::InvalidArgument("LUKS mapper name: volume ID " + QuoteField(volume_id) + " holds '/'");
  }
  std::string name = std::string(kMapperPrefix) + std::string(volume_id);
  if (name.size() > kMaxMapperNameBytes) {
    return Status::InvalidArgument("LUKS mapper name for volume ID " + QuoteField(volume_id) + ": " +
                                   std::to_string(name.size()) + " bytes, device-mapper allows " +
                                   std::to_string(kMaxMapperNameBytes));
  }
  return name;
}

std::string LuksMapperPath(std::string_view mapper_name) { return "/dev/mapper/" + std::string(mapper_name); }

Status FormatLuks(const std::string& device, const SecretBytes& passphrase) {
  if (passphrase.empty()) return Status::InvalidArgument("luksFormat " + device + ": the passphrase is empty");
  CryptCall call;
  auto cd = InitByPath(device);
  if (!cd.ok()) return cd.status();
  const crypt_pbkdf_type* defaults = crypt_get_pbkdf_default(CRYPT_LUKS2);
  if (defaults == nullptr) return Status::Internal("luksFormat " + device + ": libcryptsetup has no LUKS2 PBKDF");
  crypt_pbkdf_type pbkdf = *defaults;
  pbkdf.hash = kPbkdfHash;
  pbkdf.max_memory_kb = kPbkdfMemoryKib;
  int r = crypt_set_pbkdf_type(cd->get(), &pbkdf);
  if (r < 0) return Failure(r, "luksFormat " + device + ": set the PBKDF");
  crypt_params_luks2 params = {};  // sector_size 0: the library picks, as the CLI has it
  r = crypt_format(cd->get(), CRYPT_LUKS2, kCipher, kCipherMode, nullptr, nullptr, kVolumeKeyBytes, &params);
  if (r < 0) return Failure(r, "luksFormat " + device);
  r = crypt_keyslot_add_by_volume_key(cd->get(), CRYPT_ANY_SLOT, nullptr, 0, passphrase.data(), passphrase.size());
  if (r < 0) return Failure(r, "luksFormat " + device + ": add the key slot");
  return Status::Ok();
}

Result<bool> IsLuks(const std::string& device) {
  CryptCall call;
  auto cd = InitByPath(device);
  if (!cd.ok()) return cd.status();
  int r = crypt_load(cd->get(), CRYPT_LUKS, nullptr);
  if (r == 0) return true;
  if (r == -EINVAL) return false;  // no LUKS header
  return Failure(r, "read the LUKS header of " + device);
}

Status OpenLuks(const std::string& device, const std::string& mapper_name, const SecretBytes& passphrase) {
  std::string what = "luksOpen " + device + " as " + QuoteField(mapper_name);
  CryptCall call;
  switch (crypt_status(nullptr, mapper_name.c_str())) {
    case CRYPT_INVALID:
      return Status::Unavailable(what + ": device-mapper is not available");
    case CRYPT_INACTIVE:
      break;
    default:
      return Status::AlreadyExists(what + ": a mapping of that name is active");
  }
  auto cd = InitByPath(device);
  if (!cd.ok()) return cd.status();
  int r = crypt_load(cd->get(), CRYPT_LUKS, nullptr);
  if (r == -EINVAL) return Status::FailedPrecondition(what + ": no LUKS header on the device");
  if (r < 0) return Failure(r, what);
  r = crypt_volume_key_keyring(cd->get(), 0);  // ceph-csi's --disable-keyring
  if (r < 0) return Failure(r, what + ": disable the keyring");
  r = crypt_activate_by_passphrase(cd->get(), mapper_name.c_str(), CRYPT_ANY_SLOT, passphrase.data(), passphrase.size(),
                                   0);
  if (r == -EPERM) return Status::InvalidArgument(what + ": no key slot opens with this passphrase");
  if (r == -EEXIST) return Status::AlreadyExists(what + ": a mapping of that name is active");
  if (r < 0) return Failure(r, what);
  return Status::Ok();
}

Status CloseLuks(const std::string& mapper_name) {
  std::string what = "luksClose " + QuoteField(mapper_name);
  CryptCall call;
  auto cd = InitByName(mapper_name);
  if (!cd.ok()) return cd.status();
  int r = crypt_deactivate_by_name(cd->get(), mapper_name.c_str(), 0);
  if (r == -EBUSY) return Status::FailedPrecondition(what + ": in use (mounted or held open)");
  if (r < 0) return Failure(r, what);
  return Status::Ok();
}

Status ResizeLuks(const std::string& mapper_name) {
  std::string what = "resize " + QuoteField(mapper_name);
  CryptCall call;
  auto cd = InitByName(mapper_name);
  if (!cd.ok()) return cd.status();
  crypt_active_device active = {};
  int r = crypt_get_active_device(cd->get(), mapper_name.c_str(), &active);
  if (r < 0) return Failure(r, what);
  if (active.flags & CRYPT_ACTIVATE_KEYRING_KEY) {
    return Status::FailedPrecondition(what +
                                      ": its volume key is in the kernel keyring, so resizing needs the "
                                      "passphrase (it was opened without --disable-keyring)");
  }
  r = crypt_resize(cd->get(), mapper_name.c_str(), 0);  // 0: the whole backing device
  if (r < 0) return Failure(r, what);
  return Status::Ok();
}

Result<std::string> ActiveLuksBacking(const std::string& mapper_name) {
  CryptCall call;
  auto cd = InitByName(mapper_name);
  if (!cd.ok()) return cd.status();
  const char* type = crypt_get_type(cd->get());
  if (type == nullptr || std::string_view(type).substr(0, 4) != "LUKS") {
    return Status::FailedPrecondition("mapper " + QuoteField(mapper_name) + " is not a LUKS mapping");
  }
  const char* backing = crypt_get_device_name(cd->get());
  if (backing == nullptr) {
    return Status::FailedPrecondition("mapper " + QuoteField(mapper_name) + ": its backing device is unknown");
  }
  return std::string(backing);
}

}  // namespace nbdk
