#include "daemon/config_settings.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <sstream>

namespace nbdk {
namespace {

// A directory request paths are confined beneath: "/" would confine nothing.
Status CheckPathRoot(std::string_view v) {
  if (v.size() < 2 || v.front() != '/' || v.back() == '/' || v.find("//") != std::string_view::npos ||
      v.find("/./") != std::string_view::npos || v.find("/../") != std::string_view::npos || v.ends_with("/.") ||
      v.ends_with("/..")) {
    return Status::InvalidArgument("must be a clean absolute path other than /");
  }
  return Status::Ok();
}

Status SetNonEmpty(std::string* out, std::string_view v) {
  if (v.empty()) return Status::InvalidArgument("must not be empty");
  *out = v;
  return Status::Ok();
}

Status SetAbsolutePath(std::string* out, std::string_view v) {
  if (v.empty() || v.front() != '/') return Status::InvalidArgument("must be an absolute path");
  *out = v;
  return Status::Ok();
}

Status SetRange(uint32_t* out, std::string_view v, uint64_t min, uint64_t max) {
  auto n = ParseUnsigned(v, 10, max);
  if (!n.ok()) return n.status();
  if (*n < min) return Status::InvalidArgument(std::string(v) + " is smaller than " + std::to_string(min));
  *out = static_cast<uint32_t>(*n);
  return Status::Ok();
}

Status SetBool(bool* out, std::string_view v) {
  if (v != "true" && v != "false") return Status::InvalidArgument("'" + std::string(v) + "' is not one of true, false");
  *out = v == "true";
  return Status::Ok();
}

Status SetLabels(NodeLabels* out, std::string_view v, std::string_view what) {
  auto labels = ParseNodeLabels(v, what);
  if (!labels.ok()) return labels.status();
  *out = std::move(*labels);
  return Status::Ok();
}

Status SetLabelKeys(std::vector<std::string>* out, std::string_view v) {
  auto keys = ParseLabelKeys(v, "label keys");
  if (!keys.ok()) return keys.status();
  *out = std::move(*keys);
  return Status::Ok();
}

}  // namespace

Result<uint64_t> ParseUnsigned(std::string_view text, int base, uint64_t max) {
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v, base);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    return Status::InvalidArgument("'" + std::string(text) + "' is not a non-negative integer");
  }
  if (v > max) {
    return Status::InvalidArgument(std::string(text) + " is larger than " + std::to_string(max));
  }
  return v;
}

const std::vector<Setting>& Settings() {
  static const std::vector<Setting> kSettings = {
      {"csi_endpoint", false, "CSI gRPC endpoint: unix:///path or /path",
       [](Config* c, std::string_view v) {
         auto path = ParseUnixEndpoint(v);
         if (!path.ok()) return path.status();
         c->csi_endpoint = v;
         c->csi_socket_path = *path;
         return Status::Ok();
       }},
      {"socket_mode", false, "octal mode of the CSI socket file (default 0600)",
       [](Config* c, std::string_view v) {
         auto m = ParseUnsigned(v, 8, 0777);
         if (!m.ok()) return Status::InvalidArgument("'" + std::string(v) + "' is not an octal mode up to 0777");
         c->socket_mode = static_cast<uint32_t>(*m);
         return Status::Ok();
       }},
      {"socket_group", false, "group owning the CSI socket file",
       [](Config* c, std::string_view v) { return SetNonEmpty(&c->socket_group, v); }},
      {"node_id", false, "CSI node id (default: hostname)",
       [](Config* c, std::string_view v) {
         if (v.size() > 256) return Status::InvalidArgument("longer than 256 bytes");
         return SetNonEmpty(&c->node_id, v);
       }},
      {"driver_name", false, "CSI driver name",
       [](Config* c, std::string_view v) {
         // CSI: at most 63 characters, alphanumerics, '-', '.' and '_', starting
         // and ending with an alphanumeric.
         auto alnum = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) != 0; };
         if (v.empty() || v.size() > 63) return Status::InvalidArgument("must be 1 to 63 characters");
         if (!alnum(v.front()) || !alnum(v.back())) {
           return Status::InvalidArgument("must begin and end with a letter or digit");
         }
         for (char ch : v) {
           if (!alnum(ch) && ch != '-' && ch != '.' && ch != '_') {
             return Status::InvalidArgument(std::string("character '") + ch + "' is not allowed");
           }
         }
         c->driver_name = v;
         return Status::Ok();
       }},
      {"state_dir", false, "directory for the node journal and logs",
       [](Config* c, std::string_view v) { return SetAbsolutePath(&c->state_dir, v); }},
      {"health_listen", false, "host:port of the health endpoint; port 0 disables it",
       [](Config* c, std::string_view v) {
         auto hp = ParseHostPort(v);
         if (!hp.ok()) return hp.status();
         c->health_listen = v;
         c->health = *hp;
         return Status::Ok();
       }},
      {"log_level", false, "debug, info, warn or error",
       [](Config* c, std::string_view v) {
         if (!ParseLogLevel(v, &c->log_level)) {
           return Status::InvalidArgument("'" + std::string(v) + "' is not one of debug, info, warn, error");
         }
         return Status::Ok();
       }},
      {"ceph_csi_config", false, "ceph-csi cluster config.json",
       [](Config* c, std::string_view v) { return SetNonEmpty(&c->ceph_csi_config, v); }},
      {"kms_config", false, "ceph-csi KMS config.json for encrypted volumes",
       [](Config* c, std::string_view v) { return SetNonEmpty(&c->kms_config, v); }},
      {"ceph_conf", false, "ceph.conf for librados and rbd-nbd (default: their own search)",
       [](Config* c, std::string_view v) { return SetNonEmpty(&c->ceph_conf, v); }},
      {"device_links", false, "root of the stable names POOL[/NS]/IMAGE of mapped devices, or off",
       [](Config* c, std::string_view v) {
         if (v == "off") {
           c->device_links.clear();
           return Status::Ok();
         }
         NBDK_RETURN_IF_ERROR(CheckPathRoot(v).WithContext("not off"));
         c->device_links = v;
         return Status::Ok();
       }},
      {"ceph_dir", false, "without ceph_csi_config, the clusters are the NAME.conf files here",
       [](Config* c, std::string_view v) { return SetAbsolutePath(&c->ceph_dir, v); }},
      {"key_dir", false, "directory (tmpfs) for per-volume 0600 cephx key files",
       [](Config* c, std::string_view v) { return SetAbsolutePath(&c->key_dir, v); }},
      {"csi_root", false,
       "every staging, target and volume path of a request must lie beneath this directory (kubelet's root "
       "directory; Nomad's stage_publish_base_dir)",
       [](Config* c, std::string_view v) {
         NBDK_RETURN_IF_ERROR(CheckPathRoot(v));
         c->csi_root = v;
         return Status::Ok();
       }},
      {"mount_roots", false,
       "comma-separated directories beneath which operators mount volumes too (bare metal: e.g. /mnt)",
       [](Config* c, std::string_view v) {
         std::vector<std::string> roots;
         size_t start = 0;
         while (start <= v.size()) {
           size_t end = v.find(',', start);
           if (end == std::string_view::npos) end = v.size();
           std::string_view root = v.substr(start, end - start);
           start = end + 1;
           if (root.empty()) continue;
           NBDK_RETURN_IF_ERROR(CheckPathRoot(root).WithContext("'" + std::string(root) + "'"));
           roots.emplace_back(root);
         }
         c->mount_roots = std::move(roots);
         return Status::Ok();
       }},
      {"rbd_nbd", false, "rbd-nbd executable",
       [](Config* c, std::string_view v) { return SetNonEmpty(&c->rbd_nbd_path, v); }},
      {"io_timeout_ms", true, "block queue request timeout set on each nbd device (ms)",
       [](Config* c, std::string_view v) { return SetRange(&c->io_timeout_ms, v, 1000, 600000); }},
      {"stuck_io_limit", true,
       "IO held this long without a completion has rbd-nbd asked why; stuck, it is "
       "re-attached (s, 0: never)",
       [](Config* c, std::string_view v) { return SetRange(&c->stuck_io_limit_s, v, 0, 86400); }},
      {"reattach_timeout", true, "rbd-nbd --reattach-timeout (s)",
       [](Config* c, std::string_view v) { return SetRange(&c->reattach_timeout_s, v, 10, 3600); }},
      {"max_concurrent_attaches", true, "rbd-nbd maps and attaches started at once, the rest queued (0: no bound)",
       [](Config* c, std::string_view v) { return SetRange(&c->max_concurrent_attaches, v, 0, 1024); }},
      {"break_dead_locks", false, "true (default) or false: break a dead rbd-nbd's image lock before re-attaching",
       [](Config* c, std::string_view v) { return SetBool(&c->break_dead_locks, v); }},
      {"status_output", false, "true or false (default): /status shows each mapping's recent rbd-nbd output",
       [](Config* c, std::string_view v) { return SetBool(&c->status_shows_output, v); }},
      {"setmetadata", false,
       "true (default) or false: CreateVolume writes the PVC/PV names it is given as image metadata "
       "(ceph-csi's --setmetadata)",
       [](Config* c, std::string_view v) { return SetBool(&c->set_metadata, v); }},
      {"child_scopes", false,
       "auto (default: each rbd-nbd in a systemd scope of its own when the host's systemd is reachable) or off",
       [](Config* c, std::string_view v) {
         if (v != "auto" && v != "off")
           return Status::InvalidArgument("'" + std::string(v) + "' is not one of auto, off");
         c->child_scopes = v == "auto";
         return Status::Ok();
       }},
      {"systemd_bus", false,
       "sd-bus address of the host's systemd for child scopes, e.g. unix:path=/run/host-systemd/private (default: "
       "/run/systemd/private, else the system bus)",
       [](Config* c, std::string_view v) { return SetNonEmpty(&c->systemd_bus, v); }},
      {"node_labels", false,
       "comma-separated KEY=VALUE labels of this node, e.g. topology.kubernetes.io/zone=z1 (what ceph-csi reads "
       "from the Node object)",
       [](Config* c, std::string_view v) { return SetLabels(&c->node_labels, v, "node_labels"); }},
      {"node_labels_file", false, "file of this node's KEY=VALUE labels, read at start (one per line; # comments)",
       [](Config* c, std::string_view v) { return SetAbsolutePath(&c->node_labels_file, v); }},
      {"domain_labels", false,
       "comma-separated node labels whose values are the node's topology segments (ceph-csi's --domainlabels)",
       [](Config* c, std::string_view v) { return SetLabelKeys(&c->domain_labels, v); }},
      {"crush_location_labels", false,
       "comma-separated node labels that locate the node for read affinity where config.json's readAffinity "
       "names none (ceph-csi's --crush-location-labels)",
       [](Config* c, std::string_view v) { return SetLabelKeys(&c->crush_location_labels, v); }},
      {"on_stop", false, "leave (children keep serving) or detach",
       [](Config* c, std::string_view v) {
         if (v == "leave") {
           c->stop_policy = StopPolicy::kLeaveRunning;
         } else if (v == "detach") {
           c->stop_policy = StopPolicy::kDetach;
         } else {
           return Status::InvalidArgument("'" + std::string(v) + "' is not one of leave, detach");
         }
         return Status::Ok();
       }},
  };
  return kSettings;
}

// Former names of settings, still accepted as flag and as JSON key alike:
// csi_root was kubelet_root while Kubernetes was the only orchestrator.
constexpr SettingAlias kAliases[] = {{"kubelet_root", "csi_root"}};

std::span<const SettingAlias> SettingAliases() { return kAliases; }

Status ResolveNodeTopology(Config* c) {
  if (!c->node_labels_file.empty()) {
    std::ifstream in(c->node_labels_file);
    if (!in)
      return Status::InvalidArgument(Status::FromErrno(errno, "--node-labels-file " + c->node_labels_file).message());
    std::stringstream text;
    text << in.rdbuf();
    auto labels = ParseNodeLabels(text.str(), "--node-labels-file " + c->node_labels_file);
    if (!labels.ok()) return labels.status();
    for (auto& [key, value] : *labels) {
      if (!c->node_labels.emplace(key, value).second) {
        return Status::InvalidArgument("--node-labels-file " + c->node_labels_file + ": " + key +
                                       " is given by --node-labels too");
      }
    }
  }
  auto topology = NodeTopology(c->domain_labels, c->node_labels, c->driver_name);
  if (!topology.ok()) return topology.status().WithContext("--domain-labels");
  c->topology = std::move(*topology);
  return Status::Ok();
}

}  // namespace nbdk
