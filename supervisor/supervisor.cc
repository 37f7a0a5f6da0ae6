#include "supervisor/supervisor.h"

#include "base/log.h"
#include "journal/volume_id.h"
#include "netlink/nbd_device.h"
#include "supervisor/rbd_nbd_argv.h"

namespace nbdk {

Supervisor::Supervisor(EventLoop& loop, SupervisorConfig config, LockBreaker& lock_breaker)
    : loop_(loop),
      config_(std::move(config)),
      lock_breaker_(lock_breaker),
      attach_queue_(loop, config_.max_concurrent_attaches) {}

Supervisor::~Supervisor() {
  ReleaseAll();
  *alive_ = false;
  retired_.clear();
}

std::unique_ptr<Mapping> Supervisor::NewMapping(MapRequest request) {
  Mapping::Env env{
      loop_,
      config_,
      lock_breaker_,
      stats_,
      attach_queue_,
      [this](const std::string& id) { Retire(id); },
      [this](const std::string& id) {
        if (server_changed_) server_changed_(id);
      },
      [this](const std::string& image_path) { return SnapshotClients(image_path); },
      [this](const std::string& id, const std::string& image, const std::string& device, MappingState state) {
        if (state_changed_) state_changed_(id, image, device, state);
      },
      scopes_};
  return std::make_unique<Mapping>(std::move(env), std::move(request));
}

OwnClients Supervisor::SnapshotClients(const std::string& image_path) const {
  OwnClients clients;
  for (const auto& [id, m] : mappings_) {
    if (RoleOf(m->request()) == ImageRole::kSnapshot && m->request().image.Path() == image_path) {
      clients.insert(m->own_clients().begin(), m->own_clients().end());
    }
  }
  return clients;
}

Mapping* Supervisor::Find(const std::string& volume_id) const {
  auto it = mappings_.find(volume_id);
  return it == mappings_.end() ? nullptr : it->second.get();
}

void Supervisor::Retire(const std::string& volume_id) {
  auto it = mappings_.find(volume_id);
  if (it == mappings_.end()) return;
  retired_.push_back(std::move(it->second));
  mappings_.erase(it);
  std::weak_ptr<bool> weak = alive_;
  loop_.Post([this, weak] {
    if (!weak.expired()) retired_.clear();
  });
}

void Supervisor::Map(MapRequest request, std::function<void(Result<std::string>)> done) {
  NBDK_CHECK_LOOP_THREAD(loop_);
  if (Status s = ValidateMapRequest(request); !s.ok()) {
    done(s);
    return;
  }
  if (Mapping* m = Find(request.volume_id)) {
    const std::string& id = request.volume_id;
    if (m->request().image.Spec() != request.image.Spec()) {
      done(Status::AlreadyExists("volume " + id + " is mapped to " + m->request().image.Spec() + ", not " +
                                 request.image.Spec()));
      return;
    }
    switch (m->state()) {
      case MappingState::kConnected:
        done(m->device());
        return;
      case MappingState::kMapping:
        m->AddMapWaiter(std::move(done));
        return;
      case MappingState::kDead:
      case MappingState::kReattaching:
        done(Status::Unavailable("volume " + id + " on " + m->device() + " is re-attaching; retry"));
        return;
      case MappingState::kExpired:
        done(Status::FailedPrecondition("volume " + id + " on " + m->device() +
                                        " expired (re-attach deadline passed); unmap it first"));
        return;
      case MappingState::kFenced:
        done(Status::FailedPrecondition("volume " + id + " on " + m->device() + " is fenced (" + m->reason() +
                                        "); unmap it first"));
        return;
      default:
        done(Status::Aborted("volume " + id + " is being unmapped; retry"));
        return;
    }
  }
  std::string id = request.volume_id;
  Mapping* m = mappings_.emplace(id, NewMapping(std::move(request))).first->second.get();
  m->StartMap(std::move(done));
}

void Supervisor::Unmap(const std::string& volume_id, std::function<void(Status)> done) {
  NBDK_CHECK_LOOP_THREAD(loop_);
  Mapping* m = Find(volume_id);
  if (!m) {
    // Not supervised (never mapped by this daemon run, or its map failed):
    // a log an earlier run or attempt left goes now.
    if (ValidateVolumeId(volume_id).ok()) OutputLog::RemoveFile(loop_, OutputLogPath(config_, volume_id));
    done(Status::Ok());
    return;
  }
  m->Unmap(std::move(done));
}

void Supervisor::Detach(const std::string& volume_id, std::function<void(Status)> done) {
  NBDK_CHECK_LOOP_THREAD(loop_);
  Mapping* m = Find(volume_id);
  if (!m) {
    done(Status::NotFound("volume " + volume_id + " is not supervised"));
    return;
  }
  m->Detach(std::move(done));
}

Result<Mapping*> Supervisor::AddRestored(AdoptRequest& request) {
  NBDK_CHECK_LOOP_THREAD(loop_);
  NBDK_RETURN_IF_ERROR(ValidateMapRequest(request.map));
  auto index = NbdDeviceIndex(request.device);
  if (!index.ok()) return index.status();
  if (Find(request.map.volume_id)) {
    return Status::AlreadyExists("volume " + request.map.volume_id + " is already supervised");
  }
  for (const auto& [id, m] : mappings_) {
    if (m->device() == request.device) {
      return Status::AlreadyExists("device " + request.device + " is already supervised for volume " + id);
    }
  }
  std::string id = request.map.volume_id;
  return mappings_.emplace(id, NewMapping(std::move(request.map))).first->second.get();
}

Status Supervisor::Adopt(AdoptRequest request) {
  if (request.pid <= 0) return Status::InvalidArgument("pid " + std::to_string(request.pid) + ": not a process id");
  auto m = AddRestored(request);
  if (!m.ok()) return m.status();
  return (*m)->StartAdopted(request.device, request.pid);
}

Status Supervisor::Reattach(AdoptRequest request, std::string reason) {
  auto m = AddRestored(request);
  if (!m.ok()) return m.status();
  (*m)->StartReattach(request.device, std::move(reason));
  return Status::Ok();
}

Status Supervisor::AdoptExpired(AdoptRequest request, std::string reason) {
  auto m = AddRestored(request);
  if (!m.ok()) return m.status();
  (*m)->StartExpired(request.device, std::move(reason));
  return Status::Ok();
}

void Supervisor::OnLinkDead(int index) {
  NBDK_CHECK_LOOP_THREAD(loop_);
  std::string device = NbdDevicePath(index);
  for (const auto& [id, m] : mappings_) {
    if (m->device() == device && m->holds_device()) {
      m->OnLinkDead();
      return;
    }
  }
  ++stats_.counters.link_dead_events;
  NBDK_LOG_INFO("link_dead_unknown_device", {{"device", device}});
}

std::vector<MappingSnapshot> Supervisor::ReleaseAll() {
  NBDK_CHECK_LOOP_THREAD(loop_);
  std::vector<MappingSnapshot> released;
  // Release() runs callbacks; take the table first so they see it empty.
  auto mappings = std::move(mappings_);
  mappings_.clear();
  for (auto& [id, m] : mappings) {
    released.push_back(m->Snapshot());
    m->Release();
  }
  return released;
}

std::vector<MappingSnapshot> Supervisor::Snapshots() const {
  NBDK_CHECK_LOOP_THREAD(loop_);
  std::vector<MappingSnapshot> out;
  out.reserve(mappings_.size());
  for (const auto& [id, m] : mappings_) out.push_back(m->Snapshot());
  return out;
}

std::optional<MappingSnapshot> Supervisor::Snapshot(const std::string& volume_id) const {
  NBDK_CHECK_LOOP_THREAD(loop_);
  Mapping* m = Find(volume_id);
  if (!m) return std::nullopt;
  return m->Snapshot();
}

std::array<size_t, kMappingStateCount> Supervisor::CountByState() const {
  NBDK_CHECK_LOOP_THREAD(loop_);
  std::array<size_t, kMappingStateCount> counts{};
  for (const auto& [id, m] : mappings_) ++counts[static_cast<int>(m->state())];
  return counts;
}

}  // namespace nbdk
