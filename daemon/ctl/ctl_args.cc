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
  std::string_view value;  // what it takes, as --help names it ("FILE"); "": a switch
  uint32_t actions;
  Setter set;
  std::string_view help;
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
    {"--config", "", "FILE", kAll,
     [](const std::string& v, CtlCommand* c) {
       c->global.config_file = v;
       return Status::Ok();
     },
     "the daemon's config file (endpoints, clusters and state dir from it); default /etc/nbdkeeper/config.json if it "
     "exists"},
    {"--csi-endpoint", "", "URL", kAll,
     [](const std::string& v, CtlCommand* c) {
       c->global.csi_endpoint = v;
       return Status::Ok();
     },
     "the daemon's CSI socket; default: the config file's, else unix:///run/nbdkeeper/csi.sock"},
    {"--health", "", "ADDR", kAll,
     [](const std::string& v, CtlCommand* c) {
       c->global.health = v;
       return Status::Ok();
     },
     "the daemon's health endpoint; default: the config file's, else 127.0.0.1:9810"},
    {"--persist-file", "", "FILE", kAll,
     [](const std::string& v, CtlCommand* c) {
       c->global.persist_file = v;
       return Status::Ok();
     },
     "the volumes file; default /etc/nbdkeeper/volumes.json"},
    {"--cluster", "", "NAME", kCredentials, SetCluster,
     "a cluster ID of ceph-csi's config.json; without one, /etc/ceph/NAME.conf (default ceph)"},
    {"--id", "", "USER", kCredentials, SetId, "the cephx user, without 'client.' (default admin)"},
    {"--keyfile", "", "FILE", kCredentials,
     [](const std::string& v, CtlCommand* c) {
       c->map.keyfile = v;
       return Status::Ok();
     },
     "the cephx key or a keyring; default: the keyring librados would read"},
    {"--fs", "", "ext4|xfs", kMapOnly, SetFs, "the filesystem made on a blank image (default ext4)"},
    {"--block", "", "", kMapOnly,
     [](const std::string&, CtlCommand* c) {
       c->map.block = true;
       return Status::Ok();
     },
     "the raw block device, no filesystem"},
    {"--mount", "", "PATH", kMapOnly, SetMount, "publish it there too (a bind mount of the staged volume)"},
    {"--mount-options", "", "OPTS", kMapOnly,
     [](const std::string& v, CtlCommand* c) {
       c->map.mount_options.push_back(v);
       return Status::Ok();
     },
     "the filesystem's mount options, through the daemon's allow-list"},
    {"--options", "-o", "OPTS", kMapOnly, AddMapOptions,
     "rbd-nbd's map options, comma-separated, through the daemon's allow-list"},
    {"--exclusive", "", "", kMapOnly, [](const std::string&, CtlCommand* c) { return AddMapOptions("exclusive", c); },
     "rbd-nbd --exclusive: librbd refuses any other writer"},
    {"--ro", "", "", kMapOnly,
     [](const std::string&, CtlCommand* c) {
       c->map.read_only = true;
       return Status::Ok();
     },
     "mapped and mounted read-only (a snapshot always is)"},
    {"--read-only", "", "", kMapOnly,
     [](const std::string&, CtlCommand* c) {
       c->map.read_only = true;
       return Status::Ok();
     },
     "the same as --ro"},
    {"--size", "", "SIZE", kMapOnly, SetSize, "create the image first, of SIZE (10G, 512M, 1T, bytes)"},
    {"--encrypt", "", "FILE", kMapOnly, SetEncrypt,
     "LUKS2 as ceph-csi's, the passphrase the file's bytes (mode 0600; with --size, or an image marked "
     "encryptionPrepared)"},
    {"--persist", "", "", kMapOnly,
     [](const std::string&, CtlCommand* c) {
       c->persist = true;
       return Status::Ok();
     },
     "keep it in the volumes file: mapped again after a reboot (nbdkeeper-volumes.service)"},
    {"--quiet", "-q", "", kMapOnly,
     [](const std::string&, CtlCommand* c) {
       c->output = CtlOutput::kQuiet;
       return Status::Ok();
     },
     "print the device path alone, on a terminal too"},
    {"--json", "", "", kMapOnly | Bit(CtlAction::kList),
     [](const std::string&, CtlCommand* c) {
       c->output = CtlOutput::kJson;
       return Status::Ok();
     },
     "print a JSON object (list: rbd device list's keys and nbdkeeper's)"},
    {"--format", "", "json|plain", kMapOnly | Bit(CtlAction::kList), SetFormat, "json: as --json; plain: the text"},
    {"--force", "", "", Bit(CtlAction::kUnmap) | Bit(CtlAction::kUnmapAll),
     [](const std::string&, CtlCommand* c) {
       c->force = true;
       return Status::Ok();
     },
     "first unmount what else is mounted from its device"},
    {"--persisted", "", "", Bit(CtlAction::kUnmapAll),
     [](const std::string&, CtlCommand* c) {
       c->persisted_only = true;
       return Status::Ok();
     },
     "only the volumes of the volumes file, in its reverse order"},
};

const OptionRule* RuleFor(std::string_view spelling) {
  for (const OptionRule& r : kOptions) {
    if (r.name == spelling || (!r.alias.empty() && r.alias == spelling)) return &r;
  }
  return nullptr;
}

Result<CtlAction> ActionNamed(const std::string& name) {
  static const std::map<std::string, CtlAction> kActions = {
      {"map", CtlAction::kMap},       {"unmap", CtlAction::kUnmap}, {"unmap-all", CtlAction::kUnmapAll},
      {"expand", CtlAction::kExpand}, {"list", CtlAction::kList},   {"status", CtlAction::kList},
      {"watch", CtlAction::kWatch},   {"logs", CtlAction::kLogs},   {"health", CtlAction::kHealth},
      {"apply", CtlAction::kApply},   {"help", CtlAction::kHelp},   {"version", CtlAction::kVersion},
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
  if (m.block && !m.mount_options.empty())
    return Status::InvalidArgument("mount_options: a block volume has no filesystem");
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
      case 'K':
      case 'k':
        shift = 10;
        break;
      case 'M':
      case 'm':
        shift = 20;
        break;
      case 'G':
      case 'g':
        shift = 30;
        break;
      case 'T':
      case 't':
        shift = 40;
        break;
      default:
        break;
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
      if (rule->value.empty()) {
        if (name.size() < arg.size()) return Status::InvalidArgument(name + " takes no value");
      } else if (name.size() < arg.size()) {
        value = arg.substr(name.size() + (arg[name.size()] == '=' ? 1 : 0));
      } else if (i + 1 < args.size() && !args[i + 1].starts_with("--")) {
        // A value is never an option: one given there means this one's was left out.
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

std::vector<CtlOptionDoc> CtlOptionDocs() {
  static const std::pair<CtlAction, std::string_view> kNames[] = {
      {CtlAction::kMap, "map"},       {CtlAction::kUnmap, "unmap"}, {CtlAction::kUnmapAll, "unmap-all"},
      {CtlAction::kExpand, "expand"}, {CtlAction::kList, "list"},
  };
  std::vector<CtlOptionDoc> docs;
  for (const OptionRule& r : kOptions) {
    std::string commands;
    for (const auto& [action, name] : kNames) {
      if (r.actions != kAll && (r.actions & Bit(action)) != 0)
        commands += (commands.empty() ? "" : ", ") + std::string(name);
    }
    docs.push_back({r.name, r.alias, r.value, r.help, commands});
  }
  return docs;
}

}  // namespace nbdk::ctl
