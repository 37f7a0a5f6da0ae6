// Mapping's starts after a daemon restart, as the healer decides them
// (csi/heal/heal_plan.h): adopt a server still running, re-attach a device
// whose server is gone, or take over a device the kernel gave up on.
#include "supervisor/mapping.h"

namespace nbdk {

Status Mapping::StartAdopted(const std::string& device, int pid) {
  device_ = device;
  ++env_.stats.counters.adoptions;
  auto watch = PidfdWatch::Open(env_.loop, pid, [this] { OnProcessGone(std::nullopt); });
  if (!watch.ok() && watch.status().code() == Code::kNotFound) {
    OnDeath("adopted pid " + std::to_string(pid) + " no longer exists");
    return Status::Ok();
  }
  if (!watch.ok()) {
    Transition(MappingState::kFailed, "cannot watch adopted pid: " + watch.status().message());
    env_.on_final(request_.volume_id);
    return watch.status();
  }
  adopted_ = std::move(watch).value();
  ++server_generation_;
  FindAdoptedScope(pid);
  Transition(MappingState::kConnected, "adopted pid " + std::to_string(pid));
  if (!TracksClients()) return Status::Ok();
  if (server_clients_pending_) {
    IdentifyOwnClients(before_start_, false, [](Result<StartedClients>) {});
  } else if (own_clients_.empty() && Fenceable()) {
    // A record from before clients were journaled: while a single-node
    // server of ours runs, the one client of its image on this host is.
    IdentifyOwnClients({}, false, [](Result<StartedClients>) {});
  }
  return Status::Ok();
}

void Mapping::StartReattach(const std::string& device, std::string reason) {
  device_ = device;
  OnDeath(std::move(reason));
}

void Mapping::StartExpired(const std::string& device, std::string reason) {
  device_ = device;
  ++env_.stats.counters.expirations;
  Transition(MappingState::kExpired, std::move(reason));
  ReleaseExpiredDeviceAt(env_.loop.NowMs());  // the kernel gave up already
}

}  // namespace nbdk
