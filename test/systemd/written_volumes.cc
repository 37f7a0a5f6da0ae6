#include "test/systemd/written_volumes.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <thread>

#include "test/systemd/unit_control.h"

namespace nbdk::systemdtest {

using namespace std::chrono_literals;
using vmtest::GetVolumeStatus;
using vmtest::RbdNbdProcessesFor;
using vmtest::Writer;

void UnpublishAndUnstage(csi::v1::Node::Stub& node, const vmtest::VmCeph& ceph, const CsiVolume& v) {
  csi::v1::NodeUnpublishVolumeRequest unpublish;
  unpublish.set_volume_id(v.image);
  unpublish.set_target_path(v.TargetPath());
  csi::v1::NodeUnpublishVolumeResponse r1;
  grpc::ClientContext c1;
  grpc::Status s = node.NodeUnpublishVolume(&c1, unpublish, &r1);
  EXPECT_TRUE(s.ok()) << v.image << ": " << s.error_message();
  csi::v1::NodeUnstageVolumeRequest unstage;
  unstage.set_volume_id(v.image);
  unstage.set_staging_target_path(v.StagingPath());
  csi::v1::NodeUnstageVolumeResponse r2;
  grpc::ClientContext c2;
  s = node.NodeUnstageVolume(&c2, unstage, &r2);
  EXPECT_TRUE(s.ok()) << v.image << ": " << s.error_message();
  EXPECT_TRUE(RbdNbdProcessesFor(ceph, v.image).empty()) << v.image;
}

WrittenVolumes::WrittenVolumes(vmtest::VmCeph& ceph, int health_port, std::vector<const CsiVolume*> volumes)
    : ceph_(ceph), health_port_(health_port), volumes_(std::move(volumes)) {}

void WrittenVolumes::StageAndPublish(csi::v1::Node::Stub& node) {
  for (const CsiVolume* v : volumes_) {
    ASSERT_TRUE(vmtest::CreateImage(ceph_, v->image, 128).ok()) << v->image;
    // What kubelet creates before it calls the plugin.
    std::filesystem::create_directories(v->StagingPath());
    std::filesystem::create_directories(std::filesystem::path(v->TargetPath()).parent_path());
    csi::v1::NodeStageVolumeResponse staged;
    grpc::ClientContext c1;
    grpc::Status s = node.NodeStageVolume(&c1, v->StageRequest(ceph_), &staged);
    ASSERT_TRUE(s.ok()) << v->image << ": " << s.error_message();
    csi::v1::NodePublishVolumeResponse published;
    grpc::ClientContext c2;
    s = node.NodePublishVolume(&c2, v->PublishRequest(), &published);
    ASSERT_TRUE(s.ok()) << v->image << ": " << s.error_message();
    auto w = Writer::Start(v->DataPath());
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    writers_[v->image] = std::move(*w);
  }
  std::this_thread::sleep_for(2s);
  for (auto& [image, w] : writers_) EXPECT_GT(w->writes(), 0u) << image;
}

void WrittenVolumes::UnpublishAndUnstage(csi::v1::Node::Stub& node) {
  for (auto& [image, w] : writers_) w->Stop();
  for (const CsiVolume* v : volumes_) {
    systemdtest::UnpublishAndUnstage(node, ceph_, *v);
    EXPECT_TRUE(vmtest::RemoveImage(ceph_, v->image).ok()) << v->image;
  }
}

std::map<std::string, pid_t> WrittenVolumes::ServerPids() const {
  std::map<std::string, pid_t> pids;
  for (const CsiVolume* v : volumes_) {
    std::vector<pid_t> p = RbdNbdProcessesFor(ceph_, v->image);
    pids[v->image] = p.size() == 1 ? p[0] : 0;
  }
  return pids;
}

void WrittenVolumes::ResetWriters() {
  for (auto& [image, w] : writers_) w->ResetLongest();
}

double WrittenVolumes::LongestWrite() {
  double longest = 0;
  for (auto& [image, w] : writers_) longest = std::max(longest, w->longest_s());
  return longest;
}

void WrittenVolumes::ExpectWritersUnharmed(const std::string& step) {
  double waited = WaitUntil(
      [this] {
        for (auto& [image, w] : writers_) {
          if (w->blocked_s() > 0.5) return false;
        }
        return true;
      },
      120s);
  EXPECT_GE(waited, 0) << step << ": a writer is still blocked";
  for (auto& [image, w] : writers_) {
    EXPECT_EQ(w->errors(), 0u) << step << ": IO errors on " << image;
    std::printf("[ %s ] %s: longest write %.2f s, %llu writes so far, %llu errors\n", step.c_str(), image.c_str(),
                w->longest_s(), static_cast<unsigned long long>(w->writes()),
                static_cast<unsigned long long>(w->errors()));
  }
}

std::map<std::string, vmtest::VolumeStatus> WrittenVolumes::WaitConnected(std::chrono::milliseconds timeout) {
  std::map<std::string, vmtest::VolumeStatus> seen;
  WaitUntil(
      [&] {
        seen.clear();
        for (const CsiVolume* v : volumes_) {
          auto s = GetVolumeStatus(health_port_, v->image);
          if (!s || s->state != "Connected") return false;
          seen[v->image] = *s;
        }
        return true;
      },
      timeout);
  return seen;
}

void WrittenVolumes::ExpectAdopted(const std::map<std::string, pid_t>& before, const std::string& step) {
  auto status = WaitConnected(60s);
  ASSERT_EQ(status.size(), volumes_.size()) << step << ": not every volume Connected in /status";
  EXPECT_EQ(ServerPids(), before) << step << ": an rbd-nbd changed";
  for (const auto& [image, s] : status) {
    EXPECT_TRUE(s.adopted) << step << ": " << image << " not adopted";
    EXPECT_EQ(s.pid, before.at(image)) << step << ": " << image;
  }
}

}  // namespace nbdk::systemdtest
