#include "base/log_journal.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace nbdk {
namespace {

using Fields = std::vector<std::string>;

TEST(JournalFieldsTest, AnEventBecomesMessagePriorityAndOneFieldEach) {
  EXPECT_EQ(
      JournalFields(
          LogLevel::kWarn, "mapping_state",
          {{"volume", "pvc-1"}, {"from", "Connected"}, {"state", "Dead"}, {"reason", "rbd-nbd exited"}, {"pid", 0}},
          "nbdkeeperd"),
      (Fields{"MESSAGE=mapping_state volume=pvc-1 from=Connected state=Dead reason=\"rbd-nbd exited\" pid=0",
              "PRIORITY=4", "SYSLOG_IDENTIFIER=nbdkeeperd", "EVENT=mapping_state", "VOLUME=pvc-1", "FROM=Connected",
              "STATE=Dead", "REASON=rbd-nbd exited", "PID=0"}));
  EXPECT_EQ(JournalFields(LogLevel::kInfo, "ready", {}, "nbdkeeperd"),
            (Fields{"MESSAGE=ready", "PRIORITY=6", "SYSLOG_IDENTIFIER=nbdkeeperd", "EVENT=ready"}));
}

TEST(JournalFieldsTest, PriorityFollowsTheLevel) {
  auto priority = [](LogLevel level) { return JournalFields(level, "e", {}, "x")[1]; };
  EXPECT_EQ(priority(LogLevel::kDebug), "PRIORITY=7");
  EXPECT_EQ(priority(LogLevel::kInfo), "PRIORITY=6");
  EXPECT_EQ(priority(LogLevel::kWarn), "PRIORITY=4");
  EXPECT_EQ(priority(LogLevel::kError), "PRIORITY=3");
}

TEST(JournalFieldsTest, ValuesStayRawOnlyTheMessageIsQuoted) {
  Fields f = JournalFields(LogLevel::kError, "heal_failed", {{"error", "line one\nline \"two\""}}, "nbdkeeperd");
  ASSERT_EQ(f.size(), 5u);
  EXPECT_EQ(f[0], "MESSAGE=heal_failed error=\"line one\\nline \\\"two\\\"\"");
  EXPECT_EQ(f[4], "ERROR=line one\nline \"two\"") << "the native protocol carries newlines";
}

TEST(JournalFieldNameTest, UpperCaseAndOnlyLettersDigitsUnderscores) {
  EXPECT_EQ(JournalFieldName("volume"), "VOLUME");
  EXPECT_EQ(JournalFieldName("duration_ms"), "DURATION_MS");
  EXPECT_EQ(JournalFieldName("io.timeout-ms"), "IO_TIMEOUT_MS");
  EXPECT_EQ(JournalFieldName("rbd_nbd2"), "RBD_NBD2");
  EXPECT_EQ(JournalFieldName("caf\xc3\xa9"), "CAF__");
  EXPECT_EQ(JournalFieldName(std::string(100, 'k')), std::string(64, 'K')) << "journald's limit";
}

TEST(JournalFieldNameTest, NoFieldPosesAsJournalMetadata) {
  // Trusted fields start with '_'; a digit cannot start a name.
  EXPECT_EQ(JournalFieldName("_pid"), "NBDK__PID");
  EXPECT_EQ(JournalFieldName("9p"), "NBDK_9P");
  EXPECT_EQ(JournalFieldName(""), "NBDK_");
  // Written by the mapping itself, or read by journald or journalctl.
  for (const char* key : {"message", "priority", "event", "message_id", "errno", "unit", "invocation_id",
                          "syslog_identifier", "code_file", "object_pid", "coredump_unit"}) {
    std::string name = JournalFieldName(key);
    EXPECT_EQ(name.rfind("NBDK_", 0), 0u) << key << " -> " << name;
  }
  EXPECT_EQ(JournalFieldName("state"), "STATE");
  EXPECT_EQ(JournalFieldName("code"), "CODE") << "only CODE_* is journald's";
}

class JournalStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "/journal-stream-" + std::to_string(::getpid());
    fd_ = ::open(path_.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    ASSERT_GE(fd_, 0);
    struct stat st {};
    ASSERT_EQ(::fstat(fd_, &st), 0);
    dev_ = std::to_string(st.st_dev);
    ino_ = std::to_string(st.st_ino);
  }
  void TearDown() override {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  std::string path_, dev_, ino_;
  int fd_ = -1;
};

TEST_F(JournalStreamTest, MatchesOnlyTheFdItNames) {
  EXPECT_TRUE(IsJournalStream((dev_ + ":" + ino_).c_str(), fd_));
  EXPECT_FALSE(IsJournalStream((dev_ + ":" + ino_ + "1").c_str(), fd_)) << "another inode";
  EXPECT_FALSE(IsJournalStream(("1" + dev_ + ":" + ino_).c_str(), fd_)) << "another device";
  EXPECT_FALSE(IsJournalStream(nullptr, fd_)) << "not started by systemd";
  EXPECT_FALSE(IsJournalStream((dev_ + ":" + ino_).c_str(), -1)) << "no such fd";
}

TEST_F(JournalStreamTest, MalformedValuesNeverMatch) {
  for (const std::string& bad :
       std::vector<std::string>{"", ":", dev_, dev_ + ":", ":" + ino_, dev_ + ":" + ino_ + " ",
                                dev_ + ":" + ino_ + ":1", "-" + dev_ + ":" + ino_, dev_ + ":0x" + ino_}) {
    EXPECT_FALSE(IsJournalStream(bad.c_str(), fd_)) << "'" << bad << "'";
  }
}

}  // namespace
}  // namespace nbdk
