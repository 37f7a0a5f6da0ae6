// What needs CRUSH hosts, against real Ceph through the VM's nbdkeeperd:
// run under test/vm/with-crush-hosts.sh, which adds three OSDs to the plain
// VMs' native cluster, each a CRUSH host of its own (h1-h3), and their pools.
//  - an erasure-coded data pool, kept by snapshots, restores and clones;
//  - topology: NodeGetInfo's segments from the node's labels, CreateVolume
//    landing in the pool of topologyConstrainedPools the requested topology
//    matches (journal and image there, data in its EC data pool), a
//    restore held to its snapshot's pool, and the volume staged and used;
//  - read affinity: reads of a volume of a cluster whose config.json entry
//    enables it are served by the OSD on the node's CRUSH host (h2), and
//    without it by the objects' primaries.
#include <fcntl.h>
#include <rados/librados.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "csi/topology.h"
#include "test/csi/controller/storage_class_vm_fixture.h"

namespace nbdk::vmtest {
namespace {

using Code = grpc::StatusCode;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

// `rbd info POOL/IMAGE`'s data pool ("" when none).
std::string DataPoolOf(const std::string& pool, const std::string& image) {
  rapidjson::Document info = RbdJson({"info", pool + "/" + image});
  return info.IsObject() && info.HasMember("data_pool") ? info["data_pool"].GetString() : "";
}

// Client read ops each OSD served so far (its perf counter osd.op_r), read
// as client.admin: tell commands are beyond the test client's caps.
class OsdReads {
 public:
  OsdReads() {
    std::ifstream keyring("/etc/ceph/ceph.client.admin.keyring");
    std::string line, key;
    while (std::getline(keyring, line)) {
      if (auto at = line.find("key = "); at != std::string::npos) key = line.substr(at + 6);
    }
    keyfile_ = "/run/nbdk-test/admin.key";
    ::umask(077);
    std::ofstream(keyfile_) << key << "\n";
    auto cluster = RadosCluster::ConnectBlocking({Ceph().conf, {}, "admin", keyfile_, 30});
    if (cluster.ok()) cluster_ = *cluster;
  }
  bool ok() const { return cluster_ != nullptr; }

  int64_t Of(int osd) {
    const char* cmd[] = {R"({"prefix": "perf dump"})"};
    char *out = nullptr, *status = nullptr;
    size_t out_len = 0, status_len = 0;
    int rc = rados_osd_command(cluster_->handle(), osd, cmd, 1, "", 0, &out, &out_len, &status, &status_len);
    std::string text(out == nullptr ? "" : std::string(out, out_len));
    rados_buffer_free(out);
    rados_buffer_free(status);
    if (rc != 0) return -1;
    rapidjson::Document doc;
    doc.Parse(text.c_str());
    if (!doc.IsObject() || !doc.HasMember("osd") || !doc["osd"].HasMember("op_r")) return -1;
    return doc["osd"]["op_r"].GetInt64();
  }

 private:
  std::string keyfile_;
  std::shared_ptr<RadosCluster> cluster_;
};

// The hosts' OSDs, from NBDK_CEPH_CRUSH_HOSTS ("h1=3,h2=4,h3=5").
std::map<std::string, int> CrushHosts() {
  std::map<std::string, int> out;
  std::stringstream list(Env("NBDK_CEPH_CRUSH_HOSTS"));
  std::string pair;
  while (std::getline(list, pair, ',')) {
    auto eq = pair.find('=');
    if (eq != std::string::npos) out[pair.substr(0, eq)] = std::stoi(pair.substr(eq + 1));
  }
  return out;
}

std::string Cmdline(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : text) c = c == '\0' ? ' ' : c;
  return text;
}

// `bytes` through the page cache's back (O_DIRECT), in 1 MiB requests.
bool DirectIo(const std::string& device, int64_t bytes, bool write) {
  int fd = ::open(device.c_str(), (write ? O_WRONLY : O_RDONLY) | O_DIRECT | O_CLOEXEC);
  if (fd < 0) return false;
  void* buf = nullptr;
  if (::posix_memalign(&buf, 4096, kMiB) != 0) return false;
  std::memset(buf, 'r', kMiB);
  bool ok = true;
  for (int64_t off = 0; ok && off < bytes; off += kMiB) {
    ok = (write ? ::pwrite(fd, buf, kMiB, off) : ::pread(fd, buf, kMiB, off)) == kMiB;
  }
  if (write) ok = ok && ::fsync(fd) == 0;
  std::free(buf);
  ::close(fd);
  return ok;
}

class CrushHostsVmTest : public StorageClassVmTest {
 protected:
  void SetUp() override {
    StorageClassVmTest::SetUp();
    if (Env("NBDK_CEPH_AFFINE_POOL").empty()) GTEST_FAIL() << "run under test/vm/with-crush-hosts.sh";
  }

  TopologySegments NodeSegments() {
    grpc::ClientContext ctx;
    csi::v1::NodeGetInfoResponse info;
    EXPECT_GRPC_OK(Node()->NodeGetInfo(&ctx, {}, &info));
    const auto& s = info.accessible_topology().segments();
    return {s.begin(), s.end()};
  }

  static csi::v1::Topology TopologyOf(const TopologySegments& segments) {
    csi::v1::Topology t;
    for (const auto& [k, v] : segments) (*t.mutable_segments())[k] = v;
    return t;
  }

  // A block stage of `created`, with the volume context CreateVolume gave.
  csi::v1::NodeStageVolumeRequest BlockStageAsCreated(const csi::v1::CreateVolumeResponse& created) {
    csi::v1::NodeStageVolumeRequest stage = StageAsCreated(created);
    *stage.mutable_volume_capability() = BlockCap();
    return stage;
  }
};

TEST_F(CrushHostsVmTest, ErasureCodedDataPoolIsKeptBySnapshotsRestoresAndClones) {
  ExpectDataPoolKept(Env("NBDK_CEPH_EC_DATA_POOL"), "ec");
}

TEST_F(CrushHostsVmTest, NodeGetInfoReportsTheSegmentsOfTheNodesDomainLabels) {
  grpc::ClientContext ctx;
  csi::v1::GetPluginInfoResponse plugin;
  ASSERT_GRPC_OK(
      csi::v1::Identity::NewStub(grpc::CreateChannel(Daemon().endpoint(), grpc::InsecureChannelCredentials()))
          ->GetPluginInfo(&ctx, {}, &plugin));
  const std::string prefix = "topology." + plugin.name() + "/";
  EXPECT_EQ(NodeSegments(), (TopologySegments{{prefix + "region", "east"}, {prefix + "zone", "z1"}}));
}

TEST_F(CrushHostsVmTest, CreateVolumeLandsInThePoolOfTheRequestedTopology) {
  const std::string name = "pvc-topo-" + std::to_string(::getpid());
  const std::string east = "topo-east", west = "topo-west", ec = Env("NBDK_CEPH_EC_DATA_POOL");
  const std::string pools =
      R"([{"poolName": "topo-west", "domainSegments": [{"domainLabel": "region", "value": "west"}]},)"
      R"( {"poolName": "topo-east", "dataPool": ")" +
      ec +
      R"(", "domainSegments": [{"domainLabel": "region", "value": "east"}, {"domainLabel": "zone", "value": "z1"}]}])";
  const TopologySegments here = NodeSegments();
  ASSERT_FALSE(here.empty());
  TopologySegments elsewhere;
  for (const auto& [k, v] : here) elsewhere[k] = k.ends_with("/region") ? "west" : v;

  // The node's topology is preferred; the west one is also allowed.
  csi::v1::CreateVolumeRequest req = CreateRequest(name, 64 * kMiB, {{"topologyConstrainedPools", pools}});
  *req.mutable_accessibility_requirements()->add_requisite() = TopologyOf(elsewhere);
  *req.mutable_accessibility_requirements()->add_requisite() = TopologyOf(here);
  *req.mutable_accessibility_requirements()->add_preferred() = TopologyOf(here);
  csi::v1::CreateVolumeResponse created;
  ASSERT_GRPC_OK(Create(req, &created));
  const auto& ctx = created.volume().volume_context();
  EXPECT_EQ(ctx.at("pool"), east);
  EXPECT_EQ(ctx.at("journalPool"), east);
  EXPECT_EQ(ctx.at("dataPool"), ec);
  ASSERT_EQ(created.volume().accessible_topology_size(), 1);
  const auto& got = created.volume().accessible_topology(0).segments();
  EXPECT_EQ(TopologySegments(got.begin(), got.end()), here);
  const std::string image = ImageOf(created);
  EXPECT_EQ(DataPoolOf(east, image), ec);
  // ceph-csi's journal in the chosen pool, and the volume ID naming it.
  auto cluster = RadosCluster::ConnectBlocking({Ceph().conf, {}, Ceph().user, Ceph().keyfile, 30});
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  auto east_io = IoCtx::Open(*cluster, east, "");
  ASSERT_TRUE(east_io.ok()) << east_io.status().ToString();
  auto directory = AllOmap(*east_io, "csi.volumes.default");
  ASSERT_TRUE(directory);
  EXPECT_TRUE(directory->contains("csi.volume." + name));
  auto id = DecodeVolumeId(created.volume().volume_id());
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(id->pool_id, *(*cluster)->PoolId(east));

  // Staged and used on the node: its data goes to the EC pool through rbd-nbd.
  const std::string volume_id = created.volume().volume_id();
  ASSERT_GRPC_OK(Stage(StageAsCreated(created)));
  const std::string target = TargetPath(volume_id, 0);
  ASSERT_GRPC_OK(Publish(volume_id, target, MountCap("ext4")));
  const std::string data(1 << 20, 't');
  { std::ofstream(target + "/data") << data; }
  ASSERT_EQ(::system(("sync -f " + target + "/data").c_str()), 0);
  {
    std::ifstream back(target + "/data");  // closed before the unmount
    EXPECT_EQ(std::string((std::istreambuf_iterator<char>(back)), std::istreambuf_iterator<char>()), data);
  }
  const std::string prefix = RbdJson({"info", east + "/" + image})["block_name_prefix"].GetString();
  auto in_ec = RadosLs(ec);
  EXPECT_TRUE(std::any_of(in_ec.begin(), in_ec.end(), [&](const std::string& o) { return o.starts_with(prefix); }));
  ASSERT_GRPC_OK(Unpublish(volume_id, target));
  ASSERT_GRPC_OK(Unstage(volume_id));

  // Only the west topology: the west pool, without a data pool.
  csi::v1::CreateVolumeRequest west_req = CreateRequest(name + "-w", 64 * kMiB, {{"topologyConstrainedPools", pools}});
  *west_req.mutable_accessibility_requirements()->add_requisite() = TopologyOf(elsewhere);
  csi::v1::CreateVolumeResponse in_west;
  ASSERT_GRPC_OK(Create(west_req, &in_west));
  EXPECT_EQ(in_west.volume().volume_context().at("pool"), west);
  EXPECT_FALSE(in_west.volume().volume_context().contains("dataPool"));

  // No listed pool in the topology asked for.
  csi::v1::CreateVolumeRequest nowhere = CreateRequest(name + "-n", 64 * kMiB, {{"topologyConstrainedPools", pools}});
  *nowhere.mutable_accessibility_requirements()->add_requisite() =
      TopologyOf({{"topology.rbd.nbdkeeper.io/region", "north"}});
  csi::v1::CreateVolumeResponse refused;
  EXPECT_EQ(Create(nowhere, &refused).error_code(), Code::RESOURCE_EXHAUSTED);

  // A restore stays in its snapshot's pool: east matches, west does not.
  std::string snapshot_id;
  ASSERT_GRPC_OK(Snapshot(name + "-snap", volume_id, &snapshot_id));
  csi::v1::CreateVolumeRequest restore = west_req;
  restore.set_name(name + "-r");
  restore.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id(snapshot_id);
  EXPECT_EQ(Create(restore, &refused).error_code(), Code::RESOURCE_EXHAUSTED);
  *restore.mutable_accessibility_requirements()->add_requisite() = TopologyOf(here);
  csi::v1::CreateVolumeResponse restored;
  ASSERT_GRPC_OK(Create(restore, &restored));
  EXPECT_EQ(restored.volume().volume_context().at("pool"), east);
  EXPECT_EQ(DataPoolOf(east, ImageOf(restored)), ec);

  ASSERT_GRPC_OK(Delete(restored.volume().volume_id()));
  ASSERT_GRPC_OK(DeleteSnapshot(snapshot_id));
  ASSERT_GRPC_OK(Delete(in_west.volume().volume_id()));
  ASSERT_GRPC_OK(Delete(volume_id));
}

// Reads of 64 MiB (16 objects) of a staged block volume, with O_DIRECT:
// the client read ops each host's OSD served meanwhile, by host. The volume
// is written whole first, 128 MiB past what is read: a replica sends a read
// back to the primary (EAGAIN) while an object's last write may not be on
// every replica's disk yet, and learns that it is with the next write to
// its placement group; the later writes are those for the 16 objects read.
class ReadAffinityVmTest : public CrushHostsVmTest {
 protected:
  std::map<std::string, int64_t> ReadsByHost(const std::string& cluster_id, const std::string& name,
                                             std::string* cmdline) {
    std::map<std::string, int64_t> out;
    const std::string pool = Env("NBDK_CEPH_AFFINE_POOL");
    csi::v1::CreateVolumeRequest req = CreateRequest(name, 192 * kMiB, {});
    (*req.mutable_parameters())["clusterID"] = cluster_id;
    (*req.mutable_parameters())["pool"] = pool;
    csi::v1::CreateVolumeResponse created;
    EXPECT_GRPC_OK(Create(req, &created));
    const std::string volume_id = created.volume().volume_id();
    EXPECT_GRPC_OK(Stage(BlockStageAsCreated(created)));
    const std::string device = StatusField(volume_id, "device");
    *cmdline = Cmdline(std::stoi("0" + StatusField(volume_id, "pid")));
    EXPECT_TRUE(DirectIo(device, 192 * kMiB, true)) << device;
    OsdReads reads;
    EXPECT_TRUE(reads.ok());
    std::map<std::string, int64_t> before;
    for (const auto& [host, osd] : CrushHosts()) before[host] = reads.Of(osd);
    EXPECT_TRUE(DirectIo(device, 64 * kMiB, false)) << device;
    for (const auto& [host, osd] : CrushHosts()) out[host] = reads.Of(osd) - before[host];
    EXPECT_GRPC_OK(Unstage(volume_id));
    EXPECT_GRPC_OK(Delete(volume_id));
    return out;
  }
};

TEST_F(ReadAffinityVmTest, ReadsGoToTheOsdOnTheNodesCrushHost) {
  const std::string name = "pvc-affine-" + std::to_string(::getpid());
  std::string cmdline;
  // "test-affine": config.json's readAffinity, located by the node's
  // kubernetes.io/hostname label, h2 (test/csi/node_vm_fixture.h).
  auto localized = ReadsByHost("test-affine", name, &cmdline);
  EXPECT_NE(cmdline.find("--rbd_read_from_replica_policy=localize"), std::string::npos) << cmdline;
  EXPECT_NE(cmdline.find("--crush_location=host=h2"), std::string::npos) << cmdline;
  std::printf("reads by host, read affinity on h2: h1 %lld, h2 %lld, h3 %lld\n",
              static_cast<long long>(localized["h1"]), static_cast<long long>(localized["h2"]),
              static_cast<long long>(localized["h3"]));
  // Each object read at least once, and nearly all on h2: a placement
  // group whose last write no later write followed may still bounce an
  // object's reads to its primary (a run with the VM alone on the machine
  // saw h1 32, h2 479, h3 3: 93%, one object bounced). Without read
  // affinity h2 serves about a fifth (below).
  const int64_t total = localized["h1"] + localized["h2"] + localized["h3"];
  EXPECT_GE(localized["h2"], 16);
  EXPECT_GE(localized["h2"] * 100, total * 90) << "under 90% of the reads on the node's host";

  // The same pool through a cluster entry without it: the primaries serve.
  auto primaries = ReadsByHost("test", name + "-p", &cmdline);
  EXPECT_EQ(cmdline.find("crush_location"), std::string::npos) << cmdline;
  std::printf("reads by host, no read affinity: h1 %lld, h2 %lld, h3 %lld\n", static_cast<long long>(primaries["h1"]),
              static_cast<long long>(primaries["h2"]), static_cast<long long>(primaries["h3"]));
  EXPECT_GT(primaries["h1"] + primaries["h3"], 0) << "16 objects' primaries, all on h2?";
}

}  // namespace
}  // namespace nbdk::vmtest
