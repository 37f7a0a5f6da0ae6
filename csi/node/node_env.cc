#include "csi/node/node_env.h"

#include "csi/key_file.h"
#include "encryption/luks_volume.h"
#include "host/device_users.h"

namespace nbdk {

void SystemNodeEnv::WriteKeyFile(const std::string& dir, const std::string& volume_id, const std::string& key,
                                 ResultCallback<std::string> done) {
  RunBlockingResult<std::string>(
      loop_, [dir, volume_id, key] { return nbdk::WriteKeyFile(dir, volume_id, key); }, std::move(done));
}

void SystemNodeEnv::RemoveKeyFile(const std::string& path, StatusCallback done) {
  RunBlockingStatus(
      loop_, [path] { return nbdk::RemoveKeyFile(path); }, std::move(done));
}

void SystemNodeEnv::WriteStash(const std::string& staging_path, const ImageMetaStash& stash, StatusCallback done) {
  RunBlockingStatus(
      loop_, [staging_path, stash] { return nbdk::WriteStash(staging_path, stash); }, std::move(done));
}

void SystemNodeEnv::RemoveStash(const std::string& staging_path, StatusCallback done) {
  RunBlockingStatus(
      loop_, [staging_path] { return nbdk::RemoveStash(staging_path); }, std::move(done));
}

void SystemNodeEnv::CreateMountPoint(const PathRoots& roots, const std::string& path, bool block,
                                     const std::string& field, ResultCallback<bool> done) {
  RunBlockingResult<bool>(
      loop_, [roots, path, block, field] { return CreateMountPointBeneath(roots, path, block, field); },
      std::move(done));
}

void SystemNodeEnv::RemoveMountPoint(const PathRoots& roots, const std::string& path, const std::string& field,
                                     StatusCallback done) {
  RunBlockingStatus(
      loop_, [roots, path, field] { return RemoveCreatedMountPoint(roots, path, field); }, std::move(done));
}

void SystemNodeEnv::ProbeDevice(const std::string& device, ResultCallback<DeviceSignature> done) {
  nbdk::ProbeDevice(loop_, device, std::move(done));
}

void SystemNodeEnv::MakeFilesystem(const std::string& fs_type, const std::vector<std::string>& options,
                                   const std::string& device, StatusCallback done) {
  nbdk::MakeFilesystem(loop_, fs_type, options, device, std::move(done));
}

void SystemNodeEnv::Mount(const std::string& fs_type, const std::string& device, const std::string& target,
                          std::vector<std::string> options, StatusCallback done) {
  nbdk::Mount(loop_, fs_type, device, target, std::move(options), std::move(done));
}

void SystemNodeEnv::BindMount(const std::string& source, const std::string& target, bool read_only,
                              std::vector<std::string> options, StatusCallback done) {
  nbdk::BindMount(loop_, source, target, read_only, std::move(options), std::move(done));
}

void SystemNodeEnv::Unmount(const std::string& target, StatusCallback done) {
  nbdk::Unmount(loop_, target, std::move(done));
}

void SystemNodeEnv::CheckDeviceUnused(const std::string& device, const std::string& mountinfo_path,
                                      const std::string& sysfs_root, const std::string& proc_root,
                                      StatusCallback done) {
  RunBlockingStatus(
      loop_,
      [device, mountinfo_path, sysfs_root, proc_root] {
        return nbdk::CheckDeviceUnused(device, mountinfo_path, sysfs_root, proc_root);
      },
      std::move(done));
}

// LUKS calls hold a pool thread each, and libcryptsetup's lock makes them
// wait for one another (encryption/luks_volume.h): a few encrypted stages
// at once delay other blocking work by seconds, never by a PBKDF each.
void SystemNodeEnv::FormatLuks(const std::string& device, std::shared_ptr<const SecretBytes> passphrase,
                               StatusCallback done) {
  RunBlockingStatus(
      loop_, [device, passphrase] { return nbdk::FormatLuks(device, *passphrase); }, std::move(done));
}

void SystemNodeEnv::OpenLuks(const std::string& device, const std::string& mapper,
                             std::shared_ptr<const SecretBytes> passphrase, StatusCallback done) {
  RunBlockingStatus(
      loop_, [device, mapper, passphrase] { return nbdk::OpenLuks(device, mapper, *passphrase); }, std::move(done));
}

void SystemNodeEnv::CloseLuks(const std::string& mapper, StatusCallback done) {
  RunBlockingStatus(
      loop_, [mapper] { return nbdk::CloseLuks(mapper); }, std::move(done));
}

void SystemNodeEnv::ResizeLuks(const std::string& mapper, StatusCallback done) {
  RunBlockingStatus(
      loop_, [mapper] { return nbdk::ResizeLuks(mapper); }, std::move(done));
}

void SystemNodeEnv::LuksBacking(const std::string& mapper, ResultCallback<std::string> done) {
  RunBlockingResult<std::string>(
      loop_, [mapper] { return ActiveLuksBacking(mapper); }, std::move(done));
}

}  // namespace nbdk
