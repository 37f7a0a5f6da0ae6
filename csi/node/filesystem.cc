#include "csi/node/filesystem.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "base/command.h"
#include "base/join.h"
#include "base/quote_field.h"

namespace nbdk {
namespace {

constexpr uint64_t kQuickTimeoutMs = 60 * 1000;
constexpr uint64_t kMkfsTimeoutMs = 10 * 60 * 1000;

// Runs argv; OK on exit 0, else an error with the command and its stderr.
void Run(EventLoop& loop, std::vector<std::string> argv, uint64_t timeout_ms, StatusCallback done,
         std::function<bool(const CommandResult&)> also_ok = nullptr) {
  std::string what = argv[0] + (argv.size() > 1 ? " " + argv.back() : "");
  CommandOptions options;
  options.timeout_ms = timeout_ms;
  RunCommand(loop, std::move(argv), options,
             [what, done = std::move(done), also_ok = std::move(also_ok)](Result<CommandResult> r) {
               if (!r.ok()) return done(r.status().WithContext(what));
               if (r->ok() || (also_ok && also_ok(*r))) return done(Status::Ok());
               done(Status::Internal(what + ": " + r->Describe()));
             });
}

}  // namespace

std::string DeviceSignature::Describe() const {
  if (!type.empty()) return "a " + type + " signature";
  if (!partition_table.empty()) return "a " + partition_table + " partition table";
  return "nothing";
}

std::vector<std::string> MkfsArgv(const std::string& fs_type, const std::vector<std::string>& options,
                                  const std::string& device) {
  if (fs_type != "ext4" && fs_type != "xfs") return {};
  std::vector<std::string> argv = {"mkfs." + fs_type, "-q"};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back(device);
  return argv;
}

void MakeFilesystem(EventLoop& loop, const std::string& fs_type, const std::vector<std::string>& options,
                    const std::string& device, StatusCallback done) {
  std::vector<std::string> argv = MkfsArgv(fs_type, options, device);
  if (argv.empty()) {
    loop.Post([fs_type, done = std::move(done)] {
      done(Status::FailedPrecondition("filesystem type " + QuoteField(fs_type) + " is not supported (ext4, xfs)"));
    });
    return;
  }
  Run(loop, std::move(argv), kMkfsTimeoutMs, std::move(done));
}

std::vector<std::string> MountArgv(const std::string& fs_type, const std::string& device, const std::string& target,
                                   std::vector<std::string> options) {
  if (fs_type == "xfs") options.push_back("nouuid");
  options.push_back(kNetworkDeviceOption);
  return {"mount", "-t", fs_type, "-o", Join(options, ","), device, target};
}

void Mount(EventLoop& loop, const std::string& fs_type, const std::string& device, const std::string& target,
           std::vector<std::string> options, StatusCallback done) {
  Run(loop, MountArgv(fs_type, device, target, std::move(options)), kQuickTimeoutMs, std::move(done));
}

void BindMount(EventLoop& loop, const std::string& source, const std::string& target, bool read_only,
               std::vector<std::string> options, StatusCallback done) {
  options.push_back(kNetworkDeviceOption);
  std::vector<std::string> argv = {"mount", "--bind", "-o", Join(options, ","), source, target};
  if (!read_only) return Run(loop, std::move(argv), kQuickTimeoutMs, std::move(done));
  EventLoop* l = &loop;
  Run(loop, std::move(argv), kQuickTimeoutMs, [l, target, done = std::move(done)](Status s) {
    if (!s.ok()) return done(s);
    Run(*l, {"mount", "-o", std::string("remount,bind,ro,") + kNetworkDeviceOption, target}, kQuickTimeoutMs, done);
  });
}

void Unmount(EventLoop& loop, const std::string& target, StatusCallback done) {
  Run(loop, {"umount", target}, kQuickTimeoutMs, std::move(done), [](const CommandResult& r) {
    return r.stderr_text.find("not mounted") != std::string::npos ||
           r.stderr_text.find("no mount point specified") != std::string::npos ||
           r.stderr_text.find("No such file or directory") != std::string::npos;
  });
}

void GrowFilesystem(EventLoop& loop, const std::string& fs_type, const std::string& device,
                    const std::string& mount_point, StatusCallback done) {
  if (fs_type == "xfs") return Run(loop, {"xfs_growfs", mount_point}, kMkfsTimeoutMs, std::move(done));
  Run(loop, {"resize2fs", device}, kMkfsTimeoutMs, std::move(done));
}

Status CreateMountPoint(const std::string& path, bool block) {
  if (block) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return Status::FromErrno(errno, "create block mount point " + path);
    ::close(fd);
    return Status::Ok();
  }
  if (::mkdir(path.c_str(), 0750) != 0 && errno != EEXIST) return Status::FromErrno(errno, "mkdir " + path);
  return Status::Ok();
}

Status RemoveMountPoint(const std::string& path) {
  if (::remove(path.c_str()) != 0 && errno != ENOENT) return Status::FromErrno(errno, "remove " + path);
  return Status::Ok();
}

}  // namespace nbdk
