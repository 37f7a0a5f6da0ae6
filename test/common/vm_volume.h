// Test-only: a volume served by a real nbdkeeperd inside the test VM, as the
// programs that run there (reattach_bench, keeper_demo) drive it: the
// harness's Ceph environment, RBD images, the CSI stage request, an
// O_DIRECT writer on the volume, and the daemon's /status entry.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "csi/proto/csi.pb.h"

namespace nbdk::vmtest {

// The VM harness's Ceph environment (test/vm/README.md).
struct VmCeph {
  std::string conf, pool, user, keyfile, key, monitors;

  // From CEPH_CONF and NBDK_CEPH_*; the key is read from the key file.
  static VmCeph FromEnv();
  // False outside the test VM.
  bool complete() const;
  // `rbd` as client.nbdk: {"rbd", "-c", conf, "--id", user, "--keyfile", ...} + args.
  std::vector<std::string> Rbd(const std::vector<std::string>& args) const;
};

Status CreateImage(const VmCeph& ceph, const std::string& image, int mib);
Status RemoveImage(const VmCeph& ceph, const std::string& image);

// ceph-csi's config.json with one cluster, as the daemon's
// --ceph-csi-config reads it.
Status WriteCephCsiConfig(const std::string& path, const std::string& cluster_id, const VmCeph& ceph);

// A static-volume NodeStage request for an ext4 mount: the volume id is the
// image name; the cephx key travels in the CSI secret, never in an argv.
csi::v1::NodeStageVolumeRequest StageRequest(const VmCeph& ceph, const std::string& cluster_id,
                                             const std::string& image, const std::string& staging_path);

// O_DIRECT|O_DSYNC 4 KiB writes in a loop on its own thread, so every write
// reaches the device: a dead rbd-nbd shows as a write that does not return.
class Writer {
 public:
  // Writes 4 KiB blocks to `path` (O_DIRECT|O_DSYNC), one after another,
  // or with a pause of `interval_ms` after each (a paced writer).
  static Result<std::unique_ptr<Writer>> Start(const std::string& path, int interval_ms = 0);
  ~Writer();
  void Stop();
  // Forgets the longest write so far (to measure one event's pause).
  void ResetLongest() { longest_us_ = 0; }
  double longest_s() const { return static_cast<double>(longest_us_) / 1e6; }
  uint64_t errors() const { return errors_; }
  uint64_t writes() const { return writes_; }
  // How long the writer has been without a completed write (0 right after one).
  double blocked_s() const;

 private:
  Writer(int fd, void* buf, int interval_ms) : fd_(fd), buf_(buf), interval_ms_(interval_ms) {}
  void Loop();

  int fd_;
  void* buf_;
  int interval_ms_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> longest_us_{0}, errors_{0}, writes_{0};
  std::atomic<int64_t> last_done_ns_{0};  // steady_clock, at the last completed write
};

// Reads back what a stopped Writer that made `writes` writes (all of them
// successful) left at `path`: each of its 256 blocks holds the letter of
// the last write to it. DataLoss naming the first block that does not.
Status VerifyWriterData(const std::string& path, uint64_t writes);

// One volume's entry in the daemon's GET /status.
struct VolumeStatus {
  std::string state, device, journal_state;
  double seconds_in_state = 0;
  int pid = 0;
  uint64_t restarts = 0;
  bool adopted = false;
};
// nullopt when the daemon does not answer or does not list the volume.
std::optional<VolumeStatus> GetVolumeStatus(int health_port, const std::string& volume_id);
// Every volume's entry by volume ID, from one GET /status (a poll of many
// volumes asks once per round: each request costs the daemon's loop);
// nullopt when the daemon does not answer.
std::optional<std::map<std::string, VolumeStatus>> GetVolumeStatuses(int health_port);

// Processes (from /proc) whose argv[0] is `program` (any directory) and,
// unless `with_arg` is empty, that have `with_arg` among their arguments.
std::vector<pid_t> ProcessesOf(const std::string& program, const std::string& with_arg = "");
// rbd-nbd processes whose argv names pool/image.
std::vector<pid_t> RbdNbdProcessesFor(const VmCeph& ceph, const std::string& image);
// Whether `path` is a mount point (/proc/self/mountinfo).
bool IsMountPoint(const std::string& path);

}  // namespace nbdk::vmtest
