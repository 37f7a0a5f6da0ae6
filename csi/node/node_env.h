// NodeEnv: the host's side of the CSI Node operations - key files, the
// image-meta stash, mount points, the device probe, mkfs, mounts and LUKS - behind
// one interface, so that a test can make any of those steps fail (LevelDB's
// Env, kept to what the Node operations do). Mapping has its own seam (the
// Supervisor runs the rbd-nbd its config names) and so has the node journal
// (JournalFs).
//
// Each call does what the function of the same name does (csi/key_file.h,
// csi/node/stash.h, csi/node/confined_path.h, csi/node/filesystem.h,
// host/device_users.h, encryption/luks_volume.h; LuksBacking is
// ActiveLuksBacking), never on the loop: blocking work runs through
// RunBlocking, commands through RunCommand. Loop thread only; `done` runs
// once, later, on the loop thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/command.h"
#include "base/event_loop.h"
#include "base/status.h"
#include "csi/node/confined_path.h"
#include "csi/node/filesystem.h"
#include "csi/node/stash.h"
#include "encryption/volume_passphrase.h"

namespace nbdk {

class NodeEnv {
 public:
  template <typename T>
  using ResultCallback = std::function<void(Result<T>)>;

  virtual ~NodeEnv() = default;

  // Returns the key file's path.
  virtual void WriteKeyFile(const std::string& dir, const std::string& volume_id, const std::string& key,
                            ResultCallback<std::string> done) = 0;
  virtual void RemoveKeyFile(const std::string& path, StatusCallback done) = 0;

  virtual void WriteStash(const std::string& staging_path, const ImageMetaStash& stash, StatusCallback done) = 0;
  virtual void RemoveStash(const std::string& staging_path, StatusCallback done) = 0;

  // Confined beneath `roots`; `field` names the request field in errors.
  // Returns whether this call created the mount point.
  virtual void CreateMountPoint(const PathRoots& roots, const std::string& path, bool block, const std::string& field,
                                ResultCallback<bool> done) = 0;
  virtual void RemoveMountPoint(const PathRoots& roots, const std::string& path, const std::string& field,
                                StatusCallback done) = 0;

  virtual void ProbeDevice(const std::string& device, ResultCallback<DeviceSignature> done) = 0;
  virtual void MakeFilesystem(const std::string& fs_type, const std::vector<std::string>& options,
                              const std::string& device, StatusCallback done) = 0;
  virtual void Mount(const std::string& fs_type, const std::string& device, const std::string& target,
                     std::vector<std::string> options, StatusCallback done) = 0;
  virtual void BindMount(const std::string& source, const std::string& target, bool read_only,
                         std::vector<std::string> options, StatusCallback done) = 0;
  virtual void Unmount(const std::string& target, StatusCallback done) = 0;

  // FailedPrecondition naming the mounts, holders or openers of `device`
  // (host/device_users.h).
  virtual void CheckDeviceUnused(const std::string& device, const std::string& mountinfo_path,
                                 const std::string& sysfs_root, const std::string& proc_root, StatusCallback done) = 0;
  // A volume's LUKS container (encryption/luks_volume.h). The passphrase
  // is shared, not copied, and outlives the call.
  virtual void FormatLuks(const std::string& device, std::shared_ptr<const SecretBytes> passphrase,
                          StatusCallback done) = 0;
  virtual void OpenLuks(const std::string& device, const std::string& mapper,
                        std::shared_ptr<const SecretBytes> passphrase, StatusCallback done) = 0;
  virtual void CloseLuks(const std::string& mapper, StatusCallback done) = 0;
  virtual void ResizeLuks(const std::string& mapper, StatusCallback done) = 0;
  virtual void LuksBacking(const std::string& mapper, ResultCallback<std::string> done) = 0;
};

// The real host. `loop` must outlive it.
class SystemNodeEnv : public NodeEnv {
 public:
  explicit SystemNodeEnv(EventLoop& loop) : loop_(loop) {}

  void WriteKeyFile(const std::string& dir, const std::string& volume_id, const std::string& key,
                    ResultCallback<std::string> done) override;
  void RemoveKeyFile(const std::string& path, StatusCallback done) override;
  void WriteStash(const std::string& staging_path, const ImageMetaStash& stash, StatusCallback done) override;
  void RemoveStash(const std::string& staging_path, StatusCallback done) override;
  void CreateMountPoint(const PathRoots& roots, const std::string& path, bool block, const std::string& field,
                        ResultCallback<bool> done) override;
  void RemoveMountPoint(const PathRoots& roots, const std::string& path, const std::string& field,
                        StatusCallback done) override;
  void ProbeDevice(const std::string& device, ResultCallback<DeviceSignature> done) override;
  void MakeFilesystem(const std::string& fs_type, const std::vector<std::string>& options, const std::string& device,
                      StatusCallback done) override;
  void Mount(const std::string& fs_type, const std::string& device, const std::string& target,
             std::vector<std::string> options, StatusCallback done) override;
  void BindMount(const std::string& source, const std::string& target, bool read_only, std::vector<std::string> options,
                 StatusCallback done) override;
  void Unmount(const std::string& target, StatusCallback done) override;
  void CheckDeviceUnused(const std::string& device, const std::string& mountinfo_path, const std::string& sysfs_root,
                         const std::string& proc_root, StatusCallback done) override;
  void FormatLuks(const std::string& device, std::shared_ptr<const SecretBytes> passphrase,
                  StatusCallback done) override;
  void OpenLuks(const std::string& device, const std::string& mapper, std::shared_ptr<const SecretBytes> passphrase,
                StatusCallback done) override;
  void CloseLuks(const std::string& mapper, StatusCallback done) override;
  void ResizeLuks(const std::string& mapper, StatusCallback done) override;
  void LuksBacking(const std::string& mapper, ResultCallback<std::string> done) override;

 private:
  EventLoop& loop_;
};

}  // namespace nbdk
