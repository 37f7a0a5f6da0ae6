// Test-only: a volume laid out in RADOS as ceph-csi's CreateVolume leaves
// it, written directly (librados), so that nbdkeeper's Node meets what
// ceph-csi made and none of nbdkeeper's Controller code: the per-volume omap
// object csi.volume.<uuid> with its keys (csi.volname, csi.imagename, and
// for an encrypted volume csi.volume.encryptKMS and
// csi.volume.encryptionType). The image itself is the caller's.
#pragma once

#include <rados/librados.h>

#include <cerrno>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "ceph/rados_cluster.h"

namespace nbdk::vmtest {

// Creates csi.volume.<uuid> (exclusively: an existing one is an error)
// holding `keys`.
inline Status PlantCephCsiVolume(IoCtx& io, const std::string& uuid, const std::map<std::string, std::string>& keys) {
  std::vector<const char*> names, values;
  std::vector<size_t> lengths;
  for (const auto& [k, v] : keys) {
    names.push_back(k.c_str());
    values.push_back(v.c_str());
    lengths.push_back(v.size());
  }
  rados_write_op_t op = rados_create_write_op();
  rados_write_op_create(op, LIBRADOS_CREATE_EXCLUSIVE, nullptr);
  rados_write_op_omap_set(op, names.data(), values.data(), lengths.data(), names.size());
  int rc = rados_write_op_operate(op, io.get(), ("csi.volume." + uuid).c_str(), nullptr, 0);
  rados_release_write_op(op);
  return rc == 0 ? Status::Ok() : Status::FromErrno(-rc, "create csi.volume." + uuid);
}

// Removes csi.volume.<uuid>; a missing one is success.
inline Status RemoveCephCsiVolume(IoCtx& io, const std::string& uuid) {
  int rc = rados_remove(io.get(), ("csi.volume." + uuid).c_str());
  return rc == 0 || rc == -ENOENT ? Status::Ok() : Status::FromErrno(-rc, "remove csi.volume." + uuid);
}

}  // namespace nbdk::vmtest
