// The VM test's process helpers, checked on the host so a VM run can only
// fail on what it is meant to test.
#include "test/common/vm_command.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/command.h"

namespace nbdk::vmtest {
namespace {

using std::chrono::milliseconds;

TEST(VmCommandTest, RunCommandCapturesStdoutAndExitCode) {
  auto out = RunCommand({"sh", "-c", "echo one; printf two; exit 3"});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->stdout_text, "one\ntwo");
  EXPECT_EQ(out->exit.code, 3);
}

TEST(VmCommandTest, StdinComesFromTheNamedFile) {
  char path[] = "/tmp/nbdk-stdin-XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "no newline", 10), 10);
  ::close(fd);
  auto out = RunCommand({"cat"}, false, path);
  ::unlink(path);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->stdout_text, "no newline");
  auto missing = RunCommand({"cat"}, false, path);
  EXPECT_FALSE(missing.ok() && missing->exit.code == 0) << "a missing stdin file is a failure";
}

TEST(VmCommandTest, MissingProgramIsAnError) {
  auto out = RunCommand({"/nonexistent/nbdk-no-such-program"});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), Code::kNotFound) << out.status().ToString();
}

TEST(VmCommandTest, ReadLineThenKillNine) {
  auto child = SpawnedChild::Spawn({"sh", "-c", "echo /dev/nbd3 cookie-1; exec sleep 30"});
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  auto line = child->ReadLine(milliseconds(5000));
  ASSERT_TRUE(line.ok()) << line.status().ToString();
  EXPECT_EQ(*line, "/dev/nbd3 cookie-1");
  auto none = child->ReadLine(milliseconds(50));
  EXPECT_EQ(none.status().code(), Code::kDeadlineExceeded);
  ASSERT_EQ(kill(child->pid(), SIGKILL), 0);
  auto exit = child->Wait(milliseconds(5000));
  ASSERT_TRUE(exit.ok()) << exit.status().ToString();
  EXPECT_EQ(exit->code, -SIGKILL);
  EXPECT_EQ(exit->ToString(), "killed by signal 9");
}

}  // namespace
}  // namespace nbdk::vmtest
