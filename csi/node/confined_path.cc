#include "csi/node/confined_path.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "base/quote_field.h"
#include "base/unique_fd.h"

namespace nbdk {
namespace {

struct Confined {
  UniqueFd parent;   // O_PATH descriptor of the leaf's directory
  std::string leaf;  // the last component
};

std::string Shown(const std::string& field, const std::string& path) { return field + " " + QuoteField(path); }

// openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS; -1 with errno ENOSYS
// on a kernel that lacks it.
int OpenBeneath2(int root_fd, const std::string& relative) {
  open_how how{};
  how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return static_cast<int>(::syscall(SYS_openat2, root_fd, relative.c_str(), &how, sizeof(how)));
}

// The same walk by hand: one O_PATH | O_NOFOLLOW open per component (the
// path is clean, so there is no ".." to climb out with).
int OpenBeneathByWalk(int root_fd, const std::string& relative) {
  UniqueFd dir(::fcntl(root_fd, F_DUPFD_CLOEXEC, 0));
  if (!dir.valid()) return -1;
  size_t start = 0;
  while (start < relative.size()) {
    size_t end = relative.find('/', start);
    if (end == std::string::npos) end = relative.size();
    std::string part = relative.substr(start, end - start);
    UniqueFd next(::openat(dir.get(), part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) {
      // A symlink opened with O_NOFOLLOW | O_DIRECTORY fails ENOTDIR; say ELOOP.
      struct stat st;
      if (errno == ENOTDIR && ::fstatat(dir.get(), part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISLNK(st.st_mode)) {
        errno = ELOOP;
      }
      return -1;
    }
    dir = std::move(next);
    start = end + 1;
  }
  return ::fcntl(dir.get(), F_DUPFD_CLOEXEC, 0);
}

bool IsBeneath(const std::string& root, const std::string& path) {
  return path.size() > root.size() + 1 && path.compare(0, root.size(), root) == 0 && path[root.size()] == '/';
}

Result<Confined> ConfineParent(const PathRoots& roots, const std::string& path, const std::string& field) {
  std::string root;
  for (const std::string& r : roots) {
    if (IsBeneath(r, path) && r.size() > root.size()) root = r;
  }
  if (root.empty()) {
    std::string list;
    for (const std::string& r : roots) list += (list.empty() ? "" : ", ") + r;
    return Status::InvalidArgument(Shown(field, path) + " is not beneath csi_root or a mount root (" + list + ")");
  }
  std::string relative = path.substr(root.size() + 1);
  size_t slash = relative.rfind('/');
  Confined out;
  out.leaf = slash == std::string::npos ? relative : relative.substr(slash + 1);
  std::string parent = slash == std::string::npos ? "." : relative.substr(0, slash);
  UniqueFd root_fd(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd.valid()) {
    return Status::FailedPrecondition("path root '" + root + "': " + Status::FromErrno(errno, "open").message());
  }
  int fd = OpenBeneath2(root_fd.get(), parent);
  if (fd < 0 && (errno == ENOSYS || errno == EPERM)) fd = OpenBeneathByWalk(root_fd.get(), parent);
  if (fd < 0) {
    int err = errno;
    if (err == ELOOP || err == EXDEV) {
      return Status::InvalidArgument(Shown(field, path) + " leads through a symbolic link or out of its root " + root);
    }
    if (err == ENOENT) return Status::NotFound(Shown(field, path) + ": its parent directory does not exist");
    if (err == ENOTDIR) return Status::FailedPrecondition(Shown(field, path) + ": a parent is not a directory");
    return Status::FromErrno(err, "resolve " + Shown(field, path));
  }
  out.parent = UniqueFd(fd);
  return out;
}

Result<PathKind> KindAt(const Confined& c, const std::string& path, const std::string& field) {
  struct stat st;
  if (::fstatat(c.parent.get(), c.leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return PathKind::kMissing;
    // The leaf is the root of a mounted filesystem that fails (an xfs shut
    // down after its device's IO errors): lstat never follows a symlink, so
    // this is a mount point, and unmounting it is exactly what is needed.
    if (errno == EIO) return PathKind::kDirectory;
    return Status::FromErrno(errno, "stat " + Shown(field, path));
  }
  if (S_ISLNK(st.st_mode)) return Status::InvalidArgument(Shown(field, path) + " is a symbolic link");
  return S_ISDIR(st.st_mode) ? PathKind::kDirectory : PathKind::kFile;
}

}  // namespace

Result<PathKind> InspectBeneath(const PathRoots& roots, const std::string& path, const std::string& field) {
  auto c = ConfineParent(roots, path, field);
  if (!c.ok() && c.status().code() == Code::kNotFound) return PathKind::kMissing;
  if (!c.ok()) return c.status();
  return KindAt(*c, path, field);
}

Result<bool> CreateMountPointBeneath(const PathRoots& roots, const std::string& path, bool block,
                                     const std::string& field) {
  auto c = ConfineParent(roots, path, field);
  if (!c.ok() && c.status().code() == Code::kNotFound) return Status::FailedPrecondition(c.status().message());
  if (!c.ok()) return c.status();
  auto kind = KindAt(*c, path, field);
  if (!kind.ok()) return kind.status();
  PathKind want = block ? PathKind::kFile : PathKind::kDirectory;
  if (*kind == want) return false;
  if (*kind != PathKind::kMissing) {
    return Status::FailedPrecondition(Shown(field, path) + " exists and is not " +
                                      (block ? "a file (a block volume's target)" : "a directory"));
  }
  if (block) {
    int fd = ::openat(c->parent.get(), c->leaf.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return Status::FromErrno(errno, "create " + Shown(field, path));
    ::close(fd);
  } else if (::mkdirat(c->parent.get(), c->leaf.c_str(), 0750) != 0) {
    return Status::FromErrno(errno, "mkdir " + Shown(field, path));
  }
  return true;
}

Status RemoveCreatedMountPoint(const PathRoots& roots, const std::string& path, const std::string& field) {
  auto c = ConfineParent(roots, path, field);
  if (!c.ok()) return c.status().code() == Code::kNotFound ? Status::Ok() : c.status();
  auto kind = KindAt(*c, path, field);
  if (!kind.ok()) return kind.status();
  if (*kind == PathKind::kMissing) return Status::Ok();
  int flags = *kind == PathKind::kDirectory ? AT_REMOVEDIR : 0;
  if (::unlinkat(c->parent.get(), c->leaf.c_str(), flags) != 0 && errno != ENOENT) {
    return Status::FromErrno(errno, "remove " + Shown(field, path));
  }
  return Status::Ok();
}

}  // namespace nbdk
