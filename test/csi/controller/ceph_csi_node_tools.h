// Test-only, in the VM: what ceph-csi's node plugin does to an encrypted
// volume, done with the programs it runs - `rbd device map -t nbd`,
// `rbd image-meta`, `cryptsetup` with its arguments
// (internal/util/cryptsetup.go), `mkfs.ext4` with its options - and the
// metadata KMS's wrap by an independent tool
// (test/encryption/ceph_csi_dek.py, Python's hashlib.scrypt and
// python3-cryptography's AESGCM), none of nbdkeeper's code. Each RAII
// class undoes its step (the VM tests share one VM); a failed step is its
// status(), never an exit. Secrets travel in 0600 files only.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace nbdk::vmtest {

// A 0700 directory under /run for one test's secret files and mount point,
// removed with everything in it.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  // Writes `data` byte for byte (no newline) to a new 0600 file; its path.
  std::string WriteSecret(const std::string& name, const std::string& data) const;

 private:
  std::string path_;
};

// ceph_csi_dek.py: a new ceph-csi volume passphrase in `out` (0600); the
// passphrase in `passphrase_file` wrapped under `volume_id` with the
// encryptionPassphrase in `secret_file` (the JSON text ceph-csi stores);
// that JSON unwrapped into `out`.
Status NewCephCsiPassphrase(const std::string& out);
Result<std::string> WrapWithPython(const std::string& secret_file, const std::string& volume_id,
                                   const std::string& passphrase_file);
Status UnwrapWithPython(const std::string& secret_file, const std::string& volume_id, const std::string& json,
                        const std::string& out);

// `rbd image-meta set|get` of the test pool's `image`.
Status SetImageMetaCli(const std::string& image, const std::string& key, const std::string& value);
Result<std::string> GetImageMetaCli(const std::string& image, const std::string& key);

// `cryptsetup -q luksFormat --type luks2 --hash sha256 --pbkdf-memory 32768
// DEVICE -d /dev/stdin`, stdin from `passphrase_file`.
Status CephCsiLuksFormat(const std::string& device, const std::string& passphrase_file);
// `cryptsetup luksDump DEVICE`.
Result<std::string> LuksDumpCli(const std::string& device);
// `mkfs.ext4 -m0 -Enodiscard,lazy_itable_init=1,lazy_journal_init=1 DEVICE`.
Status CephCsiMkfsExt4(const std::string& device);

// `rbd device map -t nbd pool/image` for this object's life.
class CliNbdMap {
 public:
  explicit CliNbdMap(const std::string& image);
  ~CliNbdMap();
  CliNbdMap(const CliNbdMap&) = delete;
  CliNbdMap& operator=(const CliNbdMap&) = delete;
  const Status& status() const { return status_; }
  const std::string& device() const { return device_; }  // "/dev/nbdN"

 private:
  Status status_;
  std::string device_;
};

// `cryptsetup luksOpen DEVICE NAME --disable-keyring -d /dev/stdin` for
// this object's life (luksClose after).
class CliLuksMapper {
 public:
  CliLuksMapper(const std::string& device, const std::string& name, const std::string& passphrase_file);
  ~CliLuksMapper();
  CliLuksMapper(const CliLuksMapper&) = delete;
  CliLuksMapper& operator=(const CliLuksMapper&) = delete;
  const Status& status() const { return status_; }

 private:
  Status status_;
  std::string name_;
};

// mount(2) of an ext4 `device` at `dir` (created) for this object's life.
class Ext4Mount {
 public:
  Ext4Mount(const std::string& device, const std::string& dir, bool read_only);
  ~Ext4Mount();
  Ext4Mount(const Ext4Mount&) = delete;
  Ext4Mount& operator=(const Ext4Mount&) = delete;
  const Status& status() const { return status_; }

 private:
  Status status_;
  std::string dir_;
};

}  // namespace nbdk::vmtest
