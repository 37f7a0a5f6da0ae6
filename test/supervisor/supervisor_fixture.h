// Test fixture: a Supervisor driving fake_rbd_nbd in a temp directory, a
// fake sysfs tree and a scriptable fake LockBreaker.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "daemon/base/event_loop.h"
#include "daemon/base/uv_handle.h"
#include "supervisor/supervisor.h"

namespace nbdk {

// Records each call with how many attaches had run by then, so a test can
// prove the attach waited for the owner to be seen. Answers later, on the
// loop, as the real one does: owner_seen, then done(result).
class FakeLockBreaker : public LockBreaker {
 public:
  FakeLockBreaker(EventLoop& loop, std::function<int()> attaches_so_far, std::function<uint64_t()> now)
      : loop_(loop), attaches_so_far_(std::move(attaches_so_far)), now_(std::move(now)) {}
  void BreakDeadOwnerLock(const ImageSpec& image, std::function<void()> owner_seen,
                          std::function<void(Status)> done) override {
    calls.push_back({image.Path(), attaches_so_far_(), now_()});
    loop_.Post([this, owner_seen = std::move(owner_seen), done = std::move(done)] {
      owner_seen();
      done(result);
    });
  }
  struct Call {
    std::string image;
    int attaches_before;
    uint64_t loop_ms;  // loop clock when the attempt started
  };
  std::vector<Call> calls;
  Status result;

 private:
  EventLoop& loop_;
  std::function<int()> attaches_so_far_;
  std::function<uint64_t()> now_;
};

class SupervisorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nbdk-sup-XXXXXX";
    dir_ = mkdtemp(tmpl);
    std::filesystem::create_directories(dir_ + "/fake");
    std::filesystem::create_directories(dir_ + "/sys/block");
    config_.rbd_nbd_path = FAKE_RBD_NBD_PATH;
    config_.state_dir = dir_ + "/state";
    config_.sysfs_root = dir_ + "/sys";
    config_.child_env = {"FAKE_RBD_NBD_DIR=" + dir_ + "/fake", "PATH=/usr/bin:/bin"};
    config_.reattach_timeout_s = 30;
    config_.reattach_safety_margin_ms = 1000;
    config_.map_deadline_ms = 3000;
    config_.backoff_initial_ms = 20;
    config_.backoff_cap_ms = 80;
    config_.link_dead_grace_ms = 100;
    config_.unmap_exit_wait_ms = 3000;
    config_.output_tail_lines = 5;
  }

  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  Supervisor& sup() {
    if (!sup_) sup_ = std::make_unique<Supervisor>(loop_, config_, breaker_);
    return *sup_;
  }

  MapRequest Request(const std::string& volume, const std::string& image) {
    MapRequest r;
    r.volume_id = volume;
    r.image.pool = "rbd";
    r.image.image = image;
    r.image.user_id = "csi";
    r.image.keyfile = "/etc/ceph/csi.key";
    r.image.monitors = {"10.0.0.1:6789", "10.0.0.2:6789"};
    r.image.ceph_conf = "/etc/ceph/ceph.conf";
    return r;
  }

  void Behave(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/fake/" + name) << text << "\n";
  }
  void MakeSysfs(int index) {
    std::string q = dir_ + "/sys/block/nbd" + std::to_string(index) + "/queue";
    std::filesystem::create_directories(q);
    std::ofstream(q + "/io_timeout") << "30000\n";
  }
  std::string ReadFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::vector<std::string> ArgvLog() {
    std::vector<std::string> lines;
    std::ifstream in(dir_ + "/fake/argv.log");
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
  }
  int CountArgv(const std::string& needle) {
    auto lines = ArgvLog();
    return static_cast<int>(
        std::count_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(needle) != std::string::npos; }));
  }

  // Runs the loop until `pred` holds or `timeout_ms` passed; returns pred().
  bool RunUntil(const std::function<bool()>& pred, uint64_t timeout_ms = 10000) {
    if (pred()) return true;
    auto poll = std::make_unique<Timer>(loop_);
    auto limit = std::make_unique<Timer>(loop_);
    poll->Start(5, 5, [&] {
      if (pred()) loop_.Stop();
    });
    limit->Start(timeout_ms, 0, [&] { loop_.Stop(); });
    loop_.Run();
    return pred();
  }
  void RunFor(uint64_t ms) {
    RunUntil([] { return false; }, ms);
  }

  Result<std::string> MapAndWait(MapRequest request) {
    std::optional<Result<std::string>> got;
    sup().Map(std::move(request), [&](Result<std::string> r) { got = std::move(r); });
    EXPECT_TRUE(RunUntil([&] { return got.has_value(); }));
    if (!got) return Status::Internal("map did not finish");
    return *got;
  }
  Status UnmapAndWait(const std::string& volume) {
    std::optional<Status> got;
    sup().Unmap(volume, [&](Status s) { got = s; });
    EXPECT_TRUE(RunUntil([&] { return got.has_value(); }));
    return got.value_or(Status::Internal("unmap did not finish"));
  }
  MappingSnapshot Snap(const std::string& volume) {
    auto s = sup().Snapshot(volume);
    EXPECT_TRUE(s.has_value()) << volume;
    return s.value_or(MappingSnapshot{});
  }
  bool IsConnectedWithRestarts(const std::string& volume, uint32_t restarts) {
    auto s = sup().Snapshot(volume);
    return s && s->state == MappingState::kConnected && s->restarts == restarts;
  }

  // Unmaps everything, destroys the supervisor and asserts a leak-free loop.
  void UnmapAllAndShutdown() {
    if (sup_) {
      for (const auto& s : sup_->Snapshots()) EXPECT_TRUE(UnmapAndWait(s.volume_id).ok()) << s.volume_id;
      EXPECT_TRUE(sup_->Snapshots().empty());
      sup_.reset();
    }
    EXPECT_TRUE(loop_.Shutdown().ok());
  }

  std::string dir_;
  SupervisorConfig config_;
  EventLoop loop_;
  FakeLockBreaker breaker_{loop_, [this] { return CountArgv(" attach "); }, [this] { return loop_.NowMs(); }};
  std::unique_ptr<Supervisor> sup_;
};

}  // namespace nbdk
