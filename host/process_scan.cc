#include "host/process_scan.h"

#include <dirent.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <memory>
#include <sstream>

#include "base/kernel_file.h"

namespace nbdk {
namespace {

bool IsPid(const char* name) {
  if (*name == '\0') return false;
  for (const char* c = name; *c; ++c) {
    if (*c < '0' || *c > '9') return false;
  }
  return true;
}

// The real and effective uid from /proc/<pid>/status ("Uid:\tR\tE\tS\tF");
// left at -1 when the process is gone.
void ReadUids(const std::string& status_path, RbdNbdProcess* p) {
  auto status = ReadKernelFile(status_path);
  if (!status.ok()) return;
  std::istringstream in(*status);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("Uid:")) continue;
    std::istringstream fields(line.substr(4));
    int64_t real = -1, effective = -1;
    if (fields >> real >> effective) {
      p->uid = real;
      p->euid = effective;
    }
    return;
  }
}

std::string ReadLink(const std::string& path) {
  char buf[PATH_MAX];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof(buf));
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

}  // namespace

Status ForEachProcess(const std::string& proc_root, const ProcessVisitor& visit) {
  std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(proc_root.c_str()), ::closedir);
  if (!dir) return Status::FromErrno(errno, "list " + proc_root);
  while (const dirent* e = ::readdir(dir.get())) {
    if (IsPid(e->d_name)) visit(std::atoi(e->d_name), proc_root + "/" + e->d_name);
  }
  return Status::Ok();
}

std::vector<std::string> ParseCmdline(std::string_view raw) {
  std::vector<std::string> argv;
  while (!raw.empty()) {
    size_t nul = raw.find('\0');
    argv.emplace_back(raw.substr(0, nul));
    if (nul == std::string_view::npos) break;
    raw.remove_prefix(nul + 1);
  }
  return argv;
}

bool IsRbdNbdProgram(std::string_view argv0) {
  size_t slash = argv0.rfind('/');
  return (slash == std::string_view::npos ? argv0 : argv0.substr(slash + 1)) == "rbd-nbd";
}

Result<std::vector<RbdNbdProcess>> ScanRbdNbdProcesses(const std::string& proc_root) {
  std::vector<RbdNbdProcess> out;
  Status listed = ForEachProcess(proc_root, [&](int pid, const std::string& pid_dir) {
    auto raw = ReadKernelFile(pid_dir + "/cmdline");
    if (!raw.ok()) return;  // exited meanwhile, or unreadable: not a process we can judge
    std::vector<std::string> argv = ParseCmdline(*raw);
    if (argv.empty() || !IsRbdNbdProgram(argv[0])) return;
    RbdNbdProcess p{pid, std::move(argv), ReadLink(pid_dir + "/exe"), -1, -1};
    ReadUids(pid_dir + "/status", &p);
    out.push_back(std::move(p));
  });
  if (!listed.ok()) return listed;
  return out;
}

}  // namespace nbdk
