#include "base/child_process.h"

#include <gtest/gtest.h>

#include <csignal>
#include <string>
#include <vector>

#include "base/command.h"

namespace nbdk {
namespace {

struct Captured {
  std::vector<std::string> out;
  std::vector<std::string> err;
  std::optional<ExitInfo> exit;
};

Result<std::unique_ptr<ChildProcess>> SpawnShell(EventLoop& loop, const std::string& script, Captured& c,
                                                 SpawnOptions options = {}) {
  options.argv = {"/bin/sh", "-c", script};
  return ChildProcess::Spawn(
      loop, std::move(options),
      [&c](OutputStream s, std::string_view line) { (s == OutputStream::kStdout ? c.out : c.err).emplace_back(line); },
      [&c, &loop](const ExitInfo& e) {
        c.exit = e;
        loop.Stop();
      });
}

TEST(ChildProcessTest, DeliversLinesPerStreamThenExitStatus) {
  EventLoop loop;
  Captured c;
  auto child = SpawnShell(loop, "echo one; echo two >&2; printf 'three\\r\\nfour'; exit 3", c);
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  EXPECT_GT((*child)->pid(), 0);
  loop.Run();
  ASSERT_TRUE(c.exit.has_value());
  EXPECT_EQ(c.exit->exit_status, 3);
  EXPECT_EQ(c.exit->term_signal, 0);
  EXPECT_EQ(c.out, (std::vector<std::string>{"one", "three", "four"}));
  EXPECT_EQ(c.err, (std::vector<std::string>{"two"}));
  EXPECT_TRUE((*child)->exited());
  EXPECT_EQ((*child)->Kill(SIGTERM).code(), Code::kFailedPrecondition);
  child->reset();
  EXPECT_TRUE(loop.Shutdown().ok());
}

TEST(ChildProcessTest, KillReportsTermSignal) {
  EventLoop loop;
  Captured c;
  auto child = SpawnShell(loop, "echo ready; exec sleep 30", c);
  ASSERT_TRUE(child.ok());
  auto timer = std::make_unique<Timer>(loop);
  timer->Start(50, 0, [&] { EXPECT_TRUE((*child)->Kill(SIGKILL).ok()); });
  loop.Run();
  timer.reset();
  ASSERT_TRUE(c.exit.has_value());
  EXPECT_EQ(c.exit->term_signal, SIGKILL);
  EXPECT_EQ(c.out, std::vector<std::string>{"ready"});
  child->reset();
  EXPECT_TRUE(loop.Shutdown().ok());
}

TEST(ChildProcessTest, LongLinesAreSplit) {
  EventLoop loop;
  Captured c;
  SpawnOptions o;
  o.max_line_bytes = 10;
  auto child = SpawnShell(loop, "printf '0123456789abcdefghijXYZ\\n'", c, o);
  ASSERT_TRUE(child.ok());
  loop.Run();
  EXPECT_EQ(c.out, (std::vector<std::string>{"0123456789", "abcdefghij", "XYZ"}));
  child->reset();
  EXPECT_TRUE(loop.Shutdown().ok());
}

TEST(ChildProcessTest, ExitIsReportedWhenAGrandchildKeepsThePipeOpen) {
  EventLoop loop;
  Captured c;
  SpawnOptions o;
  o.exit_drain_ms = 50;
  // The background sleep inherits stdout and keeps it open for 2 s.
  auto child = SpawnShell(loop, "echo parent; sleep 2 & exit 0", c, o);
  ASSERT_TRUE(child.ok());
  uint64_t start = loop.NowMs();
  loop.Run();
  ASSERT_TRUE(c.exit.has_value());
  EXPECT_LT(loop.NowMs() - start, 1500u);
  EXPECT_EQ(c.out, std::vector<std::string>{"parent"});
  child->reset();
  EXPECT_TRUE(loop.Shutdown().ok());
}

TEST(ChildProcessTest, CallbackMayDestroyTheChild) {
  EventLoop loop;
  std::unique_ptr<ChildProcess> child;
  int lines = 0;
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", "echo a; echo b; echo c"};
  auto r = ChildProcess::Spawn(
      loop, o,
      [&](OutputStream, std::string_view) {
        ++lines;
        child.reset();
        loop.Stop();
      },
      [](const ExitInfo&) { ADD_FAILURE() << "exit after destruction"; });
  ASSERT_TRUE(r.ok());
  child = std::move(r).value();
  loop.Run();
  EXPECT_EQ(lines, 1);
  EXPECT_EQ(child, nullptr);
  EXPECT_TRUE(loop.Shutdown().ok());
}

TEST(ChildProcessTest, DestructionLeavesTheChildRunningUnlessAsked) {
  EventLoop loop;
  Captured c;
  auto child = SpawnShell(loop, "exec sleep 30", c);
  ASSERT_TRUE(child.ok());
  int pid = (*child)->pid();
  child->reset();
  EXPECT_EQ(kill(pid, 0), 0) << "closing the handle must not kill the child";
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);  // this specific pid: libuv forgot it
  EXPECT_TRUE(loop.Shutdown().ok());
}

TEST(ChildProcessTest, SpawnFailuresAreStatuses) {
  EventLoop loop;
  SpawnOptions o;
  EXPECT_EQ(ChildProcess::Spawn(loop, o, nullptr, nullptr).status().code(), Code::kInvalidArgument);
  o.argv = {"/nonexistent/program"};
  auto r = ChildProcess::Spawn(loop, o, nullptr, nullptr);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("/nonexistent/program"), std::string::npos) << r.status().ToString();
  EXPECT_TRUE(loop.Shutdown().ok());
}

TEST(RunCommandTest, CapturesOutputAndStdin) {
  EventLoop loop;
  std::optional<Result<CommandResult>> got;
  CommandOptions o;
  o.stdin_data = "hello\nworld\n";
  RunCommand(loop, {"/bin/sh", "-c", "cat; echo err >&2; exit 2"}, o, [&](Result<CommandResult> r) {
    got = std::move(r);
    loop.Stop();
  });
  loop.Run();
  ASSERT_TRUE(got && got->ok());
  EXPECT_EQ((*got)->stdout_text, "hello\nworld");
  EXPECT_EQ((*got)->exit_status, 2);
  EXPECT_FALSE((*got)->ok());
  EXPECT_EQ((*got)->Describe(), "exit status 2: err");
  EXPECT_TRUE(loop.Shutdown().ok());
}

TEST(RunCommandTest, OutputKeepsTheTail) {
  EventLoop loop;
  std::optional<Result<CommandResult>> got;
  CommandOptions o;
  o.output_cap_bytes = 8;
  RunCommand(loop, {"/bin/sh", "-c", "for i in 1 2 3 4 5 6 7 8 9; do echo line$i; done"}, o,
             [&](Result<CommandResult> r) {
               got = std::move(r);
               loop.Stop();
             });
  loop.Run();
  ASSERT_TRUE(got && got->ok());
  EXPECT_EQ((*got)->stdout_text, "e8\nline9");  // the last 8 bytes
  EXPECT_TRUE((*got)->ok());
  EXPECT_TRUE(loop.Shutdown().ok());
}

TEST(RunCommandTest, TimeoutKillsTheCommand) {
  EventLoop loop;
  std::optional<Result<CommandResult>> got;
  CommandOptions o;
  o.timeout_ms = 50;
  RunCommand(loop, {"/bin/sleep", "30"}, o, [&](Result<CommandResult> r) {
    got = std::move(r);
    loop.Stop();
  });
  loop.Run();
  ASSERT_TRUE(got && got->ok());
  EXPECT_TRUE((*got)->timed_out);
  EXPECT_EQ((*got)->term_signal, SIGKILL);
  EXPECT_FALSE((*got)->ok());
  EXPECT_TRUE(loop.Shutdown().ok());
}

TEST(RunCommandTest, SpawnFailureIsReportedLaterNotInline) {
  EventLoop loop;
  bool called = false;
  RunCommand(loop, {"/nonexistent/x"}, {}, [&](Result<CommandResult> r) {
    called = true;
    EXPECT_FALSE(r.ok());
    loop.Stop();
  });
  EXPECT_FALSE(called);
  loop.Run();
  EXPECT_TRUE(called);
  EXPECT_TRUE(loop.Shutdown().ok());
}

}  // namespace
}  // namespace nbdk
