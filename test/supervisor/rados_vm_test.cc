// VM test (real Ceph, real kernel nbd): a SIGKILLed rbd-nbd's exclusive lock
// is broken by RbdLockBreaker and a re-attached rbd-nbd writes within
// seconds instead of after the ~30 s watch timeout.
//
// Needs: CEPH_CONF, NBDK_TEST_POOL, NBDK_TEST_CLIENT_ID (without "client."),
// NBDK_TEST_KEYFILE (or test/vm's NBDK_CEPH_POOL, NBDK_CEPH_ID,
// NBDK_CEPH_KEY_FILE); rbd-nbd on PATH; the nbd module loaded. Creates and
// removes its own image; unmaps what it mapped.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <rbd/librbd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/event_loop.h"
#include "ceph/ceph_address.h"
#include "ceph/rados_clients.h"
#include "ceph/rados_cluster.h"
#include "supervisor/rbd_lock_breaker.h"

namespace nbdk {
namespace {

using Clock = std::chrono::steady_clock;

int64_t MsSince(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

// A child started with fork/exec whose stdout we read.
struct Child {
  pid_t pid = -1;
  int stdout_fd = -1;
};

Result<Child> Spawn(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Status::FromErrno(errno, "pipe");
  pid_t pid = fork();
  if (pid < 0) return Status::FromErrno(errno, "fork " + argv[0]);
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  return Child{pid, fds[0]};
}

// The first line the child prints, within `timeout`.
Result<std::string> ReadLine(const Child& child, std::chrono::milliseconds timeout) {
  std::string line;
  const Clock::time_point deadline = Clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return Status::DeadlineExceeded("no line from pid " + std::to_string(child.pid));
    pollfd p{child.stdout_fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    char c;
    ssize_t n = read(child.stdout_fd, &c, 1);
    if (n <= 0) return Status::Unavailable("pid " + std::to_string(child.pid) + " exited before printing a line");
    if (c == '\n') return line;
    line.push_back(c);
  }
}

// waitpid with a deadline; SIGKILL after it. The exit status.
int Reap(Child& child, std::chrono::seconds timeout) {
  if (child.pid < 0) return 0;
  const Clock::time_point deadline = Clock::now() + timeout;
  int status = 0;
  while (waitpid(child.pid, &status, WNOHANG) == 0) {
    if (Clock::now() > deadline) {
      kill(child.pid, SIGKILL);
      waitpid(child.pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  close(child.stdout_fd);
  child = Child{};
  return status;
}

// One O_DIRECT 4 KiB write + fsync to `device`, bounded by `timeout` (a
// write stuck on a fenced device must fail the test, not hang it).
Status TimedWrite(const std::string& device, std::chrono::seconds timeout) {
  auto result = std::make_shared<std::promise<Status>>();
  std::future<Status> done = result->get_future();
  std::thread([device, result] {
    int fd = open(device.c_str(), O_RDWR | O_DIRECT | O_CLOEXEC);
    if (fd < 0) return result->set_value(Status::FromErrno(errno, "open " + device));
    void* raw = nullptr;
    if (posix_memalign(&raw, 4096, 4096) != 0) {
      close(fd);
      return result->set_value(Status::ResourceExhausted("posix_memalign 4096"));
    }
    std::unique_ptr<void, decltype(&free)> buf(raw, free);
    memset(buf.get(), 0x5a, 4096);
    Status s;
    if (pwrite(fd, buf.get(), 4096, 0) != 4096)
      s = Status::FromErrno(errno, "write " + device);
    else if (fsync(fd) != 0)
      s = Status::FromErrno(errno, "fsync " + device);
    close(fd);
    result->set_value(s);
  }).detach();
  if (done.wait_for(timeout) != std::future_status::ready) {
    return Status::DeadlineExceeded("write to " + device + " still blocked after " + std::to_string(timeout.count()) +
                                    " s");
  }
  return done.get();
}

// `name`, or `alias` (the name test/vm/ceph-up.sh writes to its env file).
std::string Env(const char* name, const char* alias, std::vector<std::string>* missing) {
  for (const char* n : {name, alias}) {
    const char* v = getenv(n);
    if (v != nullptr && *v != '\0') return v;
  }
  missing->push_back(std::string(name) + (std::string_view(name) == alias ? "" : std::string(" (or ") + alias + ")"));
  return "";
}

class RadosVmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<std::string> missing;
    spec_.ceph_conf = Env("CEPH_CONF", "CEPH_CONF", &missing);
    spec_.pool = Env("NBDK_TEST_POOL", "NBDK_CEPH_POOL", &missing);
    spec_.user_id = Env("NBDK_TEST_CLIENT_ID", "NBDK_CEPH_ID", &missing);
    spec_.keyfile = Env("NBDK_TEST_KEYFILE", "NBDK_CEPH_KEY_FILE", &missing);
    if (!missing.empty()) {
      std::string names;
      for (const auto& m : missing) names += (names.empty() ? "" : ", ") + m;
      FAIL() << "missing environment: " << names;
    }
    spec_.image = "nbdk-vm-" + std::to_string(getpid());
    cookie_ = "nbdk-vm-cookie-" + std::to_string(getpid());

    Result<std::shared_ptr<RadosCluster>> cluster = RadosCluster::ConnectBlocking(RadosConfigForImage(spec_, 30));
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = cluster.value();
    Result<IoCtx> io = IoCtx::Open(cluster_, spec_.pool, "");
    ASSERT_TRUE(io.ok()) << io.status().ToString();
    io_.emplace(std::move(io).value());
  }

  void CreateImage() {
    int order = 22;
    int rc = rbd_create2(io_->get(), spec_.image.c_str(), 64ull << 20,
                         RBD_FEATURE_LAYERING | RBD_FEATURE_EXCLUSIVE_LOCK, &order);
    ASSERT_EQ(rc, 0) << "rbd_create2 " << spec_.Path() << ": " << strerror(-rc);
    image_created_ = true;
  }

  void TearDown() override {
    if (!device_.empty()) {
      Result<Child> unmap = Spawn({"rbd-nbd", "unmap", device_});
      if (unmap.ok()) {
        EXPECT_EQ(Reap(*unmap, std::chrono::seconds(60)), 0) << "rbd-nbd unmap " << device_;
      }
    }
    for (Child* c : {&attach_, &map_}) {
      if (c->pid > 0) kill(c->pid, SIGTERM);
      Reap(*c, std::chrono::seconds(30));
    }
    if (image_created_) {
      // The blocklisted client's watch may take an OSD map epoch to vanish.
      int rc = -EBUSY;
      for (int i = 0; i < 60 && (rc == -EBUSY || rc == -EAGAIN); ++i) {
        rc = rbd_remove(io_->get(), spec_.image.c_str());
        if (rc != 0) std::this_thread::sleep_for(std::chrono::seconds(1));
      }
      EXPECT_EQ(rc, 0) << "rbd_remove " << spec_.Path() << ": " << strerror(-rc);
    }
  }

  // rbd-nbd <args> --id <user> --keyfile <file> -c <conf> <pool>/<image>
  std::vector<std::string> RbdNbd(std::vector<std::string> args) const {
    args.insert(args.begin(), "rbd-nbd");
    args.insert(args.end(), {"--id", spec_.user_id, "--keyfile", spec_.keyfile, "-c", spec_.ceph_conf, spec_.Path()});
    return args;
  }

  // The exclusive-lock owner seen through a fresh handle; nullopt: none.
  std::optional<std::string> LockOwner() {
    rbd_image_t image = nullptr;
    int rc = rbd_open(io_->get(), spec_.image.c_str(), &image, nullptr);
    EXPECT_EQ(rc, 0) << strerror(-rc);
    if (rc != 0) return std::nullopt;
    char* owners[4] = {};
    size_t count = 4;
    rbd_lock_mode_t mode;
    rc = rbd_lock_get_owners(image, &mode, owners, &count);
    std::optional<std::string> owner;
    if (rc == 0 && count > 0) owner = owners[0];
    if (rc == 0) rbd_lock_get_owners_cleanup(owners, count);
    EXPECT_TRUE(rc == 0 || rc == -ENOENT) << strerror(-rc);
    rbd_close(image);
    return owner;
  }

  // What RbdLockBreaker lists, then (with `owner`) its break of that owner.
  Result<ImageClients> ListClients() {
    EventLoop loop;
    Result<ImageClients> result = Status::Internal("ListClients never completed");
    {
      RadosClients clients(loop);
      RbdLockBreaker breaker(loop, clients, 10);
      breaker.ListClients(spec_, [&](Result<ImageClients> r) {
        result = std::move(r);
        loop.Stop();
      });
      loop.Run();
    }
    EXPECT_TRUE(loop.Shutdown().ok());
    return result;
  }
  Status BreakLock(const CephClient& owner) {
    EventLoop loop;
    Status result = Status::Internal("BreakLock never completed");
    {
      RadosClients clients(loop);
      RbdLockBreaker breaker(loop, clients, 10);
      breaker.BreakLock(spec_, owner, [&](Status s) {
        result = s;
        loop.Stop();
      });
      loop.Run();
    }
    EXPECT_TRUE(loop.Shutdown().ok());
    return result;
  }

  ImageSpec spec_;
  std::string cookie_, device_;
  std::shared_ptr<RadosCluster> cluster_;
  std::optional<IoCtx> io_;
  bool image_created_ = false;
  Child map_, attach_;
};

TEST_F(RadosVmTest, KilledRbdNbdLockIsBrokenAndReattachWritesInSeconds) {
  ASSERT_NO_FATAL_FAILURE(CreateImage());
  Result<Child> map = Spawn(RbdNbd({"map", "--try-netlink", "--reattach-timeout", "60", "--cookie", cookie_, "-f"}));
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  map_ = *map;
  Result<std::string> line = ReadLine(map_, std::chrono::seconds(60));
  ASSERT_TRUE(line.ok()) << "rbd-nbd map: " << line.status().ToString();
  device_ = line->substr(0, line->find(' '));
  ASSERT_EQ(device_.rfind("/dev/nbd", 0), 0u) << "rbd-nbd printed: " << *line;

  Status first = TimedWrite(device_, std::chrono::seconds(60));
  ASSERT_TRUE(first.ok()) << first.ToString();
  std::optional<std::string> owner = LockOwner();
  ASSERT_TRUE(owner.has_value()) << "the write did not take the exclusive lock";
  Result<std::vector<std::string>> host_ips = HostIpAddresses();
  ASSERT_TRUE(host_ips.ok());
  EXPECT_TRUE(IsLocalAddress(*owner, *host_ips)) << "owner " << *owner;
  // The lister names the one client by entity and nonce, as watcher and
  // as lock owner alike (supervisor/image_fence.h compares them).
  Result<ImageClients> seen = ListClients();
  ASSERT_TRUE(seen.ok()) << seen.status().ToString();
  ASSERT_EQ(seen->watchers.size(), 1u);
  ASSERT_TRUE(seen->lock_owner.has_value());
  EXPECT_EQ(*seen->lock_owner, seen->watchers[0]);
  EXPECT_EQ(seen->lock_owner->addr, *owner);
  EXPECT_TRUE(ParseCephClient(seen->lock_owner->ToString()).ok()) << seen->lock_owner->ToString();
  // Another client at the same address but with another nonce is not the
  // owner: its lock is not broken.
  CephClient impostor = *seen->lock_owner;
  impostor.addr = impostor.addr.substr(0, impostor.addr.rfind('/')) + "/1";

  const Clock::time_point killed = Clock::now();
  ASSERT_EQ(kill(map_.pid, SIGKILL), 0);
  EXPECT_TRUE(WIFSIGNALED(Reap(map_, std::chrono::seconds(10))));

  const Clock::time_point break_start = Clock::now();
  EXPECT_FALSE(BreakLock(impostor).ok()) << "a lock broken for a client that does not own it";
  EXPECT_EQ(LockOwner(), owner) << "the impostor's break touched the lock";
  Status broken = BreakLock(*seen->lock_owner);
  const int64_t break_ms = MsSince(break_start);
  ASSERT_TRUE(broken.ok()) << broken.ToString();
  EXPECT_EQ(LockOwner(), std::nullopt) << "the dead client's lock survived the break";

  Result<Child> attach = Spawn(RbdNbd({"attach", "--try-netlink", "--device", device_, "--cookie", cookie_, "-f"}));
  ASSERT_TRUE(attach.ok()) << attach.status().ToString();
  attach_ = *attach;
  Result<std::string> attached = ReadLine(attach_, std::chrono::seconds(60));
  ASSERT_TRUE(attached.ok()) << "rbd-nbd attach: " << attached.status().ToString();
  const int64_t attach_ms = MsSince(killed);

  const Clock::time_point write_start = Clock::now();
  Status after = TimedWrite(device_, std::chrono::seconds(60));
  const int64_t write_ms = MsSince(write_start);
  ASSERT_TRUE(after.ok()) << after.ToString();

  std::cout << "lock_break_ms=" << break_ms << " kill_to_attached_ms=" << attach_ms
            << " write_after_attach_ms=" << write_ms << " kill_to_write_done_ms=" << MsSince(killed) << "\n";
  RecordProperty("lock_break_ms", static_cast<int>(break_ms));
  RecordProperty("write_after_attach_ms", static_cast<int>(write_ms));
  // Without the break the first write waits out the ~30 s watch timeout.
  EXPECT_LT(write_ms, 10000);
  EXPECT_LT(break_ms, 10000);
}

TEST_F(RadosVmTest, OmapGetAndPoolLookupsRoundTrip) {
  const std::string object = "nbdk-vm-omap-" + std::to_string(getpid());
  const std::vector<std::string> keys = {"csi.imagename", "csi.volname"};
  const std::vector<std::string> values = {"csi-vol-1", std::string("pvc\0binary", 10)};
  std::vector<const char*> key_ptrs = {keys[0].c_str(), keys[1].c_str()};
  std::vector<const char*> val_ptrs = {values[0].data(), values[1].data()};
  std::vector<size_t> key_lens = {keys[0].size(), keys[1].size()};
  std::vector<size_t> val_lens = {values[0].size(), values[1].size()};
  rados_write_op_t op = rados_create_write_op();
  rados_write_op_create(op, LIBRADOS_CREATE_EXCLUSIVE, nullptr);
  rados_write_op_omap_set2(op, key_ptrs.data(), val_ptrs.data(), key_lens.data(), val_lens.data(), 2);
  int rc = rados_write_op_operate(op, io_->get(), object.c_str(), nullptr, 0);
  rados_release_write_op(op);
  ASSERT_EQ(rc, 0) << strerror(-rc);

  Result<std::map<std::string, std::string>> got = OmapGet(*io_, object, {"csi.imagename", "csi.volname", "absent"});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)["csi.imagename"], values[0]);
  EXPECT_EQ((*got)["csi.volname"], values[1]);

  Result<std::map<std::string, std::string>> missing = OmapGet(*io_, object + "-absent", {"k"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
  EXPECT_NE(missing.status().message().find(object + "-absent"), std::string::npos);
  EXPECT_NE(missing.status().message().find("pool " + spec_.pool), std::string::npos);

  Result<int64_t> id = cluster_->PoolId(spec_.pool);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  Result<std::string> name = cluster_->PoolName(*id);
  ASSERT_TRUE(name.ok()) << name.status().ToString();
  EXPECT_EQ(*name, spec_.pool);
  Result<int64_t> no_pool = cluster_->PoolId("nbdk-no-such-pool");
  ASSERT_FALSE(no_pool.ok());
  EXPECT_EQ(no_pool.status().code(), Code::kNotFound);
  EXPECT_NE(no_pool.status().message().find("nbdk-no-such-pool"), std::string::npos);

  Result<IoCtx> by_id = IoCtx::OpenById(cluster_, *id, "");
  ASSERT_TRUE(by_id.ok()) << by_id.status().ToString();
  Result<std::map<std::string, std::string>> again = OmapGet(*by_id, object, {"csi.imagename"});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ((*again)["csi.imagename"], values[0]);
  EXPECT_FALSE(cluster_->broken());

  EXPECT_EQ(rados_remove(io_->get(), object.c_str()), 0);
}

}  // namespace
}  // namespace nbdk
