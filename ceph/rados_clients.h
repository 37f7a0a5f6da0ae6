// RadosClients: a cache of cluster connections, one per cluster
// (RadosConfig::CacheKey(): ceph.conf path, monitors, cephx user) and key.
//
// Connecting costs a mon round trip and a session; every mapping and RPC of
// one user on one cluster shares a connection instead. A connection that
// reported a connection-level error (RadosCluster::broken(): blocklisted,
// session lost, cluster timed out) is dropped and the next Get() reconnects.
//
// Trust: every Get() reads the caller's keyfile (in blocking work) and is
// given a cached connection only if that connection was made with the same
// key (KeyFingerprint), so a wrong key never borrows a good connection.
// When a new key for a cluster and user connects (key rotation), the
// connections made with the old key are dropped.
//
// Its blocking work (reading keyfiles, connecting, shutting connections
// down) runs on one Lane: the Node's connections and the Controller's are
// two caches, so that a Controller connect to a cluster that does not
// answer never holds a thread the Node needs.
//
// Loop thread only.
#pragma once

#include <functional>
#include <memory>

#include "base/event_loop.h"
#include "ceph/rados_cluster.h"
#include "ceph/rados_config.h"

namespace nbdk {

class RadosClients {
 public:
  // How a connection is made, with its blocking work on the given lane;
  // RadosCluster::Connect unless a test injects another. Must call `done`
  // exactly once, later, on the loop thread.
  using Connector = std::function<void(EventLoop&, Lane, const RadosConfig&, RadosCluster::ConnectDone)>;

  explicit RadosClients(EventLoop& loop, Connector connector = DefaultConnector(), Lane lane = Lane::kShared);
  // Requests still in flight are dropped: their `done` is never called.
  // Cached connections are shut down here, on the loop thread.
  ~RadosClients();
  RadosClients(const RadosClients&) = delete;
  RadosClients& operator=(const RadosClients&) = delete;

  // Calls `done` later, on the loop thread, with the cached healthy
  // connection for `config` and its key, or connects one. Concurrent Gets
  // for one cluster, user and key share a single connect attempt. A failed
  // attempt is not cached: every waiter gets its error and the next Get
  // tries again. An unreadable keyfile fails without connecting.
  void Get(const RadosConfig& config, RadosCluster::ConnectDone done);

  // Number of cached connections (healthy or not yet replaced).
  size_t size() const;

  static Connector DefaultConnector();

 private:
  struct State;  // shared with work in flight, which checks it is alive
  std::shared_ptr<State> state_;
};

}  // namespace nbdk
