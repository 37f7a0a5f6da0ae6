#include "test/csi/controller/ceph_csi_node_tools.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>

#include "test/common/vm_command.h"
#include "test/csi/vm_node.h"

namespace nbdk::vmtest {
namespace {

// stdout of `argv` run to its end; an error naming the command (argv holds
// no secret: they are in files) when it fails. Its stderr is in the VM log.
Result<std::string> Run(const std::vector<std::string>& argv, const std::string& stdin_path = "") {
  auto out = RunCommand(argv, false, stdin_path);
  if (!out.ok()) return out.status();
  if (out->exit.code != 0) return Status::Internal(JoinArgv(argv) + ": " + out->exit.ToString());
  return std::move(out->stdout_text);
}

Status RunOk(const std::vector<std::string>& argv, const std::string& stdin_path = "") {
  return Run(argv, stdin_path).status();
}

std::vector<std::string> Python(std::vector<std::string> args) {
  args.insert(args.begin(), {"/usr/bin/python3", CEPH_CSI_DEK_PY});
  return args;
}

std::string TrimNewline(std::string s) {
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

}  // namespace

ScratchDir::ScratchDir() {
  char dir[] = "/run/nbdk-enc-XXXXXX";
  if (::mkdtemp(dir) != nullptr) path_ = dir;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

std::string ScratchDir::WriteSecret(const std::string& name, const std::string& data) const {
  std::string path = path_ + "/" + name;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd >= 0) {
    bool whole = ::write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size());
    ::close(fd);
    if (whole) return path;
  }
  return "";
}

Status NewCephCsiPassphrase(const std::string& out) { return RunOk(Python({"passphrase", out})); }

Result<std::string> WrapWithPython(const std::string& secret_file, const std::string& volume_id,
                                   const std::string& passphrase_file) {
  auto json = Run(Python({"wrap", secret_file, volume_id, passphrase_file}));
  if (!json.ok()) return json.status();
  return TrimNewline(std::move(*json));
}

Status UnwrapWithPython(const std::string& secret_file, const std::string& volume_id, const std::string& json,
                        const std::string& out) {
  return RunOk(Python({"unwrap", secret_file, volume_id, json, out}));
}

Status SetImageMetaCli(const std::string& image, const std::string& key, const std::string& value) {
  return RunOk(Ceph().Rbd({"image-meta", "set", Ceph().pool + "/" + image, key, value}));
}

Result<std::string> GetImageMetaCli(const std::string& image, const std::string& key) {
  auto value = Run(Ceph().Rbd({"image-meta", "get", Ceph().pool + "/" + image, key}));
  if (!value.ok()) return value.status();
  return TrimNewline(std::move(*value));
}

Status CephCsiLuksFormat(const std::string& device, const std::string& passphrase_file) {
  return RunOk({"cryptsetup", "-q", "luksFormat", "--type", "luks2", "--hash", "sha256", "--pbkdf-memory", "32768",
                device, "-d", "/dev/stdin"},
               passphrase_file);
}

Result<std::string> LuksDumpCli(const std::string& device) { return Run({"cryptsetup", "luksDump", device}); }

Status CephCsiMkfsExt4(const std::string& device) {
  return RunOk({"mkfs.ext4", "-m0", "-Enodiscard,lazy_itable_init=1,lazy_journal_init=1", device});
}

// The first line of stdout is the device; the rbd-nbd daemon left behind
// might keep the pipe open, so the line is read, not the stream's end.
CliNbdMap::CliNbdMap(const std::string& image) {
  const std::vector<std::string> argv = Ceph().Rbd({"device", "map", "-t", "nbd", Ceph().pool + "/" + image});
  auto child = SpawnedChild::Spawn(argv);
  if (!child.ok()) {
    status_ = child.status();
    return;
  }
  auto line = child->ReadLine(std::chrono::minutes(2));
  auto exit = child->Wait(std::chrono::minutes(1));
  if (line.ok() && line->rfind("/dev/nbd", 0) == 0) device_ = *line;
  if (!line.ok()) {
    status_ = line.status();
  } else if (!exit.ok()) {
    status_ = exit.status();
  } else if (exit->code != 0 || device_.empty()) {
    status_ = Status::Internal(JoinArgv(argv) + ": " + exit->ToString() + ", printed '" + *line + "'");
  }
}

CliNbdMap::~CliNbdMap() {
  if (device_.rfind("/dev/nbd", 0) == 0) (void)RunOk(Ceph().Rbd({"device", "unmap", "-t", "nbd", device_}));
}

CliLuksMapper::CliLuksMapper(const std::string& device, const std::string& name, const std::string& passphrase_file)
    : status_(
          RunOk({"cryptsetup", "luksOpen", device, name, "--disable-keyring", "-d", "/dev/stdin"}, passphrase_file)),
      name_(name) {}

CliLuksMapper::~CliLuksMapper() {
  if (status_.ok()) (void)RunOk({"cryptsetup", "luksClose", name_});
}

Ext4Mount::Ext4Mount(const std::string& device, const std::string& dir, bool read_only) : dir_(dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (::mount(device.c_str(), dir.c_str(), "ext4", read_only ? MS_RDONLY : 0, nullptr) != 0) {
    status_ = Status::FromErrno(errno, "mount " + device + " at " + dir);
  }
}

Ext4Mount::~Ext4Mount() {
  if (status_.ok()) ::umount2(dir_.c_str(), 0);
}

}  // namespace nbdk::vmtest
