#include "journal/rados_clients.h"

#include <cassert>
#include <utility>

#include "daemon/log.h"

namespace nbdk {

RadosClients::Connector RadosClients::DefaultConnector() {
  return [](EventLoop& loop, const RadosConfig& config, RadosCluster::ConnectDone done) {
    RadosCluster::Connect(loop, config, std::move(done));
  };
}

RadosClients::RadosClients(EventLoop& loop, Connector connector)
    : loop_(loop), connector_(std::move(connector)), state_(std::make_shared<State>()) {}

RadosClients::~RadosClients() = default;

void RadosClients::Get(const RadosConfig& config, RadosCluster::ConnectDone done) {
  assert(loop_.IsLoopThread());
  const std::string key = config.CacheKey();
  auto it = state_->entries.find(key);
  if (it == state_->entries.end()) {
    state_->entries[key].waiters.push_back(std::move(done));
    Connect(key, config);
    return;
  }
  Entry& entry = it->second;
  if (entry.cluster == nullptr) {  // a connect is already under way
    entry.waiters.push_back(std::move(done));
    return;
  }
  if (!entry.cluster->broken()) {
    loop_.Post([done = std::move(done), cluster = entry.cluster] { done(cluster); });
    return;
  }
  NBDK_LOG_WARN("rados_reconnect", {{"cluster", entry.cluster->description()},
                                    {"reason", "connection-level error on the cached connection"}});
  DropOffLoop(std::move(entry.cluster));
  entry.waiters.push_back(std::move(done));
  Connect(key, config);
}

void RadosClients::Connect(const std::string& key, const RadosConfig& config) {
  std::weak_ptr<State> weak_state = state_;
  connector_(loop_, config, [weak_state, key](Result<std::shared_ptr<RadosCluster>> result) {
    std::shared_ptr<State> state = weak_state.lock();
    if (state == nullptr) return;  // RadosClients is gone
    auto it = state->entries.find(key);
    if (it == state->entries.end()) return;
    std::vector<RadosCluster::ConnectDone> waiters = std::move(it->second.waiters);
    if (result.ok()) {
      it->second.cluster = result.value();
    } else {
      state->entries.erase(it);
    }
    // `it` may be invalid from here on: a waiter may call Get() again.
    for (auto& waiter : waiters) waiter(result);
  });
}

void RadosClients::DropOffLoop(std::shared_ptr<RadosCluster> cluster) {
  loop_.RunBlocking([cluster = std::move(cluster)]() mutable { cluster.reset(); }, [] {});
}

size_t RadosClients::size() const {
  size_t n = 0;
  for (const auto& [key, entry] : state_->entries) {
    if (entry.cluster != nullptr) ++n;
  }
  return n;
}

}  // namespace nbdk
