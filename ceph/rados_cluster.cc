#include "ceph/rados_cluster.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <utility>

#include "base/log.h"

namespace nbdk {
namespace {

std::string JoinForMonHost(const std::vector<std::string>& monitors) {
  std::string out;
  for (const auto& m : monitors) {
    if (!out.empty()) out += ',';
    out += m;
  }
  return out;
}

// Creates and configures, but does not connect, a handle for `config`.
Result<RadosHandle> CreateConfiguredHandle(const RadosConfig& config, const std::string& what) {
  rados_t raw = nullptr;
  std::string name = "client." + config.user_id;
  int rc = rados_create2(&raw, "ceph", name.c_str(), 0);
  if (rc < 0) return StatusFromRados(rc, what + ": rados_create2");
  RadosHandle handle(raw);

  if (!config.ceph_conf.empty()) {
    rc = rados_conf_read_file(raw, config.ceph_conf.c_str());
    if (rc < 0) return StatusFromRados(rc, what + ": read ceph_conf " + config.ceph_conf);
  } else {
    // Like rbd-nbd without -c: the default search path, which may be empty.
    rc = rados_conf_read_file(raw, nullptr);
    if (rc < 0 && rc != -ENOENT) return StatusFromRados(rc, what + ": read the default ceph.conf");
    if (rc == -ENOENT && config.monitors.empty()) {
      return Status::InvalidArgument("monitors: none given and no ceph.conf in librados' default search path");
    }
  }

  const std::string connect_timeout = std::to_string(config.timeout_s);
  const std::string op_timeout = std::to_string(OpTimeoutS(config));
  std::vector<std::pair<const char*, std::string>> options = {
      {"keyfile", config.keyfile},
      // Bounded time on a dead cluster: connect, then every mon/OSD op.
      {"client_mount_timeout", connect_timeout},
      {"rados_mon_op_timeout", op_timeout},
      {"rados_osd_op_timeout", op_timeout},
      // Several connections live in one process; one admin socket path
      // ($pid-based in ceph.conf) would collide between them.
      {"admin_socket", ""},
  };
  if (!config.monitors.empty()) options.emplace_back("mon_host", JoinForMonHost(config.monitors));
  for (const auto& [option, value] : options) {
    rc = rados_conf_set(raw, option, value.c_str());
    if (rc < 0) return StatusFromRados(rc, what + ": set " + option);
  }
  return handle;
}

}  // namespace

RadosCluster::RadosCluster(RadosHandle handle, std::string description)
    : handle_(std::move(handle)), description_(std::move(description)) {}

Result<std::shared_ptr<RadosCluster>> RadosCluster::ConnectBlocking(const RadosConfig& config) {
  Status valid = ValidateRadosConfig(config);
  if (!valid.ok()) return valid.WithContext("rados config");
  const std::string what = "connect to " + config.Describe();

  Result<RadosHandle> handle = CreateConfiguredHandle(config, what);
  if (!handle.ok()) return handle.status();

  auto start = std::chrono::steady_clock::now();
  int rc = rados_connect(handle->get());
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  const std::string outcome = rc < 0 ? std::string(strerror(-rc)) : "ok";
  NBDK_LOG_INFO("rados_connect", {{"cluster", config.Describe()}, {"duration_ms", ms}, {"outcome", outcome}});
  switch (-rc) {
    case 0:
      break;
    case EACCES:
    case EPERM:
      return Status::FailedPrecondition(what + ": authentication failed (check user_id and the key in keyfile)");
    case EINVAL:  // librados says nothing more specific for either
      return Status::InvalidArgument(what + ": a monitor address does not parse or resolve, or keyfile " +
                                     config.keyfile + " does not hold a base64 cephx key");
    case ENOENT:
      return Status::InvalidArgument(what + ": no monitor address (set monitors, or mon_host in ceph_conf)");
    default:
      return StatusFromRados(rc, what);
  }
  return std::make_shared<RadosCluster>(std::move(handle).value(), config.Describe());
}

void RadosCluster::Connect(EventLoop& loop, Lane lane, RadosConfig config, ConnectDone done) {
  // Result has no empty state; the optional carries it from work to done.
  auto result = std::make_shared<std::optional<Result<std::shared_ptr<RadosCluster>>>>();
  loop.RunBlocking([config = std::move(config), result] { result->emplace(ConnectBlocking(config)); },
                   [done = std::move(done), result] { done(std::move(**result)); }, lane);
}

int RadosCluster::NoteResult(int rc) {
  if (rc < 0 && IsConnectionError(rc)) broken_.store(true);
  return rc;
}

Result<int64_t> RadosCluster::PoolId(const std::string& pool) {
  int64_t id = rados_pool_lookup(handle(), pool.c_str());
  if (id < 0) {
    NoteResult(static_cast<int>(id));
    return StatusFromRados(static_cast<int>(id), description_ + ": look up pool " + pool);
  }
  return id;
}

Result<std::string> RadosCluster::PoolName(int64_t pool_id) {
  std::string name(128, '\0');
  for (;;) {
    int rc = NoteResult(rados_pool_reverse_lookup(handle(), pool_id, name.data(), name.size()));
    if (rc == -ERANGE && name.size() < 65536) {
      name.resize(name.size() * 2);
      continue;
    }
    if (rc < 0) return StatusFromRados(rc, description_ + ": look up pool id " + std::to_string(pool_id));
    name.resize(name.find('\0') == std::string::npos ? name.size() : name.find('\0'));
    return name;
  }
}

Result<std::vector<int64_t>> RadosCluster::PoolIds() {
  // rados_pool_list writes "name\0name\0\0" and returns the length it
  // needs, which grows when a pool is created meanwhile.
  std::string names(4096, '\0');
  for (;;) {
    int rc = NoteResult(rados_pool_list(handle(), names.data(), names.size()));
    if (rc < 0) return StatusFromRados(rc, description_ + ": list pools");
    if (static_cast<size_t>(rc) <= names.size()) break;
    names.assign(rc, '\0');
  }
  std::vector<int64_t> ids;
  for (size_t at = 0; at < names.size() && names[at] != '\0';) {
    std::string name(names.c_str() + at);
    at += name.size() + 1;
    auto id = PoolId(name);
    if (id.ok()) ids.push_back(*id);
  }
  return ids;
}

IoCtx::IoCtx(std::shared_ptr<RadosCluster> cluster, rados_ioctx_t io, std::string description)
    : cluster_(std::move(cluster)), io_(io), description_(std::move(description)) {}

Result<IoCtx> IoCtx::Open(std::shared_ptr<RadosCluster> cluster, const std::string& pool,
                          const std::string& rados_namespace) {
  std::string description = "pool " + pool;
  if (!rados_namespace.empty()) description += " namespace " + rados_namespace;
  rados_ioctx_t io = nullptr;
  int rc = cluster->NoteResult(rados_ioctx_create(cluster->handle(), pool.c_str(), &io));
  if (rc < 0) return StatusFromRados(rc, cluster->description() + ": open " + description);
  rados_ioctx_set_namespace(io, rados_namespace.c_str());
  return IoCtx(std::move(cluster), io, std::move(description));
}

Result<IoCtx> IoCtx::OpenById(std::shared_ptr<RadosCluster> cluster, int64_t pool_id,
                              const std::string& rados_namespace) {
  std::string description = "pool id " + std::to_string(pool_id);
  if (!rados_namespace.empty()) description += " namespace " + rados_namespace;
  rados_ioctx_t io = nullptr;
  int rc = cluster->NoteResult(rados_ioctx_create2(cluster->handle(), pool_id, &io));
  if (rc < 0) return StatusFromRados(rc, cluster->description() + ": open " + description);
  rados_ioctx_set_namespace(io, rados_namespace.c_str());
  return IoCtx(std::move(cluster), io, std::move(description));
}

Result<std::map<std::string, std::string>> OmapGet(IoCtx& io, const std::string& object,
                                                   const std::vector<std::string>& keys) {
  const std::string what = "read omap of object " + object + " in " + io.description();
  std::vector<const char*> key_ptrs;
  std::vector<size_t> key_lens;
  for (const auto& k : keys) {
    key_ptrs.push_back(k.data());
    key_lens.push_back(k.size());
  }
  ReadOp op(rados_create_read_op());
  if (!op) return Status::ResourceExhausted(what + ": rados_create_read_op failed");
  rados_omap_iter_t raw_iter = nullptr;
  int op_rc = 0;
  rados_read_op_omap_get_vals_by_keys2(op.get(), key_ptrs.data(), key_ptrs.size(), key_lens.data(), &raw_iter, &op_rc);
  // librados allocates the iterator here, before the operation runs.
  OmapIter iter(raw_iter);
  int rc = io.cluster().NoteResult(rados_read_op_operate(op.get(), io.get(), object.c_str(), 0));
  if (rc < 0) return StatusFromRados(rc, what);
  if (op_rc < 0) return StatusFromRados(io.cluster().NoteResult(op_rc), what);

  std::map<std::string, std::string> values;
  for (;;) {
    char* key = nullptr;
    char* val = nullptr;
    size_t key_len = 0, val_len = 0;
    rc = rados_omap_get_next2(iter.get(), &key, &val, &key_len, &val_len);
    if (rc < 0) return StatusFromRados(rc, what + ": iterate");
    if (key == nullptr) break;
    values.emplace(std::string(key, key_len), std::string(val ? val : "", val ? val_len : 0));
  }
  return values;
}

std::string RadosCluster::Fsid() const {
  char fsid[64] = {};
  int n = rados_cluster_fsid(handle_.get(), fsid, sizeof(fsid) - 1);
  return n < 0 ? "" : std::string(fsid, static_cast<size_t>(n));
}

}  // namespace nbdk
