// keeper_demo: nbdkeeper doing its job on a real kernel, narrated. Runs in
// the test VM (real nbd driver, real rbd-nbd, one-node Ceph); scripts/demo.sh
// boots the VM and runs it.
//   keeper_demo [--quiet] [--logs DIR]
// --quiet prints only the summary line; --logs is where the daemon's log is
// copied at the end (default: the VM harness's writable share, so the log
// outlives the VM). Exits 0 only if every check passed.
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "csi/proto/csi.grpc.pb.h"
#include "test/common/daemon_process.h"
#include "test/common/http_client.h"
#include "test/common/vm_volume.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using nbdk::vmtest::VmCeph;
using nbdk::vmtest::VolumeStatus;
using nbdk::vmtest::Writer;

constexpr char kRoot[] = "/run/nbdk-demo";
constexpr char kImage[] = "demo-vol";
constexpr char kCluster[] = "demo";
// The harness mounts its writable 9p share here (test/vm/guest-init.sh).
constexpr char kVmShare[] = "/run/nbdk-vm/share";

double Secs(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

class Demo {
 public:
  Demo(bool quiet, std::string logs_dir) : quiet_(quiet), logs_dir_(std::move(logs_dir)) {}

  int Run() {
    if (!ceph_.complete()) {
      Fail("not inside the test VM (CEPH_CONF, NBDK_CEPH_* unset): run it through scripts/demo.sh");
      return Summary();
    }
    Say("nbdkeeper demo: a Ceph RBD volume served through rbd-nbd on a real kernel, kept alive by nbdkeeperd.\n");
    // Each step needs the one before; a failed step skips to the cleanup.
    (void)(StartDaemon() && StageAndPublish() && StartWriter() && KillRbdNbd() && RestartDaemon());
    CleanUp();
    CopyLogs();
    return Summary();
  }

 private:
  // Narration: printed unless --quiet.
  void Say(const char* fmt, ...) __attribute__((format(printf, 2, 3))) {
    if (quiet_) return;
    va_list ap;
    va_start(ap, fmt);
    std::vprintf(fmt, ap);
    va_end(ap);
    std::fflush(stdout);
  }
  void Step(int n, const std::string& what) {
    Say("\n[%d/7 at %4.1f s] %s\n", n, Secs(Clock::now() - start_), what.c_str());
  }
  bool Fail(const std::string& what) {
    failures_.push_back(what);
    Say("      FAILED: %s\n", what.c_str());
    return false;
  }
  std::string Path(const std::string& rel) const { return std::string(kRoot) + "/" + rel; }
  std::string MountPath() const { return Path("staging/") + kImage; }
  std::string TargetPath() const { return Path("pods/") + kImage; }
  std::optional<VolumeStatus> VolStatus() const { return nbdk::vmtest::GetVolumeStatus(port_, kImage); }

  bool StartDaemon() {
    Step(1, "Start nbdkeeperd as its systemd unit does: nbdkeeperd --config FILE");
    fs::remove_all(kRoot);
    fs::create_directories(Path("staging"));
    fs::create_directories(Path("pods"));  // kubelet makes a pod's volume dir's parent
    port_ = nbdk::test::FreePort();
    if (auto st = nbdk::vmtest::WriteCephCsiConfig(Path("ceph-csi-config.json"), kCluster, ceph_); !st.ok()) {
      return Fail(st.ToString());
    }
    // The config names paths only: the cephx key reaches the daemon in the
    // CSI secret, and the daemon keeps it in a 0600 file under key_dir.
    std::string config = "{\n  \"csi_endpoint\": \"unix://" + daemon_.socket_path() + "\",\n  \"state_dir\": \"" +
                         Path("state") + "\",\n  \"key_dir\": \"" + Path("keys") + "\",\n  \"csi_root\": \"" +
                         std::string(kRoot) + "\",\n  \"health_listen\": \"127.0.0.1:" + std::to_string(port_) +
                         "\",\n  \"node_id\": \"demo-node\",\n  \"ceph_csi_config\": \"" +
                         Path("ceph-csi-config.json") + "\",\n  \"ceph_conf\": \"" + ceph_.conf + "\"\n}\n";
    std::ofstream(Path("nbdkeeper.json")) << config;
    Say("      %s:\n", Path("nbdkeeper.json").c_str());
    for (size_t at = 0, nl; (nl = config.find('\n', at)) != std::string::npos; at = nl + 1) {
      Say("        %s\n", config.substr(at, nl - at).c_str());
    }
    auto t0 = Clock::now();
    if (!daemon_.StartWithConfig(Path("nbdkeeper.json"), port_)) return Fail("nbdkeeperd did not start");
    if (!WaitReady()) return Fail("nbdkeeperd never became ready (/readyz)");
    Say("      nbdkeeperd (pid %d) ready in %.1f s: CSI on %s, status on http://127.0.0.1:%d/status\n", daemon_.pid(),
        Secs(Clock::now() - t0), daemon_.endpoint().c_str(), port_);
    return true;
  }

  bool WaitReady() {
    auto deadline = Clock::now() + std::chrono::seconds(30);
    while (nbdk::test::HttpGet(port_, "/readyz").status != 200) {
      if (Clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
  }

  bool StageAndPublish() {
    Step(2, std::string("Create RBD image ") + ceph_.pool + "/" + kImage +
                ", then stage and publish it through CSI (gRPC, ext4)");
    auto t0 = Clock::now();
    if (auto st = nbdk::vmtest::CreateImage(ceph_, kImage, 256); !st.ok()) return Fail(st.ToString());
    image_created_ = true;
    Say("      rbd create: 256 MiB in %.1f s\n", Secs(Clock::now() - t0));
    node_ = csi::v1::Node::NewStub(grpc::CreateChannel(daemon_.endpoint(), grpc::InsecureChannelCredentials()));
    t0 = Clock::now();
    {
      grpc::ClientContext ctx;
      csi::v1::NodeStageVolumeResponse resp;
      auto st =
          node_->NodeStageVolume(&ctx, nbdk::vmtest::StageRequest(ceph_, kCluster, kImage, Path("staging")), &resp);
      if (!st.ok()) return Fail("NodeStageVolume: " + st.error_message());
    }
    staged_ = true;
    auto s = VolStatus();
    if (!s || s->state != "Connected") return Fail("after NodeStageVolume /status does not show it Connected");
    device_ = s->device;
    Say("      NodeStageVolume: %.1f s - rbd-nbd (pid %d) serves it on %s, ext4 made and mounted at %s\n",
        Secs(Clock::now() - t0), s->pid, device_.c_str(), MountPath().c_str());
    t0 = Clock::now();
    {
      csi::v1::NodePublishVolumeRequest req;
      req.set_volume_id(kImage);
      req.set_staging_target_path(Path("staging"));
      req.set_target_path(TargetPath());
      req.mutable_volume_capability()->mutable_mount()->set_fs_type("ext4");
      req.mutable_volume_capability()->mutable_access_mode()->set_mode(
          csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
      grpc::ClientContext ctx;
      csi::v1::NodePublishVolumeResponse resp;
      auto st = node_->NodePublishVolume(&ctx, req, &resp);
      if (!st.ok()) return Fail("NodePublishVolume: " + st.error_message());
    }
    published_ = true;
    Say("      NodePublishVolume: %.1f s - bind-mounted at %s (where a pod would see it)\n", Secs(Clock::now() - t0),
        TargetPath().c_str());
    return true;
  }

  bool StartWriter() {
    Step(3, "Start a writer on the published path: 4 KiB O_DIRECT|O_DSYNC writes, each one reaching the device");
    auto w = Writer::Start(TargetPath() + "/data");
    if (!w.ok()) return Fail(w.status().ToString());
    writer_ = std::move(*w);
    std::this_thread::sleep_for(std::chrono::seconds(3));
    Say("      %llu writes in 3 s, longest %.2f s, IO errors %llu\n", Ull(writer_->writes()), writer_->longest_s(),
        Ull(writer_->errors()));
    return writer_->writes() > 0 || Fail("the writer made no progress");
  }

  static unsigned long long Ull(uint64_t v) { return static_cast<unsigned long long>(v); }

  // One line per /status poll: how the volume heals while the writer waits.
  void Row(Clock::time_point t0, const std::optional<VolumeStatus>& s) {
    if (!s) {
      Say("      %6.1f s  (no /status answer)  writes %6llu\n", Secs(Clock::now() - t0), Ull(writer_->writes()));
      return;
    }
    Say("      %6.1f s  %-12s %-10s %7d %8llu   %6llu %10.1f s\n", Secs(Clock::now() - t0), s->state.c_str(),
        s->device.c_str(), s->pid, Ull(s->restarts), Ull(writer_->writes()), writer_->blocked_s());
  }

  bool KillRbdNbd() {
    auto s = VolStatus();
    if (!s || s->pid <= 0) return Fail("/status shows no rbd-nbd pid");
    Step(4, "kill -9 the volume's rbd-nbd (pid " + std::to_string(s->pid) + "): the process behind " + device_);
    Say("      Without a keeper, writes on %s now hang, and fail with EIO once the kernel's reattach window\n"
        "      closes (ext4 then goes read-only).\n",
        device_.c_str());
    Say("      %8s  %-12s %-10s %7s %8s   %6s %12s\n", "time", "state", "device", "pid", "restarts", "writes",
        "writer idle");
    writer_->ResetLongest();
    uint64_t restarts = s->restarts;
    auto t0 = Clock::now();
    ::kill(s->pid, SIGKILL);
    // Healed: Connected again with one more restart. Then wait for the
    // writer to move again, so its longest pause is the whole pause.
    std::optional<double> healed;
    uint64_t writes_at_heal = 0;
    while (Clock::now() - t0 < std::chrono::seconds(120)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      auto now = VolStatus();
      Row(t0, now);
      if (!healed && now && now->state == "Connected" && now->restarts > restarts) {
        healed = Secs(Clock::now() - t0) - now->seconds_in_state;
        writes_at_heal = writer_->writes();
        if (now->device != device_) return Fail("re-attached on " + now->device + ", not " + device_);
      }
      if (healed && writer_->writes() >= writes_at_heal + 10) break;
    }
    if (!healed) return Fail("rbd-nbd was not re-attached within 120 s");
    heal_s_ = *healed;
    pause_s_ = writer_->longest_s();
    auto now = VolStatus();
    Say("      healed in %.1f s: a new rbd-nbd (pid %d) on the same %s; the writer paused %.1f s at most, "
        "IO errors %llu\n",
        heal_s_, now ? now->pid : 0, device_.c_str(), pause_s_, Ull(writer_->errors()));
    return true;
  }

  bool RestartDaemon() {
    auto before = VolStatus();
    if (!before) return Fail("no /status before the daemon restart");
    Step(5, "SIGKILL nbdkeeperd itself (pid " + std::to_string(daemon_.pid()) + "), then start it again");
    uint64_t writes0 = writer_->writes();
    daemon_.Stop(SIGKILL);
    std::this_thread::sleep_for(std::chrono::seconds(2));
    bool alive = ::kill(before->pid, 0) == 0;
    Say("      daemon gone for 2 s: rbd-nbd pid %d %s, the writer did %llu writes meanwhile\n", before->pid,
        alive ? "still runs" : "is GONE", Ull(writer_->writes() - writes0));
    if (!alive) return Fail("rbd-nbd died with the daemon");
    auto t0 = Clock::now();
    if (!daemon_.StartWithConfig(Path("nbdkeeper.json"), port_) || !WaitReady()) {
      return Fail("nbdkeeperd did not restart");
    }
    Say("      restarted (pid %d) and ready in %.1f s\n", daemon_.pid(), Secs(Clock::now() - t0));
    // Give the new daemon a few seconds to take the running rbd-nbd back.
    std::optional<VolumeStatus> after;
    for (int i = 0; i < 10; ++i) {
      after = VolStatus();
      if (after && after->state == "Connected") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    uint64_t writes1 = writer_->writes();
    std::this_thread::sleep_for(std::chrono::seconds(2));
    bool writing = writer_->writes() > writes1;
    if (after && after->state == "Connected" && after->pid == before->pid) {
      Say("      /status: %s on %s - the new daemon took the running rbd-nbd (pid %d) back%s\n", after->state.c_str(),
          after->device.c_str(), after->pid, after->adopted ? " (adopted)" : "");
      restart_ = "volume re-adopted";
    } else if (after && after->state == "Connected") {
      Say("      /status: %s on %s with a new rbd-nbd (pid %d, was %d)\n", after->state.c_str(), after->device.c_str(),
          after->pid, before->pid);
      restart_ = "volume re-attached";
    } else {
      // Re-adoption after a restart may be missing from this build: say
      // what is true instead of what a finished keeper would show.
      Say("      /status: %s - the new daemon does not supervise the running rbd-nbd\n",
          after ? (after->state + " on " + after->device).c_str() : "the volume is not listed");
      restart_ = "writer kept writing, rbd-nbd outlived it";
    }
    Say("      the writer kept writing through the daemon restart: rbd-nbd outlived it (%llu writes since the "
        "kill, %llu IO errors)\n",
        Ull(writer_->writes() - writes0), Ull(writer_->errors()));
    return writing || Fail("the writer stopped making progress after the daemon restart");
  }

  void CleanUp() {
    Step(6, "Stop the writer, unpublish and unstage through CSI, check that nothing is left");
    if (writer_) {
      writer_->Stop();
      errors_ = writer_->errors();
      writes_ = writer_->writes();
    }
    if (published_) {
      auto t0 = Clock::now();
      csi::v1::NodeUnpublishVolumeRequest req;
      req.set_volume_id(kImage);
      req.set_target_path(TargetPath());
      grpc::ClientContext ctx;
      csi::v1::NodeUnpublishVolumeResponse resp;
      auto st = node_->NodeUnpublishVolume(&ctx, req, &resp);
      if (st.ok()) {
        Say("      NodeUnpublishVolume: %.1f s\n", Secs(Clock::now() - t0));
      } else {
        Fail("NodeUnpublishVolume: " + st.error_message());
      }
    }
    if (staged_) {
      auto t0 = Clock::now();
      csi::v1::NodeUnstageVolumeRequest req;
      req.set_volume_id(kImage);
      req.set_staging_target_path(Path("staging"));
      grpc::ClientContext ctx;
      csi::v1::NodeUnstageVolumeResponse resp;
      auto st = node_->NodeUnstageVolume(&ctx, req, &resp);
      if (st.ok()) {
        Say("      NodeUnstageVolume: %.1f s\n", Secs(Clock::now() - t0));
      } else {
        Fail("NodeUnstageVolume: " + st.error_message());
      }
    }
    CheckNothingLeft();
    if (daemon_.pid() > 0) {
      int st = daemon_.Stop(SIGTERM);
      if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) Fail("nbdkeeperd did not exit 0 on SIGTERM");
    }
    if (image_created_) {
      if (auto st = nbdk::vmtest::RemoveImage(ceph_, kImage); st.ok()) {
        Say("      image %s/%s removed\n", ceph_.pool.c_str(), kImage);
      } else {
        Fail(st.ToString());
      }
    }
  }

  void CheckNothingLeft() {
    auto procs = nbdk::vmtest::RbdNbdProcessesFor(ceph_, kImage);
    bool mounted = nbdk::vmtest::IsMountPoint(MountPath()) || nbdk::vmtest::IsMountPoint(TargetPath());
    std::error_code ec;
    bool keys_left = fs::exists(Path("keys"), ec) && !fs::is_empty(Path("keys"), ec);
    bool device_busy = !device_.empty() && fs::exists("/sys/block/" + device_.substr(5) + "/pid", ec);
    Say("      rbd-nbd processes for %s/%s: %zu; mounted: %s; key files left: %s; %s configured: %s\n",
        ceph_.pool.c_str(), kImage, procs.size(), mounted ? "yes" : "no", keys_left ? "yes" : "no",
        device_.empty() ? "device" : device_.c_str(), device_busy ? "yes" : "no");
    if (!procs.empty()) {
      Fail("an rbd-nbd process for the image is left (pid " + std::to_string(procs[0]) + ")");
      // The VM is shared with other tests: do not leave it to them.
      for (pid_t p : procs) ::kill(p, SIGTERM);
    }
    if (mounted) Fail("a mount is left");
    if (keys_left) Fail("a key file is left in " + Path("keys"));
    if (device_busy) Fail(device_ + " is still configured");
  }

  void CopyLogs() {
    std::error_code ec;
    fs::create_directories(logs_dir_, ec);
    fs::copy_file(daemon_.log_path(), logs_dir_ + "/nbdkeeperd.log", fs::copy_options::overwrite_existing, ec);
    if (ec) {
      Fail("cannot copy the daemon log to " + logs_dir_ + ": " + ec.message());
      logs_dir_ = daemon_.log_path();
    }
  }

  int Summary() {
    Step(7, "Summary");
    char line[512];
    std::snprintf(line, sizeof(line),
                  "IO errors: %llu (%llu writes), longest pause: %.1f s, heal time: %.1f s, daemon restart: %s, "
                  "took %.0f s",
                  Ull(errors_), Ull(writes_), pause_s_, heal_s_, restart_.c_str(), Secs(Clock::now() - start_));
    if (errors_ > 0) failures_.push_back(std::to_string(errors_) + " IO errors");
    std::string verdict = failures_.empty() ? "PASS" : "FAIL (" + failures_.front() + ")";
    std::printf("keeper_demo: %s - %s; daemon log: %s/nbdkeeperd.log\n", verdict.c_str(), line, logs_dir_.c_str());
    std::fflush(stdout);
    return failures_.empty() ? 0 : 1;
  }

  const bool quiet_;
  std::string logs_dir_;
  const Clock::time_point start_ = Clock::now();
  const VmCeph ceph_ = VmCeph::FromEnv();
  nbdk::test::DaemonProcess daemon_{NBDKEEPERD_PATH, kRoot};
  int port_ = 0;
  std::unique_ptr<csi::v1::Node::Stub> node_;
  std::unique_ptr<Writer> writer_;
  std::string device_;
  bool image_created_ = false, staged_ = false, published_ = false;
  double heal_s_ = 0, pause_s_ = 0;
  uint64_t errors_ = 0, writes_ = 0;
  std::string restart_ = "not reached";
  std::vector<std::string> failures_;
};

}  // namespace

int main(int argc, char** argv) {
  bool quiet = false;
  std::string logs = fs::is_directory(kVmShare) ? std::string(kVmShare) + "/keeper-demo" : std::string(kRoot);
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quiet") == 0) {
      quiet = true;
    } else if (std::strcmp(argv[i], "--logs") == 0 && i + 1 < argc) {
      logs = argv[++i];
    } else {
      std::fprintf(stderr, "usage: keeper_demo [--quiet] [--logs DIR]\n");
      return 2;
    }
  }
  return Demo(quiet, logs).Run();
}
