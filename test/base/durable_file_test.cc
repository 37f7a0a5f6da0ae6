// ReplaceFileDurably and friends on the host's file system. What a power
// cut does to them is systemd_cold_boot's to show (nbdkeeperctl's persisted
// volumes survive it); here: contents, modes, errors, no leftovers.
#include "base/durable_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace nbdk {
namespace {

class DurableFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nbdk-durable-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  static bool Exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

  std::string dir_;
};

TEST_F(DurableFileTest, ReplacesTheWholeFileWithItsModeAndLeavesNoTemporary) {
  std::string path = dir_ + "/f.json";
  ASSERT_TRUE(ReplaceFileDurably(path, "first, longer text\n", 0600).ok());
  ASSERT_TRUE(ReplaceFileDurably(path, "second\n", 0600).ok());
  EXPECT_EQ(Read(path), "second\n");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_FALSE(Exists(path + ".tmp"));
}

TEST_F(DurableFileTest, AStaleTemporaryIsReplacedNotFollowed) {
  std::string path = dir_ + "/f";
  std::string elsewhere = dir_ + "/elsewhere";
  ASSERT_EQ(::symlink(elsewhere.c_str(), (path + ".tmp").c_str()), 0);
  ASSERT_TRUE(ReplaceFileDurably(path, "data", 0644).ok());
  EXPECT_EQ(Read(path), "data");
  EXPECT_FALSE(Exists(elsewhere)) << "the planted symlink was written through";
}

TEST_F(DurableFileTest, AFailedWriteNamesTheFileAndKeepsTheOldOne) {
  std::string path = dir_ + "/f";
  ASSERT_TRUE(ReplaceFileDurably(path, "old", 0600).ok());
  // A directory where the temporary would go: create fails.
  ASSERT_EQ(::mkdir((path + ".tmp").c_str(), 0700), 0);
  Status s = ReplaceFileDurably(path, "new", 0600);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(path + ".tmp"), std::string::npos) << s.ToString();
  EXPECT_EQ(Read(path), "old");
}

TEST_F(DurableFileTest, AMissingDirectoryIsAnError) {
  Status s = ReplaceFileDurably(dir_ + "/no/such/f", "x", 0600);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kNotFound) << s.ToString();
}

TEST_F(DurableFileTest, RemoveAndMakeDirectoryAreIdempotent) {
  std::string path = dir_ + "/f";
  ASSERT_TRUE(ReplaceFileDurably(path, "x", 0600).ok());
  EXPECT_TRUE(RemoveFileDurably(path).ok());
  EXPECT_FALSE(Exists(path));
  EXPECT_TRUE(RemoveFileDurably(path).ok()) << "a missing file is success";
  std::string sub = dir_ + "/sub";
  EXPECT_TRUE(MakeDirectoryDurably(sub, 0755).ok());
  EXPECT_TRUE(MakeDirectoryDurably(sub, 0755).ok()) << "an existing directory is success";
  Status s = MakeDirectoryDurably(dir_ + "/no/sub", 0755);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("mkdir " + dir_ + "/no/sub"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace nbdk
