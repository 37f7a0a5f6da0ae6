#include "daemon/daemon.h"

#include <sys/stat.h>

#include <cerrno>
#include <csignal>
#include <ctime>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "base/event_loop.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/uv_handle.h"
#include "base/version.h"
#include "csi/controller/controller_service.h"
#include "csi/csi_server.h"
#include "csi/heal/volume_healer.h"
#include "csi/identity_service.h"
#include "csi/key_file.h"
#include "csi/node/node_service.h"
#include "csi/node/server_journal.h"
#include "csi/rpc.h"
#include "daemon/health_server.h"
#include "daemon/status_page.h"
#include "daemon/systemd_notifier.h"
#include "daemon/volume_report.h"
#include "journal/node_boot_id.h"
#include "journal/node_record_file_name.h"
#include "netlink/nbd_netlink.h"
#include "supervisor/device_links.h"
#include "supervisor/rbd_lock_breaker.h"
#include "supervisor/server_probe.h"
#include "supervisor/systemd_child_scopes.h"

namespace nbdk {
namespace {

constexpr int kRpcGraceMs = 10000;

SupervisorConfig SupervisorConfigFrom(const Config& c) {
  SupervisorConfig s;
  s.rbd_nbd_path = c.rbd_nbd_path;
  s.state_dir = c.state_dir;
  s.io_timeout_ms = c.io_timeout_ms;
  s.reattach_timeout_s = c.reattach_timeout_s;
  s.stuck_io_limit_ms = uint64_t{c.stuck_io_limit_s} * 1000;
  s.max_concurrent_attaches = c.max_concurrent_attaches;
  return s;
}

class Daemon {
 public:
  explicit Daemon(const Config& config)
      : config_(config),
        env_{loop_, metrics_},
        rados_(loop_),
        controller_rados_(loop_, RadosClients::DefaultConnector(), Lane::kController),
        host_(loop_),
        rbd_lock_breaker_(loop_, rados_),
        list_only_(loop_, rbd_lock_breaker_),
        child_scopes_(loop_, config.systemd_bus),
        device_links_(loop_, config.device_links),
        supervisor_(loop_, SupervisorConfigFrom(config),
                    config.break_dead_locks ? static_cast<LockBreaker&>(rbd_lock_breaker_) : list_only_),
        health_(std::make_unique<HealthServer>(loop_, HealthServer::Options{})),
        notifier_(std::make_unique<SystemdNotifier>(loop_)),
        identity_(env_, config.driver_name, [this] { return ready_; }) {
    // Off: every child stays in our cgroup, and /status says so.
    if (config.child_scopes) supervisor_.SetChildScopes(&child_scopes_);
    supervisor_.SetStateChanged([this](const std::string& id, const std::string& image, const std::string& device,
                                       MappingState state) { device_links_.OnState(id, image, device, state); });
    view_ = {&config_, &metrics_, std::chrono::steady_clock::now(), [this] { return ready_; }, nullptr, nullptr};
    DeclareRpcMetrics(metrics_);
  }

  int Run() {
    Status s = Start();
    if (!s.ok()) {
      NBDK_LOG_ERROR("startup_failed", {{"error", s.ToString()}});
      Close();
      (void)loop_.Shutdown();
      return 1;
    }
    loop_.Run();
    Close();
    Status leak = loop_.Shutdown();
    if (!leak.ok()) NBDK_LOG_ERROR("shutdown_leak", {{"error", leak.message()}});
    NBDK_LOG_INFO("stopped");
    return 0;
  }

 private:
  Status Start() {
    NBDK_LOG_INFO("starting", {{"version", kVersion},
                               {"node_id", config_.node_id},
                               {"csi_endpoint", config_.csi_endpoint},
                               {"state_dir", config_.state_dir}});
    // A key directory others can read is refused before anything is made
    // (a missing one is made by the first stage, under its runtime dir).
    if (struct stat st{}; ::lstat(config_.key_dir.c_str(), &st) == 0)
      NBDK_RETURN_IF_ERROR(CheckKeyDir(config_.key_dir));
    if (::mkdir(config_.state_dir.c_str(), 0700) != 0 && errno != EEXIST) {
      return Status::FromErrno(errno, "create state dir " + config_.state_dir);
    }
    // Where nbdkeeperctl stages volumes on a host without kubelet.
    if (::mkdir(StagingRoot().c_str(), 0700) != 0 && errno != EEXIST) {
      return Status::FromErrno(errno, "create " + StagingRoot());
    }
    std::string asok = AdminSocketDir(supervisor_.config());
    if (::mkdir(asok.c_str(), 0700) != 0 && errno != EEXIST) return Status::FromErrno(errno, "create " + asok);
    auto journal = NodeJournal::Open(config_.state_dir + "/journal");
    if (!journal.ok()) return journal.status().WithContext("node journal");
    volumes_ = std::make_unique<StagedVolumes>(loop_, std::move(*journal));
    NBDK_RETURN_IF_ERROR(StartNode());

    view_.write_volumes = [this](JsonWriter& w) {
      WriteVolumesJson(*volumes_, supervisor_, device_links_, node_->options.boot_id, config_.status_shows_output, w);
    };
    view_.write_quarantined = [this](JsonWriter& w) { WriteQuarantinedJson(*volumes_, w); };
    InstallStatusPages(*health_, metrics_, view_);
    AddSupervisorMetrics(metrics_, supervisor_, *volumes_);
    if (config_.health.port != 0) {
      NBDK_RETURN_IF_ERROR(health_->Listen(config_.health));
      NBDK_LOG_INFO("health_listening", {{"address", config_.health.host}, {"port", health_->port()}});
    }
    auto csi = CsiServer::Start({config_.csi_socket_path, config_.socket_mode, config_.socket_group},
                                {&identity_, node_service_.get(), controller_service_.get()});
    if (!csi.ok()) return csi.status();
    csi_ = std::move(*csi);
    NBDK_RETURN_IF_ERROR(WatchSignal(SIGTERM, [this](int) { BeginStop("SIGTERM"); }));
    NBDK_RETURN_IF_ERROR(WatchSignal(SIGINT, [this](int) { BeginStop("SIGINT"); }));
    NBDK_RETURN_IF_ERROR(WatchSignal(SIGHUP, [](int) { NBDK_LOG_INFO("sighup_ignored"); }));
    std::signal(SIGPIPE, SIG_IGN);
    notifier_->SetStatus("loading the node journal");
    volumes_->Load([this](Result<LoadResult> loaded) { OnJournalLoaded(std::move(loaded)); });
    return Status::Ok();
  }

  std::string StagingRoot() const { return config_.state_dir + "/staging"; }

  // The kernel side (netlink) is optional: without the nbd module the
  // daemon still serves, and child exits alone detect deaths.
  Status StartNode() {
    auto boot_id = ReadBootId();
    if (!boot_id.ok()) return boot_id.status();
    auto netlink = NbdNetlink::Open(loop_);
    if (netlink.ok()) {
      netlink_ = std::move(*netlink);
      NBDK_RETURN_IF_ERROR(netlink_->SubscribeLinkDead([this](int index) { supervisor_.OnLinkDead(index); }));
    } else {
      NBDK_LOG_WARN("nbd_netlink_unavailable", {{"error", netlink.status().message()}});
    }
    NodeOptions options;
    options.node_id = config_.node_id;
    options.key_dir = config_.key_dir;
    options.path_roots = {config_.csi_root, StagingRoot()};
    options.path_roots.insert(options.path_roots.end(), config_.mount_roots.begin(), config_.mount_roots.end());
    options.resolve.cluster.cluster_config_path = config_.ceph_csi_config;
    options.resolve.cluster.ceph_conf = config_.ceph_conf;
    options.resolve.cluster.ceph_dir = config_.ceph_dir;
    options.resolve.node_labels = config_.node_labels;
    options.resolve.crush_location_labels = config_.crush_location_labels;
    options.topology = config_.topology;
    options.kms_config_path = config_.kms_config;
    options.boot_id = *boot_id;
    if (netlink_) {
      auto devices = netlink_->Status();
      if (devices.ok()) options.max_volumes = static_cast<int64_t>(devices->size());
    }
    node_ = std::make_unique<NodeContext>(NodeContext{loop_, supervisor_, rados_, *volumes_, host_, options});
    server_journal_ = std::make_unique<ServerJournal>(*node_);
    node_service_ = std::make_unique<NodeService>(env_, *node_);
    controller_service_ = std::make_unique<ControllerService>(
        env_, controller_rados_,
        ControllerOptions{options.key_dir, options.resolve.cluster, config_.set_metadata, config_.kms_config});
    return Status::Ok();
  }

  void OnJournalLoaded(Result<LoadResult> loaded) {
    if (!loaded.ok()) {
      // Serving without the journal would forget volumes: stay not-ready.
      NBDK_LOG_ERROR("journal_load_failed", {{"error", loaded.status().ToString()}});
      notifier_->SetStatus("node journal failed to load: " + loaded.status().message());
      return;
    }
    NBDK_LOG_INFO("journal_loaded", {{"volumes", loaded->records.size()}, {"quarantined", loaded->quarantined.size()}});
    notifier_->SetStatus("healing " + std::to_string(loaded->records.size()) + " journaled volume(s)");
    RemoveStaleKeys(*loaded);
    HealOptions heal;
    heal.evidence.rbd_nbd_path = config_.rbd_nbd_path;
    HealVolumes(*node_, heal, [this](const HealSummary&) {
      if (stopping_) return;
      ready_ = true;
      node_->healed = true;
      notifier_->Ready();
      notifier_->SetStatus("serving CSI on " + config_.csi_socket_path);
      NBDK_LOG_INFO("ready", {{"socket", config_.csi_socket_path}});
    });
  }

  // The keys a crash left: of volumes the journal does not hold (nor a
  // quarantined record of theirs), and Controller calls' from before this
  // start. No stage has written one yet: stages wait for the heal.
  void RemoveStaleKeys(const LoadResult& loaded) {
    std::set<std::string> keep;
    for (const VolumeRecord& r : loaded.records) keep.insert(r.volume_id);
    std::set<std::string> quarantined;
    for (const QuarantinedFile& q : loaded.quarantined) quarantined.insert(q.file);
    auto removed = std::make_shared<Result<std::vector<std::string>>>(std::vector<std::string>{});
    loop_.RunBlocking(
        [removed, dir = config_.key_dir, keep, quarantined, before = started_at_] {
          *removed = RemoveStaleKeyFiles(
              dir,
              [&](std::string_view id) {
                Result<std::string> file = RecordFileName(id);
                return keep.count(std::string(id)) != 0 || (file.ok() && quarantined.count(*file) != 0);
              },
              before);
        },
        [removed] {
          if (!removed->ok()) return NBDK_LOG_WARN("stale_key_files", {{"error", removed->status().ToString()}});
          if ((*removed)->empty()) return;
          std::string names;
          for (const std::string& n : **removed) names += (names.empty() ? "" : ",") + n;
          NBDK_LOG_INFO("stale_key_files_removed", {{"count", (*removed)->size()}, {"files", names}});
        });
  }

  // gRPC's Shutdown waits for in-flight RPCs, which finish on this loop: it
  // must run on another thread while the loop keeps turning.
  void BeginStop(const char* why) {
    if (stopping_) return;
    stopping_ = true;
    ready_ = false;
    NBDK_LOG_INFO("stopping",
                  {{"signal", why}, {"on_stop", config_.stop_policy == StopPolicy::kDetach ? "detach" : "leave"}});
    notifier_->Stopping();
    stopper_ = std::thread([this] {
      csi_->Stop(kRpcGraceMs);
      loop_.Post([this] { StopMappings(); });
    });
  }

  void StopMappings() {
    if (config_.stop_policy == StopPolicy::kLeaveRunning) {
      auto released = supervisor_.ReleaseAll();
      NBDK_LOG_INFO("mappings_left_running", {{"count", released.size()}});
      return loop_.Stop();
    }
    auto pending = std::make_shared<size_t>(0);
    for (const MappingSnapshot& s : supervisor_.Snapshots()) {
      ++*pending;
      supervisor_.Detach(s.volume_id, [this, pending, id = s.volume_id](Status st) {
        NBDK_LOG_INFO("mapping_detached", {{"volume", id}, {"status", st.ToString()}});
        if (--*pending == 0) loop_.Stop();
      });
    }
    if (*pending == 0) loop_.Stop();
  }

  Status WatchSignal(int signum, std::function<void(int)> cb) {
    signals_.push_back(std::make_unique<SignalWatch>(loop_));
    return signals_.back()->Start(signum, std::move(cb));
  }

  // Releases every loop handle so the loop can close without leaks.
  void Close() {
    if (stopper_.joinable()) stopper_.join();
    csi_.reset();
    server_journal_.reset();
    supervisor_.ReleaseAll();
    netlink_.reset();
    health_.reset();
    notifier_.reset();
    signals_.clear();
  }

  Config config_;
  EventLoop loop_;
  Metrics metrics_;
  RpcEnv env_;
  RadosClients rados_;             // the Node's connections
  RadosClients controller_rados_;  // the Controller's, on its own lane (base/event_loop.h)
  SystemNodeEnv host_;
  RbdLockBreaker rbd_lock_breaker_;
  ListOnlyLockBreaker list_only_;
  SystemdChildScopes child_scopes_;  // before the Supervisor that uses it
  DeviceLinks device_links_;         // likewise
  Supervisor supervisor_;
  std::unique_ptr<NbdNetlink> netlink_;
  std::unique_ptr<StagedVolumes> volumes_;
  std::unique_ptr<NodeContext> node_;
  std::unique_ptr<ServerJournal> server_journal_;
  std::unique_ptr<NodeService> node_service_;
  std::unique_ptr<ControllerService> controller_service_;
  std::unique_ptr<HealthServer> health_;
  std::unique_ptr<SystemdNotifier> notifier_;
  std::vector<std::unique_ptr<SignalWatch>> signals_;
  IdentityService identity_;
  DaemonView view_;
  std::unique_ptr<CsiServer> csi_;
  std::thread stopper_;
  bool ready_ = false;
  bool stopping_ = false;
  std::time_t started_at_ = std::time(nullptr);
};

}  // namespace

int RunDaemon(const Config& config) {
  Daemon daemon(config);
  return daemon.Run();
}

}  // namespace nbdk
