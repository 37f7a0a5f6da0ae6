#include "daemon/ctl/ctl_args.h"

#include <map>
#include <utility>

#include "base/quote_field.h"
#include "ceph/image_spec.h"
#include "csi/map_options.h"
#include "csi/mount_flags.h"

namespace nbdk::ctl {
namespace {

constexpr uint32_t Bit(CtlAction a) { return uint32_t{1} << static_cast<int>(a); }
constexpr uint32_t kAll = ~uint32_t{0};
constexpr uint32_t kMapOnly = Bit(CtlAction::kMap);
constexpr uint32_t kCredentials = Bit(CtlAction::kMap) | Bit(CtlAction::kExpand);

using Setter = Status (*)(const std::string& value, CtlCommand* c);

// One option: its spellings, whether it takes a value, the commands it
// applies to and what it sets. A new option is a new row.
struct OptionRule {
  std::string_view name;
  std::string_view alias;  // a short spelling ("-o"), or ""
  bool takes_value;
  uint32_t actions;
  Setter set;
};

Status SetCluster(const std::string& v, CtlCommand* c) {
  NBDK_RETURN_IF_ERROR(CheckCephName("--cluster", v, true));
  c->map.cluster = v;
  return Status::Ok();
}

Status SetId(const std::string& v, CtlCommand* c) {
  if (v.empty() || v.front() == '-' || v.find_first_of(" \t\n/") != std::string::npos) {
    return Status::InvalidArgument("--id: " + QuoteField(v) + " is not a cephx user name (without 'client.')");
  }
  c->map.user_id = v;
  return Status::Ok();
}

Status CheckFsType(const std::string& field, const std::string& v) {
  if (v != "ext4" && v != "xfs") return Status::InvalidArgument(field + ": " + QuoteField(v) + " (ext4 or xfs)");
  return Status::Ok();
}

Status CheckMountPath(const std::string& field, const std::string& v) {
  if (!v.empty() && v.front() != '/') return Status::InvalidArgument(field + ": an absolute path is needed");
  return Status::Ok();
}

// The daemon's own allow-list (and its rule for a snapshot), so a refused
// option fails here, unmapped.
Status CheckMapOptions(const std::string& field, const std::string& v, bool snapshot) {
  if (v.empty()) return Status::Ok();
  auto args = MapOptionArguments("nbd:" + v, snapshot);
  return args.ok() ? Status::Ok() : args.status().WithContext(field);
}

Status SetFs(const std::string& v, CtlCommand* c) {
  NBDK_RETURN_IF_ERROR(CheckFsType("--fs", v));
  c->map.fs_type = v;
  return Status::Ok();
}

Status SetMount(const std::string& v, CtlCommand* c) {
  NBDK_RETURN_IF_ERROR(CheckMountPath("--mount", v.empty() ? "-" : v));
  c->map.mount = v;
  return Status::Ok();
}

Status SetEncrypt(const std::string& v, CtlCommand* c) {
  if (v.empty() || v.front() != '/') {
    return Status::InvalidArgument("--encrypt: " + QuoteField(v) + " is not an absolute path to a passphrase file");
  }
  c->map.passphrase_file = v;
  return Status::Ok();
}

Status SetSize(const std::string& v, CtlCommand* c) {
  auto size = ParseSize(v);
  if (!size.ok()) return size.status().WithContext("--size");
  c->map.size_bytes = *size;
  return Status::Ok();
}

Status AddMapOptions(const std::string& v, CtlCommand* c) {
  if (v.empty()) return Status::InvalidArgument("-o: an empty option list");
  NBDK_RETURN_IF_ERROR(CheckMapOptions("-o", v, false));
  std::string& o = c->map.map_options;
  o += (o.empty() ? "" : ",") + v;
  return Status::Ok();
}

Status SetFormat(const std::string& v, CtlCommand* c) {
  if (v != "json" && v != "plain") return Status::InvalidArgument("--format: " + QuoteField(v) + " (json or plain)");
  c->output = v == "json" ? CtlOutput::kJson : CtlOutput::kText;
  return Status::Ok();
}

const OptionRule kOptions[] = {
    {"--config", "", true, kAll, [](const std::string& v, CtlCommand* c) { c->global.config_file = v; return Status::Ok(); }},
    {"--csi-endpoint", "", true, kAll, [](const std::string& v, CtlCommand* c) { c->global.csi_endpoint = v; return Status::Ok(); }},
    {"--health", "", true, kAll, [](const std::string& v, CtlCommand* c) { c->global.health = v; return Status::Ok(); }},
    {"--persist-file", "", true, kAll, [](const std::string& v, CtlCommand* c) { c->global.persist_file = v; return Status::Ok(); }},
    {"--cluster", "", true, kCredentials, SetCluster},
    {"--id", "", true, kCredentials, SetId},
    {"--keyfile", "", true, kCredentials, [](const std::string& v, CtlCommand* c) { c->map.keyfile = v; return Status::Ok(); }},
    {"--fs", "", true, kMapOnly, SetFs},
    {"--block", "", false, kMapOnly, [](const std::string&, CtlCommand* c) { c->map.block = true; return Status::Ok(); }},
    {"--mount", "", true, kMapOnly, SetMount},
    {"--mount-options", "", true, kMapOnly, [](const std::string& v, CtlCommand* c) { c->map.mount_options.push_back(v); return Status::Ok(); }},
    {"--options", "-o", true, kMapOnly, AddMapOptions},
    {"--exclusive", "", false, kMapOnly, [](const std::string&, CtlCommand* c) { return AddMapOptions("exclusive", c); }},
    {"--ro", "", false, kMapOnly, [](const std::string&, CtlCommand* c) { c->map.read_only = true; return Status::Ok(); }},
    {"--read-only", "", false, kMapOnly, [](const std::string&, CtlCommand* c) { c->map.read_only = true; return Status::Ok(); }},
    {"--size", "", true, kMapOnly, SetSize},
    {"--encrypt", "", true, kMapOnly, SetEncrypt},
    {"--persist", "", false, kMapOnly, [](const std::string&, CtlCommand* c) { c->persist = true; return Status::Ok(); }},
    {"--quiet", "-q", false, kMapOnly, [](const std::string&, CtlCommand* c) { c->output = CtlOutput::kQuiet; return Status::Ok(); }},
    {"--json", "", false, kMapOnly | Bit(CtlAction::kList), [](const std::string&, CtlCommand* c) { c->output = CtlOutput::kJson; return Status::Ok(); }},
    {"--format", "", true, kMapOnly | Bit(CtlAction::kList), SetFormat},
    {"--force", "", false, Bit(CtlAction::kUnmap) | Bit(CtlAction::kUnmapAll), [](const std::string&, CtlCommand* c) { c->force = true; return Status::Ok(); }},
    {"--persisted", "", false, Bit(CtlAction::kUnmapAll), [](const std::string&, CtlCommand* c) { c->persisted_only = true; return Status::Ok(); }},
};

const OptionRule* RuleFor(std::string_view spelling) {
  for (const OptionRule& r : kOptions) {
    if (r.name == spelling || (!r.alias.empty() && r.alias == spelling)) return &r;
  }
  return nullptr;
}

Result<CtlAction> ActionNamed(const std::string& name) {
  static const std::map<std::string, CtlAction> kActions = {
      {"map", CtlAction::kMap},       {"unmap", CtlAction::kUnmap},   {"unmap-all", CtlAction::kUnmapAll},
      {"expand", CtlAction::kExpand}, {"list", CtlAction::kList},     {"status", CtlAction::kList},
      {"watch", CtlAction::kWatch},   {"logs", CtlAction::kLogs},     {"health", CtlAction::kHealth},
      {"apply", CtlAction::kApply},   {"help", CtlAction::kHelp},     {"version", CtlAction::kVersion},
  };
  auto it = kActions.find(name);
  if (it == kActions.end()) {
    return Status::InvalidArgument("unknown command " + QuoteField(name) + " (see nbdkeeperctl --help)");
  }
  return it->second;
}

Status CheckPositionals(CtlCommand* c, const std::vector<std::string>& pos) {
  auto want = [&](size_t n, const char* usage) {
    return pos.size() == n ? Status::Ok() : Status::InvalidArgument(std::string("usage: nbdkeeperctl ") + usage);
  };
  switch (c->action) {
    case CtlAction::kMap:
      NBDK_RETURN_IF_ERROR(want(1, "map [POOL/[NAMESPACE/]]IMAGE[@SNAP] [options]"));
      return ParseImageSpec(pos[0], &c->map);
    case CtlAction::kUnmap:
    case CtlAction::kLogs:
      NBDK_RETURN_IF_ERROR(want(1, c->action == CtlAction::kUnmap ? "unmap IMAGE|PATH" : "logs VOLUME"));
      c->target = pos[0];
      return Status::Ok();
    case CtlAction::kExpand: {
      NBDK_RETURN_IF_ERROR(want(2, "expand IMAGE SIZE"));
      c->target = pos[0];
      auto size = ParseSize(pos[1]);
      if (!size.ok()) return size.status().WithContext("SIZE");
      c->size_bytes = *size;
      return Status::Ok();
    }
    default:
      return want(0, "COMMAND (see --help)");
  }
}

}  // namespace

Status CheckMapSpec(const MapSpec& m) {
  NBDK_RETURN_IF_ERROR(CheckFsType("fs", m.fs_type));
  NBDK_RETURN_IF_ERROR(CheckMountPath("mount", m.mount));
  NBDK_RETURN_IF_ERROR(CheckMapOptions("options", m.map_options, !m.snap.empty()));
  if (m.block && !m.mount_options.empty()) return Status::InvalidArgument("mount_options: a block volume has no filesystem");
  if (!m.mount_options.empty()) {
    auto flags = ParseMountFlags(m.mount_options, m.fs_type, "mount_options");
    if (!flags.ok()) return flags.status();
  }
  if (m.snap.empty()) return Status::Ok();
  // `rbd snap create` makes a snapshot; a LUKS header is opened read-write.
  if (m.size_bytes > 0) {
    return Status::InvalidArgument("--size: " + QuoteField(m.Spec()) + " is a snapshot; map never makes one");
  }
  if (!m.passphrase_file.empty()) {
    return Status::InvalidArgument("encrypt: " + QuoteField(m.Spec()) +
                                   " is a snapshot, which nbdkeeper does not decrypt");
  }
  return Status::Ok();
}

std::string StaticVolumeId(const MapSpec& spec) { return spec.image + (spec.snap.empty() ? "" : ".snap." + spec.snap); }

std::string MapSpec::Spec() const {
  return pool + "/" + (rados_namespace.empty() ? "" : rados_namespace + "/") + image + (snap.empty() ? "" : "@" + snap);
}

Result<int64_t> ParseSize(std::string_view text) {
  std::string_view digits = text;
  int shift = 0;
  if (!digits.empty()) {
    switch (digits.back()) {
      case 'K': case 'k': shift = 10; break;
      case 'M': case 'm': shift = 20; break;
      case 'G': case 'g': shift = 30; break;
      case 'T': case 't': shift = 40; break;
      default: break;
    }
    if (shift != 0) digits.remove_suffix(1);
  }
  if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string_view::npos) {
    return Status::InvalidArgument(QuoteField(text) + " is not a size (e.g. 10G, 512M, 1T)");
  }
  int64_t value = std::stoll(std::string(digits));
  if (value == 0 || value > (int64_t{1} << (60 - shift))) {
    return Status::InvalidArgument(QuoteField(text) + " is zero or larger than 1 EiB");
  }
  return value << shift;
}

Status ParseImageSpec(std::string_view text, MapSpec* out) {
  std::string_view path = text.substr(0, text.find('@'));
  // As rbd: an image alone is in the pool "rbd".
  bool bare = !path.empty() && path.find('/') == std::string_view::npos;
  ImageSpec image;
  if (!SplitImageSpec((bare ? "rbd/" : "") + std::string(text), &image)) {
    if (text.ends_with('@')) return Status::InvalidArgument(QuoteField(text) + ": no snapshot name after '@'");
    return Status::InvalidArgument(QuoteField(text) + " is not [POOL/[NAMESPACE/]]IMAGE[@SNAP]");
  }
  out->pool = image.pool;
  out->image = image.image;
  out->rados_namespace = image.rados_namespace;
  out->snap = image.snap;
  NBDK_RETURN_IF_ERROR(CheckCephName("pool", out->pool, true));
  NBDK_RETURN_IF_ERROR(CheckCephName("namespace", out->rados_namespace, false));
  NBDK_RETURN_IF_ERROR(CheckCephName("snapshot", out->snap, false));
  return CheckCephName("image", out->image, true);
}

Result<CtlCommand> ParseCtlArgs(const std::vector<std::string>& args) {
  CtlCommand c;
  std::vector<std::string> positionals;
  std::vector<std::pair<const OptionRule*, std::string>> given;
  bool have_action = false;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h" || arg == "--version") {
      c.action = arg == "--version" ? CtlAction::kVersion : CtlAction::kHelp;
      return c;
    }
    if (arg.size() > 1 && arg.front() == '-') {
      std::string name = arg.substr(0, arg.starts_with("--") ? arg.find('=') : 2);
      const OptionRule* rule = RuleFor(name);
      if (rule == nullptr) return Status::InvalidArgument("unknown option " + QuoteField(name) + " (see --help)");
      std::string value;
      if (!rule->takes_value) {
        if (name.size() < arg.size()) return Status::InvalidArgument(name + " takes no value");
      } else if (name.size() < arg.size()) {
        value = arg.substr(name.size() + (arg[name.size()] == '=' ? 1 : 0));
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return Status::InvalidArgument(name + ": missing value");
      }
      given.emplace_back(rule, std::move(value));
      continue;
    }
    if (!have_action) {
      auto action = ActionNamed(arg);
      if (!action.ok()) return action.status();
      c.action = *action;
      have_action = true;
      continue;
    }
    positionals.push_back(arg);
  }
  if (!have_action) return Status::InvalidArgument("no command given (see nbdkeeperctl --help)");
  bool fs_given = false;
  for (const auto& [rule, value] : given) {
    if ((rule->actions & Bit(c.action)) == 0) {
      return Status::InvalidArgument("option " + std::string(rule->name) + " does not apply here");
    }
    NBDK_RETURN_IF_ERROR(rule->set(value, &c));
    fs_given |= rule->name == "--fs";
  }
  NBDK_RETURN_IF_ERROR(CheckPositionals(&c, positionals));
  if (c.action != CtlAction::kMap) return c;
  if (c.map.block && fs_given) return Status::InvalidArgument("--block and --fs exclude each other");
  NBDK_RETURN_IF_ERROR(CheckMapSpec(c.map));
  return c;
}

std::string CtlUsage() {
  return R"(Usage: nbdkeeperctl [global options] COMMAND [arguments]
The operator's command line for nbdkeeperd: maps Ceph RBD images through the
daemon's CSI socket and reads its health endpoint.

Commands:
  map [POOL/[NAMESPACE/]]IMAGE[@SNAP] [--cluster NAME] [--id USER]
      [--keyfile FILE] [--fs ext4|xfs | --block] [--mount PATH]
      [--mount-options OPTS] [-o|--options OPTS] [--exclusive] [--ro]
      [--size SIZE] [--persist] [--encrypt PASSPHRASE_FILE] [--quiet | --json]
                     stage (and with --mount publish) the image (pool "rbd"
                     when none is named), or its snapshot SNAP read-only (as
                     rbd device map); --size
                     creates it first; --persist brings it back after a
                     reboot; --encrypt: LUKS2 as ceph-csi's, the passphrase
                     the file's bytes (mode 0600; with --size, or an image
                     marked encryptionPrepared). Prints the device path
                     alone unless on a terminal; --json: an object
  unmap IMAGE|PATH [--force]
                     unpublish and unstage (IMAGE, volume ID, device or
                     mount) and drop it from the volumes file; --force:
                     first unmount what else is mounted from its device
  unmap-all [--persisted] [--force]
                     unmap every volume (--persisted: those of the volumes
                     file), persisted ones in its reverse order; the file
                     stays (shutdown: nbdkeeper-volumes.service)
  expand IMAGE SIZE  grow the image (volumes made with --size), device and filesystem
  list, status       the volumes table (--format json or --json for scripts:
                     rbd device list's keys and nbdkeeper's)
  watch              the table, refreshed every second
  logs VOLUME        the rbd-nbd output the daemon kept for a volume
  health             exit 0 when ready and every volume is connected
  apply              map every persisted volume that is not mapped (boot)

Global options:
  --config FILE         the daemon's config file (endpoints, clusters and state
                        dir from it); default /etc/nbdkeeper/config.json if it exists
  --csi-endpoint URL    default: the daemon's, unix:///run/nbdkeeper/csi.sock
  --health ADDR         default: the daemon's, 127.0.0.1:9810
  --persist-file FILE   default: /etc/nbdkeeper/volumes.json

Clusters: with ceph-csi's config.json (the daemon's ceph_csi_config),
--cluster names one of its cluster IDs; without it, --cluster NAME means
/etc/ceph/NAME.conf (default ceph), as for rbd. Keys: --keyfile FILE holds
the cephx key (or a keyring); without it, the keyring librados would read
(the ceph.conf's key, keyfile or keyring settings, else
/etc/ceph/NAME.client.USER.keyring). Never on the command line.

Exit status:
  0  done
  1  the daemon refused or failed the operation (the message says why)
  2  bad command line
  3  nbdkeeperd is not running (no socket, or nothing listens)
  4  no permission on the daemon's socket
  5  no such volume or image
  6  health: the daemon is not ready, or a volume is not connected
)";
}

}  // namespace nbdk::ctl
