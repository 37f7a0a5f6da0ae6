// CSI Node requests (csi/node/node_request.h): the input is protobuf wire bytes,
// read as each Node request in turn, as gRPC would hand them to the service.
// What NodeStageVolume accepts, the supervisor accepts again before mapping;
// every error keeps to the error rule (base/quote_field.h).
#include "csi/node/node_request.h"
#include "journal/volume_id.h"
#include "supervisor/rbd_nbd_options.h"
#include "test/fuzz/fuzz_input.h"
#include "test/fuzz/fuzz_protobuf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace v1 = csi::v1;
  v1::NodeStageVolumeRequest stage;
  if (stage.ParseFromArray(data, static_cast<int>(size))) {
    auto request = nbdk::ParseStageRequest(stage);
    NBDK_FUZZ_CHECK(nbdk::fuzz::WithinErrorRule(request.status()));
    if (request.ok()) {
      NBDK_FUZZ_CHECK(nbdk::ValidateVolumeId(request->volume_id).ok());
      NBDK_FUZZ_CHECK(nbdk::ValidateRbdNbdOptions(request->map_options).ok());
    }
  }
  nbdk::fuzz::ParseAs<v1::NodeUnstageVolumeRequest>(data, size, nbdk::ParseUnstageRequest);
  nbdk::fuzz::ParseAs<v1::NodePublishVolumeRequest>(data, size, nbdk::ParsePublishRequest);
  nbdk::fuzz::ParseAs<v1::NodeUnpublishVolumeRequest>(data, size, nbdk::ParseUnpublishRequest);
  nbdk::fuzz::ParseAs<v1::NodeGetVolumeStatsRequest>(data, size, nbdk::ParseVolumeStatsRequest);
  nbdk::fuzz::ParseAs<v1::NodeExpandVolumeRequest>(data, size, nbdk::ParseExpandRequest);
  return 0;
}
