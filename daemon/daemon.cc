#include "daemon/daemon.h"

#include <csignal>
#include <memory>
#include <thread>
#include <vector>

#include "csi/csi_server.h"
#include "csi/identity_service.h"
#include "csi/rpc.h"
#include "daemon/event_loop.h"
#include "daemon/health_server.h"
#include "daemon/log.h"
#include "daemon/metrics.h"
#include "daemon/status_page.h"
#include "daemon/systemd_notifier.h"
#include "daemon/uv_handle.h"
#include "daemon/version.h"

namespace nbdk {
namespace {

constexpr int kRpcGraceMs = 10000;

class Daemon {
 public:
  explicit Daemon(const Config& config)
      : config_(config),
        env_{loop_, metrics_},
        health_(std::make_unique<HealthServer>(loop_, HealthServer::Options{})),
        notifier_(std::make_unique<SystemdNotifier>(loop_)),
        identity_(env_, config.driver_name, [this] { return ready_; }) {
    view_ = {&config_, &metrics_, std::chrono::steady_clock::now(), [this] { return ready_; }};
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
    NBDK_LOG_INFO("starting", {{"version", kVersion}, {"node_id", config_.node_id},
                               {"csi_endpoint", config_.csi_endpoint}, {"state_dir", config_.state_dir}});
    InstallStatusPages(*health_, metrics_, view_);
    if (config_.health.port != 0) {
      NBDK_RETURN_IF_ERROR(health_->Listen(config_.health));
      NBDK_LOG_INFO("health_listening", {{"address", config_.health.host}, {"port", health_->port()}});
    }
    auto csi = CsiServer::Start({config_.csi_socket_path, config_.socket_mode, config_.socket_group}, {&identity_});
    if (!csi.ok()) return csi.status();
    csi_ = std::move(*csi);
    NBDK_RETURN_IF_ERROR(WatchSignal(SIGTERM, [this](int) { BeginStop("SIGTERM"); }));
    NBDK_RETURN_IF_ERROR(WatchSignal(SIGINT, [this](int) { BeginStop("SIGINT"); }));
    NBDK_RETURN_IF_ERROR(WatchSignal(SIGHUP, [](int) { NBDK_LOG_INFO("sighup_ignored"); }));
    std::signal(SIGPIPE, SIG_IGN);
    // Startup reconciliation (the journal heal) has nothing to do yet.
    ready_ = true;
    notifier_->Ready();
    notifier_->SetStatus("serving CSI on " + config_.csi_socket_path);
    NBDK_LOG_INFO("ready", {{"socket", config_.csi_socket_path}});
    return Status::Ok();
  }

  // gRPC's Shutdown waits for in-flight RPCs, which finish on this loop: it
  // must run on another thread while the loop keeps turning.
  void BeginStop(const char* why) {
    if (stopping_) return;
    stopping_ = true;
    ready_ = false;
    NBDK_LOG_INFO("stopping", {{"signal", why}});
    notifier_->Stopping();
    stopper_ = std::thread([this] {
      csi_->Stop(kRpcGraceMs);
      loop_.Post([this] { loop_.Stop(); });
    });
  }

  Status WatchSignal(int signum, std::function<void(int)> cb) {
    signals_.push_back(std::make_unique<SignalWatch>(loop_));
    return signals_.back()->Start(signum, std::move(cb));
  }

  // Releases every loop handle so the loop can close without leaks.
  void Close() {
    if (stopper_.joinable()) stopper_.join();
    csi_.reset();
    health_.reset();
    notifier_.reset();
    signals_.clear();
  }

  Config config_;
  EventLoop loop_;
  Metrics metrics_;
  RpcEnv env_;
  std::unique_ptr<HealthServer> health_;
  std::unique_ptr<SystemdNotifier> notifier_;
  std::vector<std::unique_ptr<SignalWatch>> signals_;
  IdentityService identity_;
  DaemonView view_;
  std::unique_ptr<CsiServer> csi_;
  std::thread stopper_;
  bool ready_ = false;
  bool stopping_ = false;
};

}  // namespace

int RunDaemon(const Config& config) {
  Daemon daemon(config);
  return daemon.Run();
}

}  // namespace nbdk
