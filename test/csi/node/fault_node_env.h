// FaultNodeEnv: a NodeEnv for host tests of the Node operations, in the
// style of LevelDB's fault-injection Env. Key files, the stash and mount
// points are real files under the test's directory (SystemNodeEnv); the
// device side - probe, mkfs, mounts, LUKS - is simulated: `mounted` holds
// the paths mounted now, `open_mappers` the LUKS mappers open now.
// Fail(step) makes the next call of a step fail with IoError
// "injected: <step>". Every call is recorded in `calls`, in order.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "csi/node/node_env.h"

namespace nbdk::testing {

class FaultNodeEnv : public NodeEnv {
 public:
  explicit FaultNodeEnv(EventLoop& loop) : loop_(loop), real_(loop) {}

  // The next `times` calls of `step` (a method name below, e.g. "Mount")
  // fail.
  void Fail(const std::string& step, int times = 1) { failures_[step] = times; }
  static Status Injected(const std::string& step) { return Status::IoError("injected: " + step); }

  std::set<std::string> mounted;
  bool blank = true;  // what ProbeDevice finds: nothing, or an ext4 filesystem
  std::vector<std::string> calls;
  std::map<std::string, std::string> open_mappers;  // LUKS mapper -> its device

  void WriteKeyFile(const std::string& dir, const std::string& volume_id, const std::string& key,
                    ResultCallback<std::string> done) override {
    if (Failed("WriteKeyFile", done)) return;
    real_.WriteKeyFile(dir, volume_id, key, std::move(done));
  }
  void RemoveKeyFile(const std::string& path, StatusCallback done) override {
    if (Failed("RemoveKeyFile", done)) return;
    real_.RemoveKeyFile(path, std::move(done));
  }
  void WriteStash(const std::string& staging_path, const ImageMetaStash& stash, StatusCallback done) override {
    if (Failed("WriteStash", done)) return;
    real_.WriteStash(staging_path, stash, std::move(done));
  }
  void RemoveStash(const std::string& staging_path, StatusCallback done) override {
    if (Failed("RemoveStash", done)) return;
    real_.RemoveStash(staging_path, std::move(done));
  }
  void CreateMountPoint(const PathRoots& roots, const std::string& path, bool block, const std::string& field,
                        ResultCallback<bool> done) override {
    if (Failed("CreateMountPoint", done)) return;
    real_.CreateMountPoint(roots, path, block, field, std::move(done));
  }
  void RemoveMountPoint(const PathRoots& roots, const std::string& path, const std::string& field,
                        StatusCallback done) override {
    if (Failed("RemoveMountPoint", done)) return;
    real_.RemoveMountPoint(roots, path, field, std::move(done));
  }
  void ProbeDevice(const std::string& device, ResultCallback<DeviceSignature> done) override {
    if (Failed("ProbeDevice", done)) return;
    Later(done, blank ? DeviceSignature{} : DeviceSignature{"ext4", ""});
  }
  void MakeFilesystem(const std::string& fs_type, const std::vector<std::string>& options, const std::string& device,
                      StatusCallback done) override {
    if (Failed("MakeFilesystem", done)) return;
    blank = false;
    Later(done, Status::Ok());
  }
  void Mount(const std::string& fs_type, const std::string& device, const std::string& target,
             std::vector<std::string> options, StatusCallback done) override {
    if (Failed("Mount", done)) return;
    mounted.insert(target);
    Later(done, Status::Ok());
  }
  void BindMount(const std::string& source, const std::string& target, bool read_only, std::vector<std::string> options,
                 StatusCallback done) override {
    if (Failed("BindMount", done)) return;
    mounted.insert(target);
    Later(done, Status::Ok());
  }
  void Unmount(const std::string& target, StatusCallback done) override {
    if (Failed("Unmount", done)) return;
    mounted.erase(target);
    Later(done, Status::Ok());
  }
  void CheckDeviceUnused(const std::string& device, const std::string& mountinfo_path, const std::string& sysfs_root,
                         const std::string& proc_root, StatusCallback done) override {
    if (Failed("CheckDeviceUnused", done)) return;
    Later(done, Status::Ok());
  }
  void FormatLuks(const std::string& device, std::shared_ptr<const SecretBytes>, StatusCallback done) override {
    if (Failed("FormatLuks", done)) return;
    Later(done, Status::Ok());
  }
  void OpenLuks(const std::string& device, const std::string& mapper, std::shared_ptr<const SecretBytes>,
                StatusCallback done) override {
    if (Failed("OpenLuks", done)) return;
    open_mappers[mapper] = device;
    Later(done, Status::Ok());
  }
  void CloseLuks(const std::string& mapper, StatusCallback done) override {
    if (Failed("CloseLuks", done)) return;
    Later(done, open_mappers.erase(mapper) == 1 ? Status::Ok() : Status::NotFound("no mapper " + mapper));
  }
  void ResizeLuks(const std::string& mapper, StatusCallback done) override {
    if (Failed("ResizeLuks", done)) return;
    Later(done, open_mappers.count(mapper) == 1 ? Status::Ok() : Status::NotFound("no mapper " + mapper));
  }
  void LuksBacking(const std::string& mapper, ResultCallback<std::string> done) override {
    if (Failed("LuksBacking", done)) return;
    auto it = open_mappers.find(mapper);
    if (it == open_mappers.end()) return Later(done, Result<std::string>(Status::NotFound("no mapper " + mapper)));
    Later(done, Result<std::string>(it->second));
  }

 private:
  // Records the call; true (and `done` gets the injected error, later) when
  // the step is to fail now.
  template <typename Callback>
  bool Failed(const std::string& step, Callback& done) {
    calls.push_back(step);
    auto it = failures_.find(step);
    if (it == failures_.end() || it->second == 0) return false;
    --it->second;
    Later(done, Injected(step));
    return true;
  }
  template <typename Callback, typename Value>
  void Later(Callback& done, Value value) {
    loop_.Post([done = std::move(done), value = std::move(value)]() mutable { done(std::move(value)); });
  }

  EventLoop& loop_;
  SystemNodeEnv real_;
  std::map<std::string, int> failures_;
};

}  // namespace nbdk::testing
