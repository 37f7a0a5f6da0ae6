// CSI Controller requests (csi/controller/controller_request.h): the input is protobuf
// wire bytes, read as each Controller request in turn. A volume that
// CreateVolume accepts gets an ID the node accepts; every error keeps to the
// error rule (base/quote_field.h).
#include "csi/controller/controller_request.h"
#include "journal/volume_id.h"
#include "test/fuzz/fuzz_input.h"
#include "test/fuzz/fuzz_protobuf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace v1 = csi::v1;
  v1::CreateVolumeRequest create;
  if (create.ParseFromArray(data, static_cast<int>(size))) {
    auto params = nbdk::ParseCreateVolumeRequest(create);
    NBDK_FUZZ_CHECK(nbdk::fuzz::WithinErrorRule(params.status()));
    if (params.ok()) {
      nbdk::VolumeId id{.cluster_id = params->cluster_id, .object_uuid = "b0a3c3d5-1d1a-4a9e-9a8f-2d7e0d9b7d51"};
      NBDK_FUZZ_CHECK(nbdk::ValidateVolumeId(nbdk::EncodeVolumeId(id)).ok());
    }
  }
  nbdk::fuzz::ParseAs<v1::DeleteVolumeRequest>(data, size, nbdk::ParseDeleteVolumeRequest);
  nbdk::fuzz::ParseAs<v1::ControllerExpandVolumeRequest>(data, size, nbdk::ParseControllerExpandRequest);
  nbdk::fuzz::ParseAs<v1::ValidateVolumeCapabilitiesRequest>(data, size, nbdk::ParseValidateRequest);
  return 0;
}
