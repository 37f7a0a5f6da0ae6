// nbdkeeperctl's command line, parsed into one CtlCommand. Pure: no I/O.
//
//   nbdkeeperctl [--config FILE] [--csi-endpoint URL] [--health ADDR]
//                [--persist-file FILE] COMMAND ...
// Every problem is an InvalidArgument naming the option (exit status 2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace nbdk::ctl {

// Where the daemon is. Unset fields come from the daemon's config file
// (--config) and then from the daemon's defaults.
struct GlobalOptions {
  std::string config_file;
  std::string csi_endpoint;
  std::string health;
  std::string persist_file = "/etc/nbdkeeper/volumes.json";
};

// One mapping as `map` asks for it (and as --persist keeps it).
struct MapSpec {
  std::string pool;
  std::string rados_namespace;
  std::string image;
  std::string cluster_id;  // "": the only cluster in the daemon's ceph-csi config
  std::string user_id = "admin";
  std::string keyfile;     // "": the Ceph keyring of user_id
  std::string fs_type = "ext4";
  bool block = false;
  std::string mount;       // "": no publish (a filesystem stays at its staging mount point)
  bool read_only = false;
  int64_t size_bytes = 0;  // > 0: create the image through the Controller
  // "pool/[ns/]image".
  std::string Spec() const;
};

enum class CtlAction { kMap, kUnmap, kExpand, kList, kWatch, kLogs, kHealth, kApply, kHelp, kVersion };

struct CtlCommand {
  CtlAction action = CtlAction::kHelp;
  GlobalOptions global;
  MapSpec map;             // kMap; for kExpand, user_id and keyfile
  bool persist = false;    // kMap --persist
  std::string target;      // kUnmap, kExpand, kLogs: image, volume ID, device or mount point
  int64_t size_bytes = 0;  // kExpand
  bool json = false;       // kList --json
};

Result<CtlCommand> ParseCtlArgs(const std::vector<std::string>& args);

// "10G", "512M", "1T", "4096" (binary units) -> bytes. InvalidArgument
// for anything else, zero, or more than 1 EiB.
Result<int64_t> ParseSize(std::string_view text);

// "pool/image" or "pool/ns/image" -> pool, namespace, image, each checked
// with Ceph's naming rule.
Status ParseImageSpec(std::string_view text, MapSpec* out);

std::string CtlUsage();

}  // namespace nbdk::ctl
