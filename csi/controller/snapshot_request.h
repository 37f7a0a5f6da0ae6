// Validation of the CSI snapshot requests (CreateSnapshot, DeleteSnapshot,
// ListSnapshots) against the CSI v1 spec, as csi/controller/controller_request.h does
// for volumes. Pure.
//
// Snapshot IDs are encoded like volume IDs (journal/volume_id.h): the pool ID
// and uuid name the snapshot's image pool and csi.snap.<uuid>. An ID that
// does not decode names no snapshot of this driver.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "csi/controller/controller_request.h"
#include "csi/proto/csi.pb.h"

namespace nbdk {

// CreateSnapshot. name and source_volume_id are required (InvalidArgument);
// a source that does not decode is NotFound. Parameters are ignored:
// ceph-csi's VolumeSnapshotClass carries clusterID (the source's is used)
// and optionally pool and snapshotNamePrefix, which nbdkeeper does not
// follow (docs/design/controller-layout.md "What nbdkeeper does not follow,
// and why").
struct CreateSnapshotParams {
  std::string name;
  VolumeRef source;
};
Result<CreateSnapshotParams> ParseCreateSnapshotRequest(const csi::v1::CreateSnapshotRequest& request);

// DeleteSnapshot: nullopt when the ID does not decode (no such snapshot:
// deleting it succeeds); an empty ID is InvalidArgument.
Result<std::optional<VolumeRef>> ParseDeleteSnapshotRequest(const csi::v1::DeleteSnapshotRequest& request);

// ListSnapshots. max_entries < 0 is InvalidArgument; a starting_token this
// plugin did not hand out is Aborted, as the spec asks. Filters that do not
// decode match nothing (`matches_nothing`).
struct ListSnapshotsParams {
  int32_t max_entries = 0;  // 0: no limit
  size_t offset = 0;        // the starting token: entries already returned
  std::optional<VolumeId> snapshot_id;
  std::string snapshot_id_text;
  std::optional<VolumeId> source_volume_id;
  std::string source_volume_id_text;
  bool matches_nothing = false;
  ControllerSecrets secrets;
};
Result<ListSnapshotsParams> ParseListSnapshotsRequest(const csi::v1::ListSnapshotsRequest& request);

}  // namespace nbdk
