#include "ceph/omap_store.h"

#include <cerrno>
#include <memory>

namespace nbdk {
namespace {

struct WriteOpDeleter {
  using pointer = rados_write_op_t;
  void operator()(rados_write_op_t op) const { rados_release_write_op(op); }
};
using WriteOp = std::unique_ptr<void, WriteOpDeleter>;

// Keys read per round trip: the directory of a busy cluster has thousands.
constexpr uint64_t kListPage = 512;

// Runs `fill(op)` as one atomic write op on `object`; returns the raw rc.
template <typename Fill>
int Operate(IoCtx& io, const std::string& object, Fill fill) {
  WriteOp op(rados_create_write_op());
  if (!op) return -ENOMEM;
  fill(op.get());
  return io.cluster().NoteResult(rados_write_op_operate2(op.get(), io.get(), object.c_str(), nullptr, 0));
}

std::string What(IoCtx& io, const char* verb, const std::string& object) {
  return std::string(verb) + " object " + object + " in " + io.description();
}

}  // namespace

Status RadosOmapStore::CreateExclusive(const std::string& object) {
  int rc =
      Operate(io_, object, [](rados_write_op_t op) { rados_write_op_create(op, LIBRADOS_CREATE_EXCLUSIVE, nullptr); });
  if (rc == -EEXIST) return Status::AlreadyExists(What(io_, "create", object) + ": exists");
  if (rc < 0) return StatusFromRados(rc, What(io_, "create", object));
  return Status::Ok();
}

Result<OmapValues> RadosOmapStore::Get(const std::string& object, const std::vector<std::string>& keys) {
  return OmapGet(io_, object, keys);
}

Result<OmapValues> RadosOmapStore::List(const std::string& object, const std::string& prefix) {
  const std::string what = "list omap of object " + object + " in " + io_.description();
  OmapValues out;
  std::string after;
  for (unsigned char more = 1; more;) {
    ReadOp op(rados_create_read_op());
    if (!op) return Status::ResourceExhausted(what + ": rados_create_read_op failed");
    rados_omap_iter_t raw_iter = nullptr;
    int op_rc = 0;
    more = 0;
    rados_read_op_omap_get_vals2(op.get(), after.c_str(), prefix.c_str(), kListPage, &raw_iter, &more, &op_rc);
    OmapIter iter(raw_iter);
    int rc = io_.cluster().NoteResult(rados_read_op_operate(op.get(), io_.get(), object.c_str(), 0));
    if (rc < 0) return StatusFromRados(rc, what);
    if (op_rc < 0) return StatusFromRados(io_.cluster().NoteResult(op_rc), what);
    for (;;) {
      char *key = nullptr, *val = nullptr;
      size_t key_len = 0, val_len = 0;
      rc = rados_omap_get_next2(iter.get(), &key, &val, &key_len, &val_len);
      if (rc < 0) return StatusFromRados(rc, what + ": iterate");
      if (key == nullptr) break;
      after.assign(key, key_len);
      out.emplace(after, std::string(val ? val : "", val ? val_len : 0));
    }
  }
  return out;
}

Status RadosOmapStore::Set(const std::string& object, const OmapValues& values) {
  std::vector<const char*> keys, vals;
  std::vector<size_t> key_lens, val_lens;
  for (const auto& [k, v] : values) {
    keys.push_back(k.data());
    key_lens.push_back(k.size());
    vals.push_back(v.data());
    val_lens.push_back(v.size());
  }
  int rc = Operate(io_, object, [&](rados_write_op_t op) {
    rados_write_op_omap_set2(op, keys.data(), vals.data(), key_lens.data(), val_lens.data(), keys.size());
  });
  if (rc < 0) return StatusFromRados(rc, What(io_, "set omap keys of", object));
  return Status::Ok();
}

Status RadosOmapStore::RemoveKeys(const std::string& object, const std::vector<std::string>& keys) {
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  for (const auto& k : keys) {
    ptrs.push_back(k.data());
    lens.push_back(k.size());
  }
  int rc = Operate(io_, object, [&](rados_write_op_t op) {
    // Without the assert, removing keys would create a missing object.
    rados_write_op_assert_exists(op);
    rados_write_op_omap_rm_keys2(op, ptrs.data(), lens.data(), ptrs.size());
  });
  if (rc < 0 && rc != -ENOENT) return StatusFromRados(rc, What(io_, "remove omap keys of", object));
  return Status::Ok();
}

Status RadosOmapStore::RemoveObject(const std::string& object) {
  int rc = Operate(io_, object, [](rados_write_op_t op) { rados_write_op_remove(op); });
  if (rc < 0 && rc != -ENOENT) return StatusFromRados(rc, What(io_, "remove", object));
  return Status::Ok();
}

}  // namespace nbdk
