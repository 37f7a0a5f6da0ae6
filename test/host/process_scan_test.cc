// The process scan (host/process_scan.h) over a fake /proc.
#include "host/process_scan.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "test/host/fake_proc.h"

namespace nbdk {
namespace {

using namespace std::string_literals;

class ProcessScanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nbdk-process-scan-XXXXXX";
    dir_ = mkdtemp(tmpl);
    proc_root_ = dir_ + "/proc";
    std::filesystem::create_directories(proc_root_ + "/self");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Process(int pid, const std::string& cmdline) {
    WriteFakeProcess(proc_root_, pid, cmdline, "/usr/bin/rbd-nbd", uid_);
  }

  std::string dir_;
  std::string proc_root_;
  const int64_t uid_ = static_cast<int64_t>(::geteuid());
};

TEST_F(ProcessScanTest, TheWalkVisitsPidDirectoriesOnly) {
  Process(12, "a\0"s);
  Process(7, "b\0"s);
  std::filesystem::create_directories(proc_root_ + "/12a");
  std::vector<std::pair<int, std::string>> seen;
  ASSERT_TRUE(ForEachProcess(proc_root_, [&](int pid, const std::string& dir) { seen.emplace_back(pid, dir); }).ok());
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::pair<int, std::string>>{{7, proc_root_ + "/7"}, {12, proc_root_ + "/12"}}));
  EXPECT_EQ(ForEachProcess(dir_ + "/none", [](int, const std::string&) {}).code(), Code::kNotFound);
}

TEST(ParseCmdlineTest, SplitsOnNulAndKeepsEmptyArguments) {
  EXPECT_EQ(ParseCmdline("rbd-nbd\0map\0\0rbd/a\0"s), (std::vector<std::string>{"rbd-nbd", "map", "", "rbd/a"}));
  EXPECT_TRUE(ParseCmdline("").empty());  // a zombie or kernel thread
}

TEST(IsRbdNbdProgramTest, ProgramIsRbdNbdInAnyDirectory) {
  EXPECT_TRUE(IsRbdNbdProgram("rbd-nbd"));
  EXPECT_TRUE(IsRbdNbdProgram("/usr/bin/rbd-nbd"));
  EXPECT_FALSE(IsRbdNbdProgram("/usr/bin/rbd-nbd-wrapper"));
  EXPECT_FALSE(IsRbdNbdProgram("/opt/rbd-nbd/bin/rbd"));
  EXPECT_FALSE(IsRbdNbdProgram("rbd-nbd/"));
  EXPECT_FALSE(IsRbdNbdProgram(""));
}

TEST_F(ProcessScanTest, ScanFindsOnlyRbdNbdProcesses) {
  Process(12, "/usr/bin/rbd-nbd\0map\0-f\0rbd/a\0"s);
  Process(13, "/bin/sleep\0100\0"s);
  Process(14, ""s);
  auto found = ScanRbdNbdProcesses(proc_root_);
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  ASSERT_EQ(found->size(), 1u);
  EXPECT_EQ((*found)[0].pid, 12);
  EXPECT_EQ((*found)[0].argv.back(), "rbd/a");
  EXPECT_EQ((*found)[0].exe, "/usr/bin/rbd-nbd");
  EXPECT_EQ(ScanRbdNbdProcesses(dir_ + "/none").status().code(), Code::kNotFound);
}

// A process that exits while the heal reads /proc: its files open and then
// fail to read (ESRCH; here a directory where the file was, EISDIR). The
// scan passes over it, or keeps what it could read, and never throws: a
// libstdc++ stream's read error did, and that ended the daemon at start.
TEST_F(ProcessScanTest, ScanPassesOverProcessesWhoseFilesFailToRead) {
  Process(12, "/usr/bin/rbd-nbd\0map\0-f\0rbd/a\0"s);
  std::filesystem::create_directories(proc_root_ + "/13/cmdline");
  Process(14, "/usr/bin/rbd-nbd\0map\0-f\0rbd/b\0"s);
  std::filesystem::remove(proc_root_ + "/14/status");
  std::filesystem::create_directories(proc_root_ + "/14/status");
  auto found = ScanRbdNbdProcesses(proc_root_);
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  ASSERT_EQ(found->size(), 2u);
  std::sort(found->begin(), found->end(), [](const auto& a, const auto& b) { return a.pid < b.pid; });
  EXPECT_EQ((*found)[0].pid, 12);
  EXPECT_EQ((*found)[0].uid, uid_);
  EXPECT_EQ((*found)[1].pid, 14);
  EXPECT_EQ((*found)[1].uid, -1) << "an unreadable status proves no uid";
}

}  // namespace
}  // namespace nbdk
