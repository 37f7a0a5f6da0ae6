#include "daemon/ctl/ctl_args.h"

#include <algorithm>
#include <map>

#include "base/quote_field.h"
#include "ceph/image_spec.h"

namespace nbdk::ctl {
namespace {

// Options that take a value; the rest are flags.
const std::map<std::string, std::string> kValueOptions = {
    {"--config", "global"},  {"--csi-endpoint", "global"}, {"--health", "global"}, {"--persist-file", "global"},
    {"--cluster", "map"},    {"--id", "map"},              {"--keyfile", "map"},   {"--fs", "map"},
    {"--mount", "map"},      {"--size", "map"},
};

Status Apply(const std::string& name, const std::string& value, CtlCommand* c) {
  MapSpec& m = c->map;
  if (name == "--config") c->global.config_file = value;
  if (name == "--csi-endpoint") c->global.csi_endpoint = value;
  if (name == "--health") c->global.health = value;
  if (name == "--persist-file") c->global.persist_file = value;
  if (name == "--cluster") {
    NBDK_RETURN_IF_ERROR(CheckCephName("--cluster", value, true));
    m.cluster_id = value;
  }
  if (name == "--id") {
    if (value.empty() || value.front() == '-' || value.find_first_of(" \t\n/") != std::string::npos) {
      return Status::InvalidArgument("--id: " + QuoteField(value) + " is not a cephx user name (without 'client.')");
    }
    m.user_id = value;
  }
  if (name == "--keyfile") m.keyfile = value;
  if (name == "--fs") {
    if (value != "ext4" && value != "xfs") {
      return Status::InvalidArgument("--fs: " + QuoteField(value) + " (ext4 or xfs)");
    }
    m.fs_type = value;
  }
  if (name == "--mount") {
    if (value.empty() || value.front() != '/') return Status::InvalidArgument("--mount: an absolute path is needed");
    m.mount = value;
  }
  if (name == "--size") {
    auto size = ParseSize(value);
    if (!size.ok()) return size.status().WithContext("--size");
    m.size_bytes = *size;
  }
  return Status::Ok();
}

Result<CtlAction> ActionNamed(const std::string& name) {
  static const std::map<std::string, CtlAction> kActions = {
      {"map", CtlAction::kMap},       {"unmap", CtlAction::kUnmap},   {"expand", CtlAction::kExpand},
      {"list", CtlAction::kList},     {"status", CtlAction::kList},   {"watch", CtlAction::kWatch},
      {"logs", CtlAction::kLogs},     {"health", CtlAction::kHealth}, {"apply", CtlAction::kApply},
      {"help", CtlAction::kHelp},     {"version", CtlAction::kVersion},
  };
  auto it = kActions.find(name);
  if (it == kActions.end()) {
    return Status::InvalidArgument("unknown command " + QuoteField(name) + " (see nbdkeeperctl --help)");
  }
  return it->second;
}

Status CheckPositionals(CtlCommand* c, const std::vector<std::string>& pos, const std::vector<std::string>& flags) {
  auto want = [&](size_t n, const char* usage) {
    return pos.size() == n ? Status::Ok() : Status::InvalidArgument(std::string("usage: nbdkeeperctl ") + usage);
  };
  bool is_map = c->action == CtlAction::kMap;
  for (const std::string& f : flags) {
    bool ok = (f == "--json" && c->action == CtlAction::kList) ||
              ((f == "--block" || f == "--ro" || f == "--persist") && is_map);
    if (!ok) return Status::InvalidArgument("option " + QuoteField(f) + " does not apply here");
    if (f == "--json") c->json = true;
    if (f == "--block") c->map.block = true;
    if (f == "--ro") c->map.read_only = true;
    if (f == "--persist") c->persist = true;
  }
  switch (c->action) {
    case CtlAction::kMap:
      NBDK_RETURN_IF_ERROR(want(1, "map POOL/[NAMESPACE/]IMAGE [options]"));
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

std::string MapSpec::Spec() const { return pool + "/" + (rados_namespace.empty() ? "" : rados_namespace + "/") + image; }

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
  ImageSpec image;
  if (!SplitImagePath(text, &image)) {
    return Status::InvalidArgument(QuoteField(text) + " is not POOL/IMAGE or POOL/NAMESPACE/IMAGE");
  }
  out->pool = image.pool;
  out->image = image.image;
  out->rados_namespace = image.rados_namespace;
  NBDK_RETURN_IF_ERROR(CheckCephName("pool", out->pool, true));
  NBDK_RETURN_IF_ERROR(CheckCephName("namespace", out->rados_namespace, false));
  return CheckCephName("image", out->image, true);
}

Result<CtlCommand> ParseCtlArgs(const std::vector<std::string>& args) {
  CtlCommand c;
  std::vector<std::string> positionals, flags;
  bool have_action = false;
  for (size_t i = 1; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg == "--help" || arg == "-h" || arg == "--version") {
      c.action = arg == "--version" ? CtlAction::kVersion : CtlAction::kHelp;
      return c;
    }
    if (arg.starts_with("--")) {
      std::string name = arg.substr(0, arg.find('='));
      if (!kValueOptions.count(name)) {
        flags.push_back(arg);
        continue;
      }
      std::string value;
      if (name.size() < arg.size()) {
        value = arg.substr(name.size() + 1);
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return Status::InvalidArgument(name + ": missing value");
      }
      NBDK_RETURN_IF_ERROR(Apply(name, value, &c));
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
  NBDK_RETURN_IF_ERROR(CheckPositionals(&c, positionals, flags));
  bool fs_given = std::find_if(args.begin(), args.end(), [](const std::string& a) { return a.starts_with("--fs"); }) !=
                  args.end();
  if (c.map.block && fs_given) return Status::InvalidArgument("--block and --fs exclude each other");
  return c;
}

std::string CtlUsage() {
  return R"(Usage: nbdkeeperctl [global options] COMMAND [arguments]
The operator's command line for nbdkeeperd: maps Ceph RBD images through the
daemon's CSI socket and reads its health endpoint.

Commands:
  map POOL/[NAMESPACE/]IMAGE [--cluster ID] [--id USER] [--keyfile FILE]
      [--fs ext4|xfs | --block] [--mount PATH] [--ro] [--size SIZE] [--persist]
                     stage (and with --mount publish) the image; --size creates
                     it first; --persist brings it back after a reboot
  unmap IMAGE|PATH   unpublish and unstage (IMAGE, volume ID, device or mount)
  expand IMAGE SIZE  grow the image (volumes made with --size), device and filesystem
  list, status       the volumes table (--json for scripts)
  watch              the table, refreshed every second
  logs VOLUME        the rbd-nbd output the daemon kept for a volume
  health             exit 0 when ready and every volume is connected
  apply              map every persisted volume that is not mapped (boot)

Global options:
  --config FILE         the daemon's config file (endpoints and state dir from it)
  --csi-endpoint URL    default: the daemon's, unix:///run/nbdkeeper/csi.sock
  --health ADDR         default: the daemon's, 127.0.0.1:9810
  --persist-file FILE   default: /etc/nbdkeeper/volumes.json

Keys: --keyfile FILE holds the cephx key (or a keyring); without it the
keyring /etc/ceph/ceph.client.USER.keyring is read. Never on the command line.

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
