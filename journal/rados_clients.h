// RadosClients: the daemon's cache of cluster connections, one per
// RadosConfig::CacheKey() (ceph.conf path, monitors, cephx user).
//
// Connecting costs a mon round trip and a session; every mapping and RPC of
// one user on one cluster shares a connection instead. A connection that
// reported a connection-level error (RadosCluster::broken(): blocklisted,
// session lost, cluster timed out) is dropped and the next Get() reconnects.
//
// Trust: the key is checked when the connection is made. A later Get() for
// the same user and cluster reuses the connection without reading its
// keyfile again, as long as the connection stays healthy.
//
// Loop thread only.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "daemon/event_loop.h"
#include "journal/rados_cluster.h"
#include "journal/rados_config.h"

namespace nbdk {

class RadosClients {
 public:
  // How a connection is made; RadosCluster::Connect unless a test injects
  // another. Must call `done` exactly once, later, on the loop thread.
  using Connector = std::function<void(EventLoop&, const RadosConfig&, RadosCluster::ConnectDone)>;

  explicit RadosClients(EventLoop& loop, Connector connector = DefaultConnector());
  // Requests still connecting are dropped: their `done` is never called.
  // Cached connections are shut down here, on the loop thread.
  ~RadosClients();
  RadosClients(const RadosClients&) = delete;
  RadosClients& operator=(const RadosClients&) = delete;

  // Calls `done` on the loop thread (never from inside Get) with the cached
  // healthy connection for config.CacheKey(), or connects one. Concurrent
  // Gets for one key share a single connect attempt. A failed attempt is not
  // cached: every waiter gets its error and the next Get tries again.
  void Get(const RadosConfig& config, RadosCluster::ConnectDone done);

  // Number of cached connections (healthy or not yet replaced).
  size_t size() const;

  static Connector DefaultConnector();

 private:
  struct Entry {
    std::shared_ptr<RadosCluster> cluster;           // null while connecting
    std::vector<RadosCluster::ConnectDone> waiters;  // non-empty while connecting
  };
  struct State {
    std::map<std::string, Entry> entries;
  };

  void Connect(const std::string& key, const RadosConfig& config);
  // Shuts `cluster` down in blocking work so the loop never waits for it.
  void DropOffLoop(std::shared_ptr<RadosCluster> cluster);

  EventLoop& loop_;
  Connector connector_;
  // Shared with in-flight connects, which check it is still alive.
  std::shared_ptr<State> state_;
};

}  // namespace nbdk
