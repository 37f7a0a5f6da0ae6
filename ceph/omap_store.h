// OmapStore: the few omap operations the CSI volume journal writes, behind
// an interface so the journal's state machine is tested against an
// in-memory fake (test/ceph/fake_omap_store.h) and runs on RADOS
// (RadosOmapStore) in the daemon.
//
// Every RadosOmapStore call is BLOCKING: run it in EventLoop::RunBlocking.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "ceph/rados_cluster.h"

namespace nbdk {

using OmapValues = std::map<std::string, std::string>;

class OmapStore {
 public:
  virtual ~OmapStore() = default;
  // Creates an empty object; AlreadyExists when it exists (an exclusive
  // create: of two racing callers exactly one succeeds).
  virtual Status CreateExclusive(const std::string& object) = 0;
  // The values of `keys` the object has; NotFound when the object is missing.
  virtual Result<OmapValues> Get(const std::string& object, const std::vector<std::string>& keys) = 0;
  // Every key of the object whose name starts with `prefix`; NotFound when
  // the object is missing.
  virtual Result<OmapValues> List(const std::string& object, const std::string& prefix) = 0;
  // Sets every key in one atomic operation, creating the object if missing.
  virtual Status Set(const std::string& object, const OmapValues& values) = 0;
  // Removes the keys; a missing object or key is success.
  virtual Status RemoveKeys(const std::string& object, const std::vector<std::string>& keys) = 0;
  // Removes the object; a missing object is success.
  virtual Status RemoveObject(const std::string& object) = 0;
};

class RadosOmapStore final : public OmapStore {
 public:
  explicit RadosOmapStore(IoCtx& io) : io_(io) {}  // `io` outlives the store

  Status CreateExclusive(const std::string& object) override;
  Result<OmapValues> Get(const std::string& object, const std::vector<std::string>& keys) override;
  Result<OmapValues> List(const std::string& object, const std::string& prefix) override;
  Status Set(const std::string& object, const OmapValues& values) override;
  Status RemoveKeys(const std::string& object, const std::vector<std::string>& keys) override;
  Status RemoveObject(const std::string& object) override;

 private:
  IoCtx& io_;
};

}  // namespace nbdk
