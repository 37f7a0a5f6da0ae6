#include "supervisor/device_links.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>

#include "base/log.h"

namespace nbdk {
namespace {

// Each directory from `root` down to `dir`, made 0755 when missing; a
// symlink or a file on the way is refused (the link stays beneath root).
Status MakeDirectories(const std::string& root, const std::string& dir) {
  for (size_t end = root.size();;) {
    std::string part = dir.substr(0, end);
    if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) return Status::FromErrno(errno, "mkdir " + part);
    struct stat st;
    if (::lstat(part.c_str(), &st) != 0) return Status::FromErrno(errno, "lstat " + part);
    if (!S_ISDIR(st.st_mode)) return Status::FailedPrecondition(part + " is not a directory");
    if (end >= dir.size()) return Status::Ok();
    end = std::min(dir.find('/', end + 1), dir.size());
  }
}

std::string ReadLink(const std::string& path) {
  char buf[PATH_MAX];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof(buf) - 1);
  return n < 0 ? std::string() : std::string(buf, static_cast<size_t>(n));
}

}  // namespace

std::string DeviceLinkPath(const std::string& root, const std::string& image) { return root + "/" + image; }

Status PlaceDeviceLink(const std::string& root, const std::string& image, const std::string& device) {
  std::string link = DeviceLinkPath(root, image);
  std::string dir = link.substr(0, link.rfind('/'));
  NBDK_RETURN_IF_ERROR(MakeDirectories(root, dir));
  struct stat st;
  if (::lstat(link.c_str(), &st) == 0 && !S_ISLNK(st.st_mode)) {
    return Status::FailedPrecondition(link + " exists and is not a link: left alone");
  }
  if (ReadLink(link) == device) return Status::Ok();
  // '@' and '.' may be in an image name, but no name starts with '.'.
  std::string temporary = dir + "/.nbdkeeper-" + std::to_string(::getpid()) + ".tmp";
  (void)::unlink(temporary.c_str());
  if (::symlink(device.c_str(), temporary.c_str()) != 0) return Status::FromErrno(errno, "symlink " + temporary);
  if (::rename(temporary.c_str(), link.c_str()) != 0) {
    Status s = Status::FromErrno(errno, "rename to " + link);
    (void)::unlink(temporary.c_str());
    return s;
  }
  return Status::Ok();
}

Status RemoveDeviceLink(const std::string& root, const std::string& image, const std::string& device) {
  std::string link = DeviceLinkPath(root, image);
  if (ReadLink(link) != device) return Status::Ok();  // gone, or not ours (another map of the name since)
  if (::unlink(link.c_str()) != 0 && errno != ENOENT) return Status::FromErrno(errno, "unlink " + link);
  for (std::string dir = link.substr(0, link.rfind('/')); dir.size() >= root.size();
       dir = dir.substr(0, dir.rfind('/'))) {
    if (::rmdir(dir.c_str()) != 0) break;  // not empty (another image's link), or gone
  }
  return Status::Ok();
}

DeviceLinks::DeviceLinks(EventLoop& loop, std::string root) : loop_(loop), root_(std::move(root)) {}

DeviceLinks::~DeviceLinks() { *alive_ = false; }

void DeviceLinks::OnState(const std::string& volume_id, const std::string& image, const std::string& device,
                          MappingState state) {
  NBDK_CHECK_LOOP_THREAD(loop_);
  if (root_.empty() || device.empty()) return;
  bool place = state == MappingState::kConnected;
  if (!place && state != MappingState::kUnmapped && state != MappingState::kFailed) return;
  queue_.push_back(Op{volume_id, image, device, place});
  if (!running_) RunNext();
}

std::string DeviceLinks::LinkOf(const std::string& volume_id) const {
  auto it = placed_.find(volume_id);
  return it == placed_.end() ? "" : it->second;
}

void DeviceLinks::RunNext() {
  if (queue_.empty()) {
    running_ = false;
    return;
  }
  running_ = true;
  Op op = std::move(queue_.front());
  queue_.pop_front();
  std::weak_ptr<bool> alive = alive_;
  auto work = [root = root_, op] {
    return op.place ? PlaceDeviceLink(root, op.image, op.device) : RemoveDeviceLink(root, op.image, op.device);
  };
  RunBlockingStatus(loop_, std::move(work), [this, alive, op](Status s) {
    if (alive.expired()) return;
    const char* action = op.place ? "placed" : "removed";
    std::string link = DeviceLinkPath(root_, op.image);
    if (s.ok() && op.place) placed_[op.volume_id] = link;
    if (s.ok() && !op.place) placed_.erase(op.volume_id);
    if (s.ok()) {
      NBDK_LOG_INFO("device_link",
                    {{"volume", op.volume_id}, {"link", link}, {"device", op.device}, {"action", action}});
    } else {
      NBDK_LOG_WARN("device_link_failed",
                    {{"volume", op.volume_id}, {"link", link}, {"device", op.device}, {"error", s.message()}});
    }
    RunNext();
  });
}

}  // namespace nbdk
