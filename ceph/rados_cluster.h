// RadosCluster: one librados connection (rados_t) to one cluster as one
// cephx user; IoCtx: one pool (and RADOS namespace) on it; OmapGet: the omap
// read the CSI journal needs.
//
// Threading: librados handles are thread-safe. Every function marked
// BLOCKING waits on the network (up to RadosConfig::timeout_s per operation)
// and must run only in EventLoop::RunBlocking work, never on the loop
// thread. Connect() is the loop-thread entry point.
//
// Lifetime: an IoCtx holds a shared_ptr to its RadosCluster, so a cluster is
// shut down (rados_shutdown, which joins librados' threads: milliseconds)
// only after its last IoCtx is gone, on whichever thread drops the last
// reference. Prefer dropping the last reference in blocking work.
#pragma once

#include <rados/librados.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/event_loop.h"
#include "base/status.h"
#include "ceph/rados_config.h"

namespace nbdk {

// Owns a rados_t from rados_create2 (connected or not); rados_shutdown on
// destruction.
struct RadosHandleDeleter {
  using pointer = rados_t;
  void operator()(rados_t cluster) const { rados_shutdown(cluster); }
};
using RadosHandle = std::unique_ptr<void, RadosHandleDeleter>;

class RadosCluster {
 public:
  using ConnectDone = std::function<void(Result<std::shared_ptr<RadosCluster>>)>;

  // Takes a handle made by rados_create2; `description` is
  // RadosConfig::Describe() and prefixes every error.
  RadosCluster(RadosHandle handle, std::string description);
  RadosCluster(const RadosCluster&) = delete;
  RadosCluster& operator=(const RadosCluster&) = delete;

  // Loop thread only. Validates `config`, then creates, configures and
  // connects a handle in blocking work on `lane`; `done` runs on the loop
  // thread with the connection or an error naming the monitors and user
  // (never the key). A dead cluster fails after about config.timeout_s.
  static void Connect(EventLoop& loop, Lane lane, RadosConfig config, ConnectDone done);
  // BLOCKING. What Connect() runs in its work.
  static Result<std::shared_ptr<RadosCluster>> ConnectBlocking(const RadosConfig& config);

  // BLOCKING (may wait for an OSD map). NotFound names a missing pool.
  Result<int64_t> PoolId(const std::string& pool);
  Result<std::string> PoolName(int64_t pool_id);
  // BLOCKING. The ID of every pool of the cluster; one deleted while the
  // list is read is left out.
  Result<std::vector<int64_t>> PoolIds();

  // Any thread. Records a librados/librbd result made on this connection:
  // a connection-level error (IsConnectionError) marks it broken, and
  // RadosClients then replaces it. Returns `rc` unchanged.
  int NoteResult(int rc);
  bool broken() const { return broken_.load(); }

  // The cluster's fsid (from the monitor map the connection holds; no
  // round trip); "" when librados cannot say.
  std::string Fsid() const;

  rados_t handle() const { return handle_.get(); }
  const std::string& description() const { return description_; }

 private:
  RadosHandle handle_;
  std::string description_;
  std::atomic<bool> broken_{false};
};

struct RadosIoCtxDeleter {
  using pointer = rados_ioctx_t;
  void operator()(rados_ioctx_t io) const { rados_ioctx_destroy(io); }
};

// One pool and RADOS namespace on a cluster. Movable, not copyable. Keeps
// its cluster alive.
class IoCtx {
 public:
  // BLOCKING. NotFound names a missing pool.
  static Result<IoCtx> Open(std::shared_ptr<RadosCluster> cluster, const std::string& pool,
                            const std::string& rados_namespace);
  static Result<IoCtx> OpenById(std::shared_ptr<RadosCluster> cluster, int64_t pool_id,
                                const std::string& rados_namespace);

  rados_ioctx_t get() const { return io_.get(); }
  RadosCluster& cluster() const { return *cluster_; }
  // "pool rbd" or "pool rbd namespace ns1": context for error messages.
  const std::string& description() const { return description_; }

 private:
  IoCtx(std::shared_ptr<RadosCluster> cluster, rados_ioctx_t io, std::string description);

  // Declared first so it is destroyed last, after the ioctx.
  std::shared_ptr<RadosCluster> cluster_;
  std::unique_ptr<void, RadosIoCtxDeleter> io_;
  std::string description_;
};

// A librados read operation and an omap iterator, released when destroyed.
struct ReadOpDeleter {
  using pointer = rados_read_op_t;
  void operator()(rados_read_op_t op) const { rados_release_read_op(op); }
};
using ReadOp = std::unique_ptr<void, ReadOpDeleter>;
struct OmapIterDeleter {
  using pointer = rados_omap_iter_t;
  void operator()(rados_omap_iter_t iter) const { rados_omap_get_end(iter); }
};
using OmapIter = std::unique_ptr<void, OmapIterDeleter>;

// BLOCKING. The values of `keys` in the omap of `object`; keys the object
// lacks are absent from the result. NotFound when the object is missing.
Result<std::map<std::string, std::string>> OmapGet(IoCtx& io, const std::string& object,
                                                   const std::vector<std::string>& keys);

}  // namespace nbdk
