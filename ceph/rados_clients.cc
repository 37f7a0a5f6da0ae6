#include "ceph/rados_clients.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/log.h"

namespace nbdk {

struct RadosClients::State : std::enable_shared_from_this<State> {
  struct Entry {
    std::string cache_key;                           // RadosConfig::CacheKey()
    std::shared_ptr<RadosCluster> cluster;           // null while connecting
    std::vector<RadosCluster::ConnectDone> waiters;  // non-empty while connecting
  };

  State(EventLoop& l, Connector c, Lane n) : loop(l), connector(std::move(c)), lane(n) {}

  void GetWithKey(const RadosConfig& config, const std::string& fingerprint, RadosCluster::ConnectDone done);
  void Connect(const std::string& key, const RadosConfig& config);
  void OnConnected(const std::string& key, const Result<std::shared_ptr<RadosCluster>>& result);
  // Shuts `cluster` down in blocking work so the loop never waits for it.
  void DropOffLoop(std::shared_ptr<RadosCluster> cluster);

  EventLoop& loop;
  Connector connector;
  Lane lane;
  std::map<std::string, Entry> entries;  // by CacheKey() + '\n' + key fingerprint
};

RadosClients::Connector RadosClients::DefaultConnector() {
  return [](EventLoop& loop, Lane lane, const RadosConfig& config, RadosCluster::ConnectDone done) {
    RadosCluster::Connect(loop, lane, config, std::move(done));
  };
}

RadosClients::RadosClients(EventLoop& loop, Connector connector, Lane lane)
    : state_(std::make_shared<State>(loop, std::move(connector), lane)) {}

RadosClients::~RadosClients() = default;

void RadosClients::Get(const RadosConfig& config, RadosCluster::ConnectDone done) {
  NBDK_CHECK_LOOP_THREAD(state_->loop);
  auto fingerprint = std::make_shared<std::optional<Result<std::string>>>();
  // Reading the keyfile is file I/O: off the loop.
  auto read_key = [keyfile = config.keyfile, fingerprint] { fingerprint->emplace(KeyFingerprint(keyfile)); };
  auto on_read = [weak_state = state_->weak_from_this(), config, fingerprint, done = std::move(done)]() mutable {
    std::shared_ptr<State> state = weak_state.lock();
    if (state == nullptr) return;  // RadosClients is gone
    const Result<std::string>& key = **fingerprint;
    if (!key.ok()) {
      done(key.status().WithContext("connect to " + config.Describe()));
      return;
    }
    state->GetWithKey(config, key.value(), std::move(done));
  };
  state_->loop.RunBlocking(std::move(read_key), std::move(on_read), state_->lane);
}

void RadosClients::State::GetWithKey(const RadosConfig& config, const std::string& fingerprint,
                                     RadosCluster::ConnectDone done) {
  const std::string key = config.CacheKey() + "\n" + fingerprint;
  auto it = entries.find(key);
  if (it == entries.end()) {
    Entry& entry = entries[key];
    entry.cache_key = config.CacheKey();
    entry.waiters.push_back(std::move(done));
    Connect(key, config);
    return;
  }
  Entry& entry = it->second;
  if (entry.cluster == nullptr) {  // a connect is already under way
    entry.waiters.push_back(std::move(done));
    return;
  }
  if (!entry.cluster->broken()) {
    done(entry.cluster);
    return;
  }
  NBDK_LOG_WARN("rados_reconnect", {{"cluster", entry.cluster->description()},
                                    {"reason", "connection-level error on the cached connection"}});
  DropOffLoop(std::move(entry.cluster));
  entry.waiters.push_back(std::move(done));
  Connect(key, config);
}

void RadosClients::State::Connect(const std::string& key, const RadosConfig& config) {
  std::weak_ptr<State> weak_state = weak_from_this();
  connector(loop, lane, config, [weak_state, key](Result<std::shared_ptr<RadosCluster>> result) {
    if (std::shared_ptr<State> state = weak_state.lock()) state->OnConnected(key, result);
  });
}

void RadosClients::State::OnConnected(const std::string& key, const Result<std::shared_ptr<RadosCluster>>& result) {
  auto it = entries.find(key);
  if (it == entries.end()) return;
  std::vector<RadosCluster::ConnectDone> waiters = std::move(it->second.waiters);
  if (!result.ok()) {
    entries.erase(it);
  } else {
    it->second.cluster = result.value();
    // The key changed (rotation): connections made with the old one go.
    const std::string cache_key = it->second.cache_key;
    for (auto other = entries.begin(); other != entries.end();) {
      if (other->first != key && other->second.cache_key == cache_key && other->second.cluster != nullptr) {
        DropOffLoop(std::move(other->second.cluster));
        other = entries.erase(other);
      } else {
        ++other;
      }
    }
  }
  // `it` may be invalid from here on: a waiter may call Get() again.
  for (auto& waiter : waiters) waiter(result);
}

void RadosClients::State::DropOffLoop(std::shared_ptr<RadosCluster> cluster) {
  loop.RunBlocking([cluster = std::move(cluster)]() mutable { cluster.reset(); }, [] {}, lane);
}

size_t RadosClients::size() const {
  size_t n = 0;
  for (const auto& [key, entry] : state_->entries) {
    if (entry.cluster != nullptr) ++n;
  }
  return n;
}

}  // namespace nbdk
