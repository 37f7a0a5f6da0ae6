// Benchmark (not a test; run in the test VM): what encryption costs a
// volume, side by side in one run with one daemon - a plain and an
// encrypted (LUKS2, KMS default) static ext4 volume of the same size:
//   first stage   - map, (format + mark + open), mkfs, mount;
//   second stage  - map, (open), mount: after an unstage;
//   kill -9       - the re-attach time and the longest write of an
//                   O_DIRECT|O_DSYNC writer around each kill, the kills
//                   alternating between the two volumes.
// Asserts nothing about time; exits non-zero on IO errors, lost data, a
// mapper left after the unstage, or broken setup.
//
//   vm-exec -- build/test/luks_bench [cycles] [size_mib]
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <vector>

#include "csi/proto/csi.grpc.pb.h"
#include "test/bench/bench_figures.h"
#include "test/common/daemon_process.h"
#include "test/common/vm_command.h"
#include "test/common/vm_volume.h"

namespace {

using nbdk::bench::Clock;
using nbdk::bench::Die;
using nbdk::bench::Max;
using nbdk::bench::Median;
using nbdk::bench::Secs;
using nbdk::vmtest::RunCommand;
using nbdk::vmtest::VmCeph;
using nbdk::vmtest::Writer;

constexpr char kRoot[] = "/run/nbdk-luks-bench";
constexpr char kSecret[] = "luks-bench-encryptionPassphrase";

struct Volume {
  std::string image;
  bool encrypted = false;
  double first_stage_s = 0, second_stage_s = 0;
  std::vector<double> reattach_s, stall_s;
};

csi::v1::NodeStageVolumeRequest Stage(const VmCeph& c, const Volume& v) {
  auto req = nbdk::vmtest::StageRequest(c, "bench", v.image, std::string(kRoot) + "/staging");
  if (v.encrypted) {
    (*req.mutable_volume_context())["encrypted"] = "true";
    (*req.mutable_secrets())["encryptionPassphrase"] = kSecret;
  }
  return req;
}

double TimedStage(csi::v1::Node::Stub& node, const VmCeph& c, const Volume& v, const std::string& log) {
  grpc::ClientContext ctx;
  csi::v1::NodeStageVolumeResponse resp;
  auto t0 = Clock::now();
  grpc::Status st = node.NodeStageVolume(&ctx, Stage(c, v), &resp);
  if (!st.ok()) Die("stage " + v.image + ": " + st.error_message() + "\n" + log);
  return Secs(Clock::now() - t0);
}

void Unstage(csi::v1::Node::Stub& node, const Volume& v) {
  csi::v1::NodeUnstageVolumeRequest req;
  req.set_volume_id(v.image);
  req.set_staging_target_path(std::string(kRoot) + "/staging");
  grpc::ClientContext ctx;
  csi::v1::NodeUnstageVolumeResponse resp;
  grpc::Status st = node.NodeUnstageVolume(&ctx, req, &resp);
  if (!st.ok()) Die("unstage " + v.image + ": " + st.error_message());
}

void KillOnce(nbdk::test::DaemonProcess& daemon, Volume& v, Writer& writer, uint64_t kills) {
  writer.ResetLongest();
  auto before = nbdk::vmtest::GetVolumeStatus(daemon.health_port(), v.image);
  if (!before || before->pid <= 0) Die("no pid in /status for " + v.image);
  auto t0 = Clock::now();
  ::kill(before->pid, SIGKILL);
  for (;;) {
    auto now = nbdk::vmtest::GetVolumeStatus(daemon.health_port(), v.image);
    if (now && now->restarts == kills && now->state == "Connected") break;
    if (Clock::now() - t0 > std::chrono::seconds(180)) Die("no re-attach in 180 s:\n" + daemon.Log());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  v.reattach_s.push_back(Secs(Clock::now() - t0));
  auto writes = writer.writes();
  while (writer.writes() < writes + 50 && Clock::now() - t0 < std::chrono::seconds(120)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  v.stall_s.push_back(writer.longest_s());
}

}  // namespace

int main(int argc, char** argv) {
  int cycles = argc > 1 ? std::atoi(argv[1]) : 5;
  int size_mib = argc > 2 ? std::atoi(argv[2]) : 1024;
  VmCeph c = VmCeph::FromEnv();
  if (!c.complete()) Die("run inside the test VM (CEPH_CONF, NBDK_CEPH_* unset)");
  std::filesystem::remove_all(kRoot);
  std::filesystem::create_directories(std::string(kRoot) + "/staging");
  if (auto st = nbdk::vmtest::WriteCephCsiConfig(std::string(kRoot) + "/config.json", "bench", c); !st.ok()) {
    Die(st.ToString());
  }
  std::vector<Volume> volumes = {{"bench-plain", false}, {"bench-luks", true}};
  for (const Volume& v : volumes) {
    if (auto st = nbdk::vmtest::CreateImage(c, v.image, size_mib); !st.ok()) Die(st.ToString());
  }
  // As ceph-csi's CreateVolume leaves an encrypted image.
  auto meta = RunCommand(
      c.Rbd({"image-meta", "set", c.pool + "/bench-luks", "rbd.csi.ceph.com/encrypted", "encryptionPrepared"}));
  if (!meta.ok() || meta->exit.code != 0) Die("rbd image-meta set");

  nbdk::test::DaemonProcess daemon(NBDKEEPERD_PATH, kRoot);
  if (!daemon.Start({"--ceph-csi-config=" + std::string(kRoot) + "/config.json", "--ceph-conf=" + c.conf,
                     "--key-dir=" + std::string(kRoot) + "/keys"})) {
    Die("daemon did not start:\n" + daemon.Log());
  }
  if (!daemon.WaitReady(60000)) Die("daemon not ready:\n" + daemon.Log());
  auto node = csi::v1::Node::NewStub(grpc::CreateChannel(daemon.endpoint(), grpc::InsecureChannelCredentials()));

  for (Volume& v : volumes) v.first_stage_s = TimedStage(*node, c, v, daemon.Log());
  for (Volume& v : volumes) Unstage(*node, v);
  for (Volume& v : volumes) v.second_stage_s = TimedStage(*node, c, v, daemon.Log());

  std::vector<std::unique_ptr<Writer>> writers;
  for (Volume& v : volumes) {
    auto w = Writer::Start(std::string(kRoot) + "/staging/" + v.image + "/data");
    if (!w.ok()) Die(w.status().ToString());
    writers.push_back(std::move(*w));
  }
  std::this_thread::sleep_for(std::chrono::seconds(2));
  for (int i = 1; i <= cycles; ++i) {
    for (size_t k = 0; k < volumes.size(); ++k) KillOnce(daemon, volumes[k], *writers[k], static_cast<uint64_t>(i));
  }
  uint64_t errors = 0;
  for (size_t k = 0; k < volumes.size(); ++k) {
    writers[k]->Stop();
    errors += writers[k]->errors();
    std::string data = std::string(kRoot) + "/staging/" + volumes[k].image + "/data";
    if (auto st = nbdk::vmtest::VerifyWriterData(data, writers[k]->writes()); !st.ok()) Die(st.ToString());
  }
  for (Volume& v : volumes) Unstage(*node, v);
  if (std::filesystem::exists("/dev/mapper/luks-rbd-bench-luks")) Die("the mapper is left after the unstage");
  daemon.Stop(SIGTERM);

  std::printf("luks_bench: %d MiB static ext4 volumes, KMS default, %d kill -9 cycles each (alternating)\n", size_mib,
              cycles);
  std::printf("%-10s %12s %13s %14s %14s %12s\n", "", "first stage", "second stage", "kill->attach", "stall median",
              "stall max");
  for (const Volume& v : volumes) {
    std::printf("%-10s %11.2fs %12.2fs %13.2fs %13.2fs %11.2fs\n", v.encrypted ? "encrypted" : "plain", v.first_stage_s,
                v.second_stage_s, Median(v.reattach_s), Median(v.stall_s), Max(v.stall_s));
  }
  std::printf(
      "first stage: map, format + mark + open (encrypted), mkfs, mount; second: map, open, mount.\n"
      "IO errors: %llu\n",
      static_cast<unsigned long long>(errors));
  return errors == 0 ? 0 : 1;
}
