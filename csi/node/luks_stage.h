// The LUKS step of NodeStageVolume and its undo, as ceph-csi's Node does
// them (internal/rbd/nodeserver.go setupEncryption, rbd_attach.go
// encryptDevice/openEncryptedDevice), so that either driver stages what the
// other encrypted (issue 28):
//
//  - the passphrase: the KMS the volume context names (the daemon's
//    --kms-config, encryption/kms_config.h), then the image's metadata
//    (csi/image_encryption.h) with the request's encryptionPassphrase;
//  - the device: formatted only when the image says encryptionPrepared and
//    blkid finds nothing on it, then marked "encrypted"; a device with a
//    LUKS header opens; anything else is refused, nothing overwritten;
//  - the mapper luks-rbd-<volume ID> (encryption/luks_volume.h), opened on
//    the volume's /dev/nbdX, or kept when it is open on that device already
//    (a stage retried after the daemon died midway).
//
// The mapper sits on the nbd device, so a re-attach of a dead rbd-nbd to
// the same device keeps it and its mount (nothing here runs then). The
// passphrase lives in one SecretBytes, shared only with the blocking calls
// that need it, and is wiped when the last of them is done.
// Loop thread only; `done` runs on the loop.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "csi/node/filesystem.h"
#include "csi/node/image_resolver.h"
#include "csi/node/node_context.h"
#include "csi/node/node_request.h"

namespace nbdk {

// What the image's state and the device's signature call for. Pure.
enum class LuksOpening {
  kOpen,            // a LUKS header, the image says encrypted
  kMarkThenOpen,    // a LUKS header, the image still says encryptionPrepared
                    // (a stage that formatted died before marking it)
  kFormatThenOpen,  // blank, the image says encryptionPrepared
};

// `state` is the image's rbd.csi.ceph.com/encrypted (nullopt: absent).
// FailedPrecondition naming the volume: no state (the image was not
// created encrypted), an unknown state, a blank device the image says is
// encrypted (the header is gone: never formatted again), a blank device
// staged read-only, or any other signature on the device.
Result<LuksOpening> PlanLuksOpening(const std::string& volume_id, const std::optional<std::string>& state,
                                    const DeviceSignature& device, bool read_only);

// Formats when the plan says so, marks the image "encrypted", opens the
// mapper on `device`. Returns the mapper's name. The request carries the
// KMS ID and the secret (StageRequest::encryption).
void OpenStagedLuks(NodeContext& node, const StageRequest& request, const ResolvedImage& image,
                    const std::string& device, std::function<void(Result<std::string>)> done);

// Closes the volume's mapper (luks-rbd-<volume ID>) when it is open on one
// of `devices` (the volume's nbd devices: the record's, or those carrying
// its cookie); OK when it is not open, or when device-mapper is not there
// at all (an unencrypted volume's host needs none). FailedPrecondition
// when it is open on another device (not this daemon's to close) or still
// in use.
void CloseVolumeLuks(NodeContext& node, const std::string& volume_id, std::vector<std::string> devices,
                     StatusCallback done);

}  // namespace nbdk
