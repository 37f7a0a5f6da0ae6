// The key directory's rules and what a crash left in it (csi/key_file.h).
#include "csi/key_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <utime.h>

#include <filesystem>
#include <fstream>

namespace nbdk {
namespace {

namespace fs = std::filesystem;

class KeyFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nbdk-keys-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { fs::remove_all(root_); }
  void Plant(const std::string& dir, const std::string& name, std::time_t mtime) {
    std::ofstream(dir + "/" + name) << "AQD-key==\n";
    struct utimbuf t {
      mtime, mtime
    };
    ASSERT_EQ(::utime((dir + "/" + name).c_str(), &t), 0);
  }
  std::string root_;
};

TEST_F(KeyFileTest, TheKeyDirIsMadePrivateAndAnOpenOneIsRefusedUntouched) {
  std::string dir = root_ + "/keys";
  ASSERT_TRUE(CheckKeyDir(dir).ok());
  struct stat st {};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);

  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
  Status open = CheckKeyDir(dir);
  EXPECT_EQ(open.code(), Code::kFailedPrecondition);
  EXPECT_NE(open.message().find("is mode 0755"), std::string::npos) << open.ToString();
  EXPECT_EQ(WriteKeyFile(dir, "vol-1", "AQD-key==").status().code(), Code::kFailedPrecondition);
  EXPECT_FALSE(fs::exists(dir + "/vol-1.key")) << "no key is written where others can read it";
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u) << "changes nothing";

  fs::create_directory_symlink(root_, root_ + "/link");
  EXPECT_NE(CheckKeyDir(root_ + "/link").message().find("not a directory"), std::string::npos);
  std::ofstream(root_ + "/file") << "x";
  EXPECT_NE(CheckKeyDir(root_ + "/file").message().find("not a directory"), std::string::npos);
}

TEST_F(KeyFileTest, ACrashesKeysAreRemovedAndTheJournaledOnesAndCallsInFlightStay) {
  std::string dir = root_ + "/keys";
  ASSERT_TRUE(CheckKeyDir(dir).ok());
  std::time_t start = std::time(nullptr);
  Plant(dir, "vol-journaled.key", start - 100);
  Plant(dir, "vol-gone.key", start - 100);
  Plant(dir, ".create-1234.key", start - 100);  // a Controller call the crash cut short
  Plant(dir, ".create-5678.key", start + 1);    // one running since the start
  Plant(dir, "notes.txt", start - 100);
  auto removed = RemoveStaleKeyFiles(
      dir, [](std::string_view id) { return id == "vol-journaled"; }, start);
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  EXPECT_EQ(*removed, (std::vector<std::string>{".create-1234.key", "vol-gone.key"}));
  EXPECT_TRUE(fs::exists(dir + "/vol-journaled.key"));
  EXPECT_TRUE(fs::exists(dir + "/.create-5678.key"));
  EXPECT_TRUE(fs::exists(dir + "/notes.txt"));
  EXPECT_TRUE(RemoveStaleKeyFiles(
                  root_ + "/none", [](std::string_view) { return false; }, start)
                  ->empty());
}

}  // namespace
}  // namespace nbdk
