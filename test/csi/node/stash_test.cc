#include "csi/node/stash.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "test/common/fifo_guard.h"

namespace nbdk {
namespace {

// What ceph-csi's json.Marshal writes for an rbd-nbd volume.
constexpr char kCephCsiStash[] =
    R"({"Version":3,"pool":"replicapool","radosNamespace":"ns1",)"
    R"("image":"csi-vol-b0a3c3d5-1d1a-4a9e-9a8f-2d7e0d9b7d51",)"
    R"("unmapOptions":"","accessType":true,"encrypted":false,"device":"/dev/nbd0","logDir":"/var/log/ceph",)"
    R"("logFileStrategy":"remove"})";

ImageMetaStash Sample(std::string device) {
  ImageMetaStash s;
  s.pool = "rbd";
  s.image = "csi-vol-1";
  s.rados_namespace = "tenant \"a\"";  // needs escaping
  s.unmap_options = "force";
  s.device = std::move(device);
  s.cluster_id = "rook-ceph";
  s.cookie = "0001-0009-rook-ceph-0000000000000002-b0a3c3d5-1d1a-4a9e-9a8f-2d7e0d9b7d51";
  return s;
}

class StashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nbdk-stash-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/image-meta.json";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Put(std::string_view content) { std::ofstream(path_, std::ios::binary) << content; }
  std::string Get() const {
    std::ifstream in(path_, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // Reading `content` fails with Corruption mentioning `mentions`, and
  // leaves the file exactly as it was.
  void ExpectCorrupt(std::string_view content, std::string_view mentions) {
    Put(content);
    auto r = ReadStash(dir_);
    ASSERT_FALSE(r.ok()) << content;
    EXPECT_EQ(r.status().code(), Code::kCorruption) << r.status().ToString();
    EXPECT_NE(r.status().message().find(path_), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find(mentions), std::string::npos)
        << "'" << r.status().message() << "' should mention '" << mentions << "'";
    EXPECT_EQ(Get(), content);
  }

  std::string dir_;
  std::string path_;
};

TEST_F(StashTest, PathIsInsideTheStagingDirectory) {
  EXPECT_EQ(StashPath("/st/vol"), "/st/vol/image-meta.json");
  EXPECT_EQ(StashPath("/st/vol/"), "/st/vol/image-meta.json");
}

TEST_F(StashTest, WriteThenReadRoundTrips) {
  ASSERT_TRUE(WriteStash(dir_, Sample("/dev/nbd3")).ok());
  auto r = ReadStash(dir_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, Sample("/dev/nbd3"));
  struct stat st;
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_FALSE(std::filesystem::exists(path_ + ".tmp"));
}

TEST_F(StashTest, WritesCephCsiKeyNames) {
  std::string json = EncodeStash(Sample("/dev/nbd0"));
  for (const char* key : {R"("Version":3)", R"("pool":"rbd")", R"("radosNamespace":)", R"("image":"csi-vol-1")",
                          R"("unmapOptions":"force")", R"("accessType":true)", R"("encrypted":false)",
                          R"("device":"/dev/nbd0")", R"("logDir":"")", R"("logFileStrategy":"")"}) {
    EXPECT_NE(json.find(key), std::string::npos) << key << " in " << json;
  }
}

TEST_F(StashTest, ReadsAFileCephCsiWrote) {
  Put(kCephCsiStash);
  auto r = ReadStash(dir_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->version, 3);
  EXPECT_EQ(r->pool, "replicapool");
  EXPECT_EQ(r->rados_namespace, "ns1");
  EXPECT_EQ(r->image, "csi-vol-b0a3c3d5-1d1a-4a9e-9a8f-2d7e0d9b7d51");
  EXPECT_TRUE(r->nbd_access);
  EXPECT_FALSE(r->encrypted);
  EXPECT_EQ(r->device, "/dev/nbd0");
  EXPECT_EQ(r->log_dir, "/var/log/ceph");
  EXPECT_EQ(r->log_file_strategy, "remove");
  EXPECT_EQ(r->cluster_id, "");
  EXPECT_EQ(r->cookie, "");
  EXPECT_EQ(Get(), kCephCsiStash);
}

TEST_F(StashTest, IgnoresUnknownKeysAndNulls) {
  Put(R"({"Version":4,"pool":"p","image":"i","device":null,"newCephCsiField":{"a":[1,2]}})");
  auto r = ReadStash(dir_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->version, 4);
  EXPECT_EQ(r->device, "");
}

TEST_F(StashTest, MissingStashIsNotFound) { EXPECT_EQ(ReadStash(dir_).status().code(), Code::kNotFound); }

TEST_F(StashTest, ZeroLengthFileIsCorruption) { ExpectCorrupt("", "empty file"); }

TEST_F(StashTest, TruncatedFileIsCorruption) {
  std::string full = kCephCsiStash;
  ExpectCorrupt(full.substr(0, full.size() / 2), "not valid JSON");
  ExpectCorrupt(full.substr(0, full.size() - 1), "not valid JSON");
}

TEST_F(StashTest, GarbageIsCorruption) {
  ExpectCorrupt(std::string("\x00\xff\x13garbage", 10), "not valid JSON");
  ExpectCorrupt("[1,2,3]", "top level is not a JSON object");
  ExpectCorrupt(std::string(kCephCsiStash) + "}", "not valid JSON");
}

TEST_F(StashTest, WrongTypesAreCorruptionNamingTheField) {
  ExpectCorrupt(R"({"Version":"3","pool":"p","image":"i"})", "field Version: expected an integer");
  ExpectCorrupt(R"({"Version":3.5,"pool":"p","image":"i"})", "field Version");
  ExpectCorrupt(R"({"pool":1,"image":"i"})", "field pool: expected a string");
  ExpectCorrupt(R"({"pool":"p","image":["i"]})", "field image: expected a string");
  ExpectCorrupt(R"({"pool":"p","image":"i","radosNamespace":false})", "field radosNamespace");
  ExpectCorrupt(R"({"pool":"p","image":"i","unmapOptions":{}})", "field unmapOptions");
  ExpectCorrupt(R"({"pool":"p","image":"i","accessType":"true"})", "field accessType: expected true or false");
  ExpectCorrupt(R"({"pool":"p","image":"i","encrypted":0})", "field encrypted");
  ExpectCorrupt(R"({"pool":"p","image":"i","device":7})", "field device");
  ExpectCorrupt(R"({"pool":"p","image":"i","logDir":7})", "field logDir");
  ExpectCorrupt(R"({"pool":"p","image":"i","logFileStrategy":7})", "field logFileStrategy");
  ExpectCorrupt(R"({"pool":"p","image":"i","clusterID":7})", "field clusterID");
  ExpectCorrupt(R"({"pool":"p","image":"i","cookie":7})", "field cookie");
}

TEST_F(StashTest, MissingPoolOrImageIsCorruption) {
  ExpectCorrupt(R"({"Version":3,"image":"i"})", "field pool: missing or empty");
  ExpectCorrupt(R"({"Version":3,"pool":"p","image":""})", "field image: missing or empty");
}

TEST_F(StashTest, RefusesSymlinkAndOversizedFile) {
  std::string target = dir_ + "/elsewhere.json";
  std::ofstream(target) << kCephCsiStash;
  ASSERT_EQ(::symlink(target.c_str(), path_.c_str()), 0);
  EXPECT_EQ(ReadStash(dir_).status().code(), Code::kCorruption);
  ::unlink(path_.c_str());
  ExpectCorrupt(std::string(70 * 1024, ' '), "larger than 64 KiB");
}

TEST_F(StashTest, FifoIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo(path_.c_str(), 0600), 0);
  Result<ImageMetaStash> read = Status::Internal("not read");
  ASSERT_TRUE(test::ReturnsDespiteFifo(path_, [&] { read = ReadStash(dir_); })) << "ReadStash blocked on a FIFO";
  EXPECT_EQ(read.status().code(), Code::kCorruption);
  EXPECT_NE(read.status().message().find(path_ + ": is a FIFO"), std::string::npos) << read.status().ToString();
}

TEST_F(StashTest, FailedWriteLeavesTheOldFileUntouched) {
  ASSERT_TRUE(WriteStash(dir_, Sample("/dev/nbd1")).ok());
  std::string before = Get();
  // A directory where the temp file goes makes the write fail.
  ASSERT_EQ(::mkdir((path_ + ".tmp").c_str(), 0700), 0);
  Status s = WriteStash(dir_, Sample("/dev/nbd2"));
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(Get(), before);
  EXPECT_EQ(ReadStash(dir_)->device, "/dev/nbd1");
}

TEST_F(StashTest, LeftoverTempFileFromACrashIsReplaced) {
  std::ofstream(path_ + ".tmp") << "{\"pool\":";  // a torn temp file
  ASSERT_TRUE(WriteStash(dir_, Sample("/dev/nbd5")).ok());
  EXPECT_EQ(ReadStash(dir_)->device, "/dev/nbd5");
  EXPECT_FALSE(std::filesystem::exists(path_ + ".tmp"));
}

TEST_F(StashTest, WriteReplacesAnExistingStash) {
  Put(kCephCsiStash);
  ASSERT_TRUE(WriteStash(dir_, Sample("/dev/nbd9")).ok());
  EXPECT_EQ(*ReadStash(dir_), Sample("/dev/nbd9"));
}

// Kills and reaps a forked writer when a failed assertion leaves the test.
struct WriterProcess {
  pid_t pid = -1;
  WriterProcess(const WriterProcess&) = delete;
  explicit WriterProcess(pid_t p) : pid(p) {}
  ~WriterProcess() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
  // SIGKILLs the writer; returns its wait status.
  int Kill() {
    int status = 0;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    pid = -1;
    return status;
  }
};

// A writer killed at random moments, while a reader keeps reading: every
// read and the final file are the old or the new stash, never a torn one.
TEST_F(StashTest, KilledWriterNeverLeavesATornFile) {
  ImageMetaStash a = Sample("/dev/nbd1");
  ImageMetaStash b = Sample("/dev/nbd2");
  b.log_dir = std::string(20000, 'x');  // a larger file: several pages
  unsigned seed = 42;
  for (int round = 0; round < 20; ++round) {
    ASSERT_TRUE(WriteStash(dir_, a).ok());
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      for (int i = 0;; ++i) {
        if (!WriteStash(dir_, i % 2 ? a : b).ok()) ::_exit(1);
      }
    }
    WriterProcess writer(pid);
    // Read until the writer has replaced the file at least once, then for
    // a random while longer, then kill it.
    bool seen_b = false;
    int extra_reads = static_cast<int>(rand_r(&seed) % 200);
    for (int reads = 0; reads < 100000 && (!seen_b || extra_reads-- > 0); ++reads) {
      auto r = ReadStash(dir_);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ASSERT_TRUE(*r == a || *r == b);
      seen_b = seen_b || *r == b;
    }
    EXPECT_TRUE(seen_b) << "the writer never completed a write";
    int status = writer.Kill();
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer failed before it was killed";
    auto r = ReadStash(dir_);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(*r == a || *r == b);
  }
}

TEST_F(StashTest, RemoveDeletesOnlyTheStashAndToleratesAbsence) {
  ASSERT_TRUE(WriteStash(dir_, Sample("/dev/nbd0")).ok());
  std::string other = dir_ + "/vol-1";
  ASSERT_EQ(::mkdir(other.c_str(), 0700), 0);
  EXPECT_TRUE(RemoveStash(dir_).ok());
  EXPECT_FALSE(std::filesystem::exists(path_));
  EXPECT_TRUE(std::filesystem::exists(other));
  EXPECT_TRUE(RemoveStash(dir_).ok());
}

}  // namespace
}  // namespace nbdk
