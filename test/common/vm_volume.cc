#include "test/common/vm_volume.h"

#include <fcntl.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "base/command.h"
#include "test/common/http_client.h"
#include "test/common/vm_command.h"

namespace nbdk::vmtest {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

int64_t NanosOf(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

Status RunRbd(const VmCeph& ceph, const std::vector<std::string>& args) {
  std::vector<std::string> argv = ceph.Rbd(args);
  auto out = RunCommand(argv);
  if (!out.ok()) return out.status();
  if (out->exit.code != 0) return Status::Internal(JoinArgv(args) + ": " + out->exit.ToString());
  return Status::Ok();
}

}  // namespace

VmCeph VmCeph::FromEnv() {
  VmCeph c{Env("CEPH_CONF"),         Env("NBDK_CEPH_POOL"), Env("NBDK_CEPH_ID"), Env("NBDK_CEPH_KEY_FILE"), "",
           Env("NBDK_CEPH_MONITORS")};
  std::ifstream in(c.keyfile);
  in >> c.key;
  return c;
}

bool VmCeph::complete() const {
  return !conf.empty() && !pool.empty() && !user.empty() && !key.empty() && !monitors.empty();
}

std::vector<std::string> VmCeph::Rbd(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {"rbd", "-c", conf, "--id", user, "--keyfile", keyfile};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

Status CreateImage(const VmCeph& ceph, const std::string& image, int mib) {
  return RunRbd(ceph, {"create", "--size", std::to_string(mib), ceph.pool + "/" + image});
}

// A SIGKILLed rbd-nbd's watch stays on the image until the OSD times it out
// (30 s) unless a lock break blocklisted it: `rbd rm` refuses (EBUSY, exit
// 16) until then, so it is retried for a while.
Status RemoveImage(const VmCeph& ceph, const std::string& image) {
  std::vector<std::string> argv = ceph.Rbd({"rm", "--no-progress", ceph.pool + "/" + image});
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(45);
  while (true) {
    auto out = RunCommand(argv);
    if (!out.ok()) return out.status();
    if (out->exit.code == 0) return Status::Ok();
    if (out->exit.code != 16 || std::chrono::steady_clock::now() > give_up) {
      return Status::Internal("rbd rm " + image + ": " + out->exit.ToString());
    }
    std::this_thread::sleep_for(std::chrono::seconds(2));
  }
}

Status WriteCephCsiConfig(const std::string& path, const std::string& cluster_id, const VmCeph& ceph) {
  std::ofstream out(path);
  out << R"([{"clusterID": ")" << cluster_id << R"(", "monitors": [")" << ceph.monitors << R"("]}])" << '\n';
  out.close();
  return out ? Status::Ok() : Status::Internal("cannot write " + path);
}

csi::v1::NodeStageVolumeRequest StageRequest(const VmCeph& ceph, const std::string& cluster_id,
                                             const std::string& image, const std::string& staging_path) {
  csi::v1::NodeStageVolumeRequest req;
  req.set_volume_id(image);
  req.set_staging_target_path(staging_path);
  req.mutable_volume_capability()->mutable_mount()->set_fs_type("ext4");
  req.mutable_volume_capability()->mutable_access_mode()->set_mode(
      csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  (*req.mutable_secrets())["userID"] = ceph.user;
  (*req.mutable_secrets())["userKey"] = ceph.key;
  auto& ctx = *req.mutable_volume_context();
  ctx["staticVolume"] = "true";
  ctx["clusterID"] = cluster_id;
  ctx["pool"] = ceph.pool;
  ctx["mounter"] = "rbd-nbd";  // what a ceph-csi StorageClass for nbd sends
  return req;
}

Result<std::unique_ptr<Writer>> Writer::Start(const std::string& path, int interval_ms) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_DIRECT | O_DSYNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::FromErrno(errno, "open " + path);
  void* buf = nullptr;
  if (int rc = ::posix_memalign(&buf, 4096, 4096); rc != 0) {
    ::close(fd);
    return Status::FromErrno(rc, "posix_memalign");
  }
  std::unique_ptr<Writer> w(new Writer(fd, buf, interval_ms));
  w->thread_ = std::thread([raw = w.get()] { raw->Loop(); });
  return w;
}

Writer::~Writer() { Stop(); }

void Writer::Stop() {
  if (!thread_.joinable()) return;
  stop_ = true;
  thread_.join();
  ::close(fd_);
  ::free(buf_);
}

double Writer::blocked_s() const {
  return static_cast<double>(NanosOf(std::chrono::steady_clock::now()) - last_done_ns_) / 1e9;
}

void Writer::Loop() {
  last_done_ns_ = NanosOf(std::chrono::steady_clock::now());
  for (uint64_t i = 0; !stop_; ++i) {
    std::memset(buf_, static_cast<int>('a' + i % 26), 4096);
    auto t0 = std::chrono::steady_clock::now();
    ssize_t n = ::pwrite(fd_, buf_, 4096, static_cast<off_t>((i % 256) * 4096));
    auto t1 = std::chrono::steady_clock::now();
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(t1 - t0).count();
    last_done_ns_ = NanosOf(t1);
    longest_us_ = std::max<uint64_t>(longest_us_, static_cast<uint64_t>(us));
    if (n != 4096) {
      // The first few: a failed volume fails every write at once.
      if (errors_++ < 3) std::fprintf(stderr, "writer: pwrite returned %zd: %s\n", n, std::strerror(errno));
    }
    ++writes_;
    if (interval_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms_));
  }
}

Status VerifyWriterData(const std::string& path, uint64_t writes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, "open " + path);
  void* buf = nullptr;
  if (int rc = ::posix_memalign(&buf, 4096, 4096); rc != 0) {
    ::close(fd);
    return Status::FromErrno(rc, "posix_memalign");
  }
  Status result = Status::Ok();
  for (uint64_t block = 0; block < std::min<uint64_t>(writes, 256) && result.ok(); ++block) {
    uint64_t last = block + (writes - 1 - block) / 256 * 256;  // the last write i < writes with i % 256 == block
    char want = static_cast<char>('a' + last % 26);
    ssize_t n = ::pread(fd, buf, 4096, static_cast<off_t>(block * 4096));
    const char* got = static_cast<const char*>(buf);
    if (n != 4096) {
      result = Status::IoError(path + ": block " + std::to_string(block) + ": read returned " + std::to_string(n));
    } else if (std::count(got, got + 4096, want) != 4096) {
      result = Status::Corruption(path + ": block " + std::to_string(block) + " does not hold write " +
                                  std::to_string(last) + " ('" + want + "' x 4096)");
    }
  }
  ::free(buf);
  ::close(fd);
  return result;
}

std::optional<std::map<std::string, VolumeStatus>> GetVolumeStatuses(int health_port) {
  auto reply = test::HttpGet(health_port, "/status");
  rapidjson::Document doc;
  doc.Parse(reply.body.c_str());
  if (reply.status != 200 || doc.HasParseError() || !doc.IsObject() || !doc.HasMember("volumes") ||
      !doc["volumes"].IsArray()) {
    return std::nullopt;
  }
  auto str = [](const rapidjson::Value& v, const char* key) {
    return v.HasMember(key) && v[key].IsString() ? std::string(v[key].GetString()) : std::string();
  };
  std::map<std::string, VolumeStatus> out;
  for (const auto& v : doc["volumes"].GetArray()) {
    VolumeStatus& s = out[str(v, "volume_id")];
    s.state = str(v, "state");
    s.device = str(v, "device");
    s.journal_state = str(v, "journal_state");
    if (v.HasMember("seconds_in_state") && v["seconds_in_state"].IsNumber()) {
      s.seconds_in_state = v["seconds_in_state"].GetDouble();
    }
    if (v.HasMember("pid") && v["pid"].IsInt()) s.pid = v["pid"].GetInt();
    if (v.HasMember("restarts") && v["restarts"].IsUint64()) s.restarts = v["restarts"].GetUint64();
    if (v.HasMember("adopted") && v["adopted"].IsBool()) s.adopted = v["adopted"].GetBool();
  }
  return out;
}

std::optional<VolumeStatus> GetVolumeStatus(int health_port, const std::string& volume_id) {
  auto all = GetVolumeStatuses(health_port);
  if (!all) return std::nullopt;
  auto it = all->find(volume_id);
  if (it == all->end()) return std::nullopt;
  return it->second;
}

std::vector<pid_t> ProcessesOf(const std::string& program, const std::string& with_arg) {
  std::vector<pid_t> pids;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    pid_t pid = std::atoi(entry.path().filename().c_str());
    if (pid <= 0) continue;
    std::ifstream in(entry.path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::stringstream args(cmdline);
    std::string arg0, arg;
    std::getline(args, arg0, '\0');
    if (std::filesystem::path(arg0).filename() != program) continue;
    bool match = with_arg.empty();
    while (!match && std::getline(args, arg, '\0')) match = arg == with_arg;
    if (match) pids.push_back(pid);
  }
  return pids;
}

std::vector<pid_t> RbdNbdProcessesFor(const VmCeph& ceph, const std::string& image) {
  return ProcessesOf("rbd-nbd", ceph.pool + "/" + image);
}

bool IsMountPoint(const std::string& path) {
  // mountinfo: id parent major:minor root mount-point ...
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::stringstream fields(line);
    std::string id, parent, dev, root, mount_point;
    fields >> id >> parent >> dev >> root >> mount_point;
    if (mount_point == path) return true;
  }
  return false;
}

}  // namespace nbdk::vmtest
