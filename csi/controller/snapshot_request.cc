#include "csi/controller/snapshot_request.h"

#include <charconv>

#include "base/quote_field.h"

namespace nbdk {

Result<CreateSnapshotParams> ParseCreateSnapshotRequest(const csi::v1::CreateSnapshotRequest& request) {
  CreateSnapshotParams out;
  NBDK_RETURN_IF_ERROR(CheckRequestName("name", request.name()));
  out.name = request.name();
  if (request.source_volume_id().empty()) return Status::InvalidArgument("source_volume_id: missing");
  auto decoded = DecodeVolumeId(request.source_volume_id());
  if (!decoded.ok()) {
    return Status::NotFound("source_volume_id " + QuoteField(request.source_volume_id()) +
                            " does not exist: " + decoded.status().message());
  }
  auto secrets = ParseControllerSecrets(request.secrets());
  if (!secrets.ok()) return secrets.status();
  out.source = VolumeRef{request.source_volume_id(), std::move(*decoded), std::move(*secrets)};
  return out;
}

Result<std::optional<VolumeRef>> ParseDeleteSnapshotRequest(const csi::v1::DeleteSnapshotRequest& request) {
  if (request.snapshot_id().empty()) return Status::InvalidArgument("snapshot_id: missing");
  auto decoded = DecodeVolumeId(request.snapshot_id());
  if (!decoded.ok()) return std::optional<VolumeRef>();
  auto secrets = ParseControllerSecrets(request.secrets());
  if (!secrets.ok()) return secrets.status();
  return std::optional<VolumeRef>(VolumeRef{request.snapshot_id(), std::move(*decoded), std::move(*secrets)});
}

Result<ListSnapshotsParams> ParseListSnapshotsRequest(const csi::v1::ListSnapshotsRequest& request) {
  ListSnapshotsParams out;
  if (request.max_entries() < 0) return Status::InvalidArgument("max_entries: negative");
  out.max_entries = request.max_entries();
  const std::string& token = request.starting_token();
  if (!token.empty()) {
    auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), out.offset);
    if (ec != std::errc() || end != token.data() + token.size()) {
      return Status::Aborted("starting_token " + QuoteField(token) + " was not handed out by this plugin");
    }
  }
  if (!request.snapshot_id().empty()) {
    out.snapshot_id_text = request.snapshot_id();
    auto id = DecodeVolumeId(request.snapshot_id());
    if (id.ok()) out.snapshot_id = std::move(*id);
    out.matches_nothing |= !id.ok();
  }
  if (!request.source_volume_id().empty()) {
    out.source_volume_id_text = request.source_volume_id();
    auto id = DecodeVolumeId(request.source_volume_id());
    if (id.ok()) out.source_volume_id = std::move(*id);
    out.matches_nothing |= !id.ok();
  }
  auto secrets = ParseControllerSecrets(request.secrets());
  if (!secrets.ok()) return secrets.status();
  out.secrets = std::move(*secrets);
  return out;
}

}  // namespace nbdk
