// nbdkeeperctl's command line, parsed into one CtlCommand. Pure: no I/O.
//
//   nbdkeeperctl [--config FILE] [--csi-endpoint URL] [--health ADDR]
//                [--persist-file FILE] COMMAND ...
// Every problem is an InvalidArgument naming the option (exit status 2).
// Each option is one row of a table in ctl_args.cc: its spellings, what
// value it takes, the commands it applies to, what it sets and its line in
// --help (and so in the man page, which help2man makes of --help).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
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
  std::string pool = "rbd";  // rbd's default pool when the spec names none
  std::string rados_namespace;
  std::string image;
  std::string snap;  // "": the image itself; a snapshot is mapped read-only (ReadOnly)
  // --cluster as given: a config.json cluster ID, or a ceph.conf's NAME
  // (daemon/ctl/cluster_choice.h); "": the default.
  std::string cluster;
  std::string user_id = "admin";
  std::string keyfile;  // "": the keyring librados would read (daemon/ctl/cephx_key.h)
  std::string fs_type = "ext4";
  bool block = false;
  std::string mount;       // "": no publish (a filesystem stays at its staging mount point)
  bool read_only = false;  // --ro; see ReadOnly
  // -o: rbd-nbd's map options, comma-separated, through the daemon's
  // allow-list (csi/map_options.h); --exclusive adds "exclusive".
  std::string map_options;
  // --mount-options: the filesystem's, through the mount allow-list (csi/mount_flags.h).
  std::vector<std::string> mount_options;
  int64_t size_bytes = 0;  // > 0: create the image through the Controller
  // --encrypt: the file (0600, never a command-line value) whose bytes are
  // the LUKS passphrase, KMS default (docs/design/encryption.md); "": not
  // encrypted.
  std::string passphrase_file;
  // "pool/[ns/]image[@snap]".
  std::string Spec() const;
  // Mapped and mounted read-only: --ro, or a snapshot (as rbd maps one).
  bool ReadOnly() const { return read_only || !snap.empty(); }
};

enum class CtlAction { kMap, kUnmap, kUnmapAll, kExpand, kList, kWatch, kLogs, kHealth, kApply, kHelp, kVersion };

// How map and list print their result: kText is a sentence on a terminal
// and the device path alone otherwise (or with --quiet); kJson an object.
enum class CtlOutput { kText, kQuiet, kJson };

struct CtlCommand {
  CtlAction action = CtlAction::kHelp;
  GlobalOptions global;
  MapSpec map;                          // kMap; for kExpand, cluster, user_id and keyfile
  bool persist = false;                 // kMap --persist
  bool force = false;                   // kUnmap, kUnmapAll --force
  bool persisted_only = false;          // kUnmapAll --persisted: the volumes file's volumes alone
  std::string target;                   // kUnmap, kExpand, kLogs: image, volume ID, device or mount point
  int64_t size_bytes = 0;               // kExpand
  CtlOutput output = CtlOutput::kText;  // kMap, kList (--json, --format json, --quiet)
};

Result<CtlCommand> ParseCtlArgs(const std::vector<std::string>& args);

// "10G", "512M", "1T", "4096" (binary units) -> bytes. InvalidArgument
// for anything else, zero, or more than 1 EiB.
Result<int64_t> ParseSize(std::string_view text);

// "[pool/[ns/]]image[@snap]" -> pool (default "rbd"), namespace, image and
// snapshot, each checked with Ceph's naming rule.
Status ParseImageSpec(std::string_view text, MapSpec* out);

// The rules a mapping obeys however it is given (the command line or the
// volumes file): fs type, an absolute mount point, map options through the
// daemon's allow-list, mount options through the mount allow-list and not
// on a block volume; a snapshot neither made (size) nor encrypted, and
// without the map options the daemon refuses for one. InvalidArgument
// naming the field.
Status CheckMapSpec(const MapSpec& spec);

// The volume ID `map` gives an existing image (a ceph-csi static volume):
// its name; for its snapshot, "<image>.snap.<snap>" (the image's name
// then travels as imageName, so both may be mapped side by side).
std::string StaticVolumeId(const MapSpec& spec);

// The option table's rows as --help shows them (ctl_usage.cc).
struct CtlOptionDoc {
  std::string_view name;   // "--options"
  std::string_view alias;  // "-o", or ""
  std::string_view value;  // "OPTS"; "": a switch
  std::string_view help;
  std::string commands;  // the commands it applies to ("map, expand"); "": every command
};
std::vector<CtlOptionDoc> CtlOptionDocs();

// --help: the commands, then every option of the table (ctl_usage.cc).
std::string CtlUsage();

}  // namespace nbdk::ctl
