#include "base/command.h"

#include <signal.h>

#include <memory>
#include <string_view>

#include "base/child_process.h"
#include "base/uv_handle.h"

namespace nbdk {

std::string CommandResult::Describe() const {
  if (timed_out) return "timed out after the deadline";
  if (term_signal != 0) return "killed by signal " + std::to_string(term_signal);
  std::string out = "exit status " + std::to_string(exit_status);
  std::string_view err = stderr_text;
  while (!err.empty() && err.back() == '\n') err.remove_suffix(1);
  if (size_t nl = err.rfind('\n'); nl != std::string_view::npos) err.remove_prefix(nl + 1);
  if (!err.empty()) out += ": " + std::string(err);
  return out;
}

namespace {

// Appends a line, keeping only the last `cap` bytes.
void AppendCapped(std::string& text, std::string_view line, size_t cap) {
  if (!text.empty()) text += '\n';
  text += line;
  if (text.size() > cap) text.erase(0, text.size() - cap);
}

// One RunCommand in flight. Owns itself from Start() until `done` has run.
class RunningCommand {
 public:
  RunningCommand(EventLoop& loop, CommandOptions options, std::function<void(Result<CommandResult>)> done)
      : loop_(loop), options_(std::move(options)), done_(std::move(done)) {}

  static void Start(std::unique_ptr<RunningCommand> self, std::vector<std::string> argv) {
    RunningCommand* cmd = self.get();
    SpawnOptions spawn;
    spawn.argv = std::move(argv);
    spawn.env = cmd->options_.env;
    spawn.cwd = cmd->options_.cwd;
    spawn.stdin_data = cmd->options_.stdin_data;
    spawn.kill_signal_on_destroy = SIGKILL;
    auto child = ChildProcess::Spawn(
        cmd->loop_, std::move(spawn),
        [cmd](OutputStream stream, std::string_view line) {
          std::string& text = stream == OutputStream::kStdout ? cmd->result_.stdout_text : cmd->result_.stderr_text;
          AppendCapped(text, line, cmd->options_.output_cap_bytes);
        },
        [cmd](const ExitInfo& exit) { cmd->Finish(exit); });
    if (!child.ok()) {
      // Never call `done` from inside RunCommand.
      Status error = child.status();
      auto done = std::move(cmd->done_);
      cmd->loop_.Post([done = std::move(done), error] { done(error); });
      return;
    }
    cmd->child_ = std::move(child).value();
    if (cmd->options_.timeout_ms > 0) {
      cmd->timer_ = std::make_unique<Timer>(cmd->loop_);
      cmd->timer_->Start(cmd->options_.timeout_ms, 0, [cmd] {
        cmd->result_.timed_out = true;
        (void)cmd->child_->Kill(SIGKILL);
      });
    }
    cmd->self_ = std::move(self);
  }

 private:
  void Finish(const ExitInfo& exit) {
    std::unique_ptr<RunningCommand> self = std::move(self_);  // freed on return
    result_.exit_status = exit.exit_status;
    result_.term_signal = exit.term_signal;
    timer_.reset();
    auto done = std::move(done_);
    done(std::move(result_));
  }

  EventLoop& loop_;
  CommandOptions options_;
  std::function<void(Result<CommandResult>)> done_;
  CommandResult result_;
  std::unique_ptr<ChildProcess> child_;
  std::unique_ptr<Timer> timer_;
  std::unique_ptr<RunningCommand> self_;
};

}  // namespace

void RunCommand(EventLoop& loop, std::vector<std::string> argv, CommandOptions options,
                std::function<void(Result<CommandResult>)> done) {
  auto cmd = std::make_unique<RunningCommand>(loop, std::move(options), std::move(done));
  RunningCommand::Start(std::move(cmd), std::move(argv));
}

}  // namespace nbdk
