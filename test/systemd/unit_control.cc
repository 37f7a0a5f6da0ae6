#include "test/systemd/unit_control.h"

#include <fstream>
#include <sstream>
#include <thread>

#include "base/command.h"
#include "test/common/vm_command.h"

namespace nbdk::systemdtest {

using vmtest::JoinArgv;
using vmtest::RunCommand;

namespace {

Result<std::string> Run(const std::vector<std::string>& argv) {
  Result<vmtest::CommandOutput> out = RunCommand(argv, /*merge_stderr=*/false);
  if (!out.ok()) return out.status();
  if (out->exit.code != 0) {
    return Status::Internal(JoinArgv(argv) + ": " + out->exit.ToString() + ": " + out->stdout_text);
  }
  return std::move(out->stdout_text);
}

}  // namespace

Result<std::string> Systemctl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"systemctl"};
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv);
}

Result<std::map<std::string, std::string>> UnitProperties(const std::string& unit,
                                                          const std::vector<std::string>& names) {
  std::vector<std::string> args = {"show", unit};
  for (const std::string& n : names) args.insert(args.end(), {"-p", n});
  Result<std::string> text = Systemctl(args);
  if (!text.ok()) return text.status();
  std::map<std::string, std::string> props;
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    size_t eq = line.find('=');
    if (eq != std::string::npos) props[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return props;
}

Result<UnitState> StateOf(const std::string& unit) {
  auto props = UnitProperties(unit, {"MainPID", "ActiveState", "SubState"});
  if (!props.ok()) return props.status();
  UnitState s;
  s.main_pid = static_cast<pid_t>(std::stol((*props)["MainPID"].empty() ? "0" : (*props)["MainPID"]));
  s.active_state = (*props)["ActiveState"];
  s.sub_state = (*props)["SubState"];
  return s;
}

double WaitUntil(const std::function<bool()>& ready, std::chrono::milliseconds timeout) {
  auto start = std::chrono::steady_clock::now();
  while (!ready()) {
    if (std::chrono::steady_clock::now() - start > timeout) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string WaitForOneshot(const std::string& unit, std::chrono::milliseconds timeout) {
  std::string state;
  WaitUntil(
      [&] {
        auto s = StateOf(unit);
        state = s.ok() ? s->active_state : "";
        return state == "active" || state == "failed";
      },
      timeout);
  return state == "active" || state == "failed" ? state : "";
}

double WaitForNewMainPid(const std::string& unit, pid_t old_pid, std::chrono::milliseconds timeout) {
  return WaitUntil(
      [&] {
        Result<UnitState> s = StateOf(unit);
        return s.ok() && s->active_state == "active" && s->main_pid != 0 && s->main_pid != old_pid;
      },
      timeout);
}

std::string CgroupOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  }
  return "";
}

Result<std::string> MarkdownBlockAfter(const std::string& path, const std::string& marker) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read " + path);
  std::string line, block;
  bool seen_marker = false, in_block = false;
  while (std::getline(in, line)) {
    if (!seen_marker) {
      seen_marker = line == marker;
    } else if (!in_block) {
      in_block = line == "```sh";
    } else if (line == "```") {
      return block;
    } else {
      block += line + "\n";
    }
  }
  return Status::NotFound("no ```sh block after \"" + marker + "\" in " + path);
}

namespace {

Result<std::vector<std::string>> JournalLines(const std::vector<std::string>& argv) {
  Result<std::string> text = Run(argv);
  if (!text.ok()) return text.status();
  std::vector<std::string> entries;
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) entries.push_back(line);
  }
  return entries;
}

}  // namespace

Result<std::vector<std::string>> JournalJson(const std::string& unit) {
  return JournalLines({"journalctl", "-b", "-u", unit, "-o", "json", "--no-pager"});
}

Result<std::vector<std::string>> PreviousBootJournalJson(const std::vector<std::string>& matches) {
  std::vector<std::string> argv = {"journalctl", "-b", "-1", "-o", "json", "--no-pager"};
  argv.insert(argv.end(), matches.begin(), matches.end());
  return JournalLines(argv);
}

}  // namespace nbdk::systemdtest
