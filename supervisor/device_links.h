// DeviceLinks: the stable names of mapped images, as a bare-metal operator
// scripts against them: <root>/POOL[/NAMESPACE]/IMAGE[@SNAP] -> /dev/nbdN
// (root /dev/nbdkeeper), like udev's /dev/rbd/POOL/IMAGE for krbd. An nbd
// device's number changes across maps and reboots; the name does not.
//
// The Supervisor reports every mapping's state (Supervisor::SetStateChanged);
// a link is placed when the mapping is Connected (after the map and after
// every re-attach or adoption, so one removed by hand comes back) and
// removed once it is Unmapped or Failed. Only a symlink this class would
// have written is ever replaced or removed: one pointing at the mapping's
// own device (removal) or any symlink (placement); a file or directory in
// its place is left alone and logged. Directories it made are removed
// once empty. The file work runs off the loop, one operation at a time, in
// the order the states came.
//
// Loop thread only.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>

#include "base/event_loop.h"
#include "base/status.h"
#include "supervisor/mapping_state.h"

namespace nbdk {

inline constexpr char kDeviceLinksRoot[] = "/dev/nbdkeeper";

// "<root>/rbd/ns/db" for image "rbd/ns/db". Pure.
std::string DeviceLinkPath(const std::string& root, const std::string& image);

// BLOCKING. Makes the link for `image` point at `device` (atomically: a
// new link renamed over the old one), creating its directories.
Status PlaceDeviceLink(const std::string& root, const std::string& image, const std::string& device);
// BLOCKING. Removes the link for `image` when it points at `device`, then
// its directories beneath `root` (and `root`) when empty. A missing link is OK.
Status RemoveDeviceLink(const std::string& root, const std::string& image, const std::string& device);

class DeviceLinks {
 public:
  // `root` "": no links are kept.
  DeviceLinks(EventLoop& loop, std::string root);
  ~DeviceLinks();
  DeviceLinks(const DeviceLinks&) = delete;
  DeviceLinks& operator=(const DeviceLinks&) = delete;

  // The mapping of volume `volume_id` of `image` on `device` entered `state`.
  void OnState(const std::string& volume_id, const std::string& image, const std::string& device, MappingState state);
  // The link placed for `volume_id` and not removed since; "" when none is
  // (yet): /status shows it, and `nbdkeeperctl map` returns once it is there.
  std::string LinkOf(const std::string& volume_id) const;

 private:
  void RunNext();

  struct Op {
    std::string volume_id;
    std::string image;
    std::string device;
    bool place;  // else remove
  };

  EventLoop& loop_;
  std::string root_;
  std::deque<Op> queue_;
  std::map<std::string, std::string> placed_;  // volume ID -> link
  bool running_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace nbdk
