// Test fixture: a Supervisor driving fake_rbd_nbd in a temp directory, a
// fake sysfs tree and a scriptable fake LockBreaker.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "base/event_loop.h"
#include "base/uv_handle.h"
#include "supervisor/supervisor.h"

namespace nbdk {

// The cluster as fake_rbd_nbd leaves it: the image's watchers from its
// <image>.watchers file, the last one also the lock owner, then its
// snapshots' servers from <image>.readers (never the owner); `stranger`, when
// set, is another node's client watching after them from listing
// `stranger_from` on (until `stranger_until`), and owning the lock unless
// `stranger_locks` is false;
// every client at 127.0.0.1 is this host's. A
// successful BreakLock drops the owner's watch and lock, as its
// blocklisting does.
// Records each call with how many attaches had run by then, so a test can
// prove the attach waited for the clients to be known. Answers later, on the
// loop, as the real one does.
class FakeLockBreaker : public LockBreaker {
 public:
  // `fixture_dir` is read at each call: fake_rbd_nbd's files are in its fake/.
  FakeLockBreaker(EventLoop& loop, const std::string& fixture_dir, std::function<int()> attaches_so_far,
                  std::function<uint64_t()> now)
      : loop_(loop), dir_(fixture_dir), attaches_so_far_(std::move(attaches_so_far)), now_(std::move(now)) {}

  // The client fake_rbd_nbd's process `pid` is.
  static CephClient ClientOf(int pid) {
    return {"client." + std::to_string(pid), "127.0.0.1:0/" + std::to_string(pid)};
  }

  void ListClients(const ImageSpec& image, std::function<void(Result<ImageClients>)> done) override {
    lists.push_back({attaches_so_far_(), now_()});
    Result<ImageClients> answer = ImageClients{};
    if (!list_result.ok()) {
      answer = list_result;
    } else {
      std::ifstream in(dir_ + "/fake/" + image.image + ".watchers");
      for (std::string line; std::getline(in, line);) {
        if (auto client = ParseCephClient(line); client.ok()) answer->watchers.push_back(*client);
      }
      if (!answer->watchers.empty()) answer->lock_owner = answer->watchers.back();
      std::ifstream readers(dir_ + "/fake/" + image.image + ".readers");
      for (std::string line; std::getline(readers, line);) {
        if (auto client = ParseCephClient(line); client.ok()) answer->watchers.push_back(*client);
      }
      if (stranger && lists.size() > stranger_from && lists.size() <= stranger_until) {
        answer->watchers.push_back(*stranger);
        if (stranger_locks) answer->lock_owner = stranger;
      }
      std::vector<CephClient> all = answer->watchers;
      if (answer->lock_owner) all.push_back(*answer->lock_owner);
      for (const CephClient& c : all) {
        if (IsLocalAddress(c.addr, {"127.0.0.1"})) answer->local.push_back(c);
      }
    }
    loop_.Post([answer, done = std::move(done)] { done(answer); });
  }

  void BreakLock(const ImageSpec& image, const CephClient& owner, std::function<void(Status)> done) override {
    breaks.push_back({image.Path(), owner, attaches_so_far_(), now_()});
    // Blocklisted: its watch and its lock go with it.
    if (result.ok() && stranger == owner) stranger.reset();
    if (result.ok()) {
      std::vector<std::string> kept;
      std::ifstream in(dir_ + "/fake/" + image.image + ".watchers");
      for (std::string line; std::getline(in, line);) {
        if (line != owner.ToString()) kept.push_back(line);
      }
      std::ofstream out(dir_ + "/fake/" + image.image + ".watchers");
      for (const std::string& line : kept) out << line << "\n";
    }
    loop_.Post([this, done = std::move(done)] { done(result); });
  }

  // When each re-attach attempt k (0-based) started: its client check is
  // the last listing made with k attaches run before it.
  std::vector<uint64_t> AttemptStarts() const {
    std::vector<uint64_t> starts;
    for (const List& l : lists) {
      if (l.attaches_before >= static_cast<int>(starts.size())) starts.resize(l.attaches_before + 1);
      starts[l.attaches_before] = l.loop_ms;
    }
    return starts;
  }

  struct Break {
    std::string image;
    CephClient owner;
    int attaches_before;
    uint64_t loop_ms;
  };
  struct List {
    int attaches_before;
    uint64_t loop_ms;
  };
  std::vector<Break> breaks;
  std::vector<List> lists;
  Status result;                       // of every BreakLock
  Status list_result;                  // not OK: every ListClients fails so
  std::optional<CephClient> stranger;  // another node's client
  size_t stranger_from = 0;            // it shows from this listing on (0-based)
  size_t stranger_until = SIZE_MAX;    // and before this one: a brief holder
  bool stranger_locks = true;          // it holds the lock too

 private:
  EventLoop& loop_;
  const std::string& dir_;
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
    config_.child_env = {"FAKE_RBD_NBD_DIR=" + dir_ + "/fake", "FAKE_RBD_NBD_SYSFS=" + dir_ + "/sys",
                         "PATH=/usr/bin:/bin"};
    config_.reattach_timeout_s = 30;
    config_.reattach_safety_margin_ms = 1000;
    config_.map_deadline_ms = 3000;
    config_.backoff_initial_ms = 20;
    config_.backoff_cap_ms = 80;
    config_.link_dead_grace_ms = 100;
    config_.foreign_writer_persist_ms = 300;
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
    return static_cast<int>(std::count_if(lines.begin(), lines.end(),
                                          [&](const std::string& l) { return l.find(needle) != std::string::npos; }));
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
  FakeLockBreaker breaker_{loop_, dir_, [this] { return CountArgv(" attach "); }, [this] { return loop_.NowMs(); }};
  std::unique_ptr<Supervisor> sup_;
};

}  // namespace nbdk
