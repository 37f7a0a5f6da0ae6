#include "csi/volume_capability.h"

#include "base/quote_field.h"
#include "csi/mount_flags.h"

namespace nbdk {
namespace {

using Mode = csi::v1::VolumeCapability::AccessMode;

}  // namespace

Result<VolumeCapabilitySpec> ParseVolumeCapability(const csi::v1::VolumeCapability& cap, std::string_view field_name,
                                                   Code unsupported_code) {
  std::string field(field_name);
  VolumeCapabilitySpec spec;
  switch (cap.access_type_case()) {
    case csi::v1::VolumeCapability::kBlock:
      spec.block = true;
      break;
    case csi::v1::VolumeCapability::kMount: {
      const auto& mount = cap.mount();
      spec.fs_type = mount.fs_type().empty() ? "ext4" : mount.fs_type();
      if (spec.fs_type != "ext4" && spec.fs_type != "xfs") {
        return Status(unsupported_code,
                      field + ".mount.fs_type: " + QuoteField(spec.fs_type) + " is not supported (only ext4 and xfs)");
      }
      auto options = ParseMountFlags({mount.mount_flags().begin(), mount.mount_flags().end()}, spec.fs_type,
                                     field + ".mount.mount_flags");
      if (!options.ok()) return options.status();
      spec.mount_options = std::move(options).value();
      break;
    }
    case csi::v1::VolumeCapability::ACCESS_TYPE_NOT_SET:
      return Status::InvalidArgument(field + ": one of block or mount must be set");
  }

  if (!cap.has_access_mode() || cap.access_mode().mode() == Mode::UNKNOWN) {
    return Status::InvalidArgument(field + ".access_mode: missing");
  }
  spec.access_mode = cap.access_mode().mode();
  switch (spec.access_mode) {
    case Mode::SINGLE_NODE_WRITER:
    case Mode::SINGLE_NODE_SINGLE_WRITER:
    case Mode::SINGLE_NODE_MULTI_WRITER:
      break;
    case Mode::SINGLE_NODE_READER_ONLY:
      spec.read_only = true;
      break;
    case Mode::MULTI_NODE_READER_ONLY:
      spec.read_only = true;
      spec.multi_node = true;
      break;
    case Mode::MULTI_NODE_MULTI_WRITER:
      if (!spec.block) {
        return Status(unsupported_code, field +
                                            ".access_mode: MULTI_NODE_MULTI_WRITER is supported only for block "
                                            "volumes (a filesystem mounted on several nodes would be corrupted)");
      }
      spec.multi_node = true;
      break;
    default: {
      std::string name = Mode::Mode_Name(spec.access_mode);  // "" for a value this proto does not know
      if (name.empty()) name = std::to_string(static_cast<int>(spec.access_mode));
      return Status(unsupported_code, field + ".access_mode: " + name + " is not supported");
    }
  }
  return spec;
}

}  // namespace nbdk
