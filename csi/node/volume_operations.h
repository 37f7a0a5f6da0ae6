// The CSI Node operations other than stage (stage_transaction.h).
// Each takes the parsed request, holds the volume's op lock until `done`,
// and runs on the loop thread.
//
//  - UnstageVolume: unmount <staging>/<id>, unmap through the Supervisor,
//    remove key file, stash and journal record (last). A volume whose
//    journal still lists published targets is FAILED_PRECONDITION naming
//    them: unmapping under a live bind mount would turn it into IO errors.
//    A volume without a record (never staged here, or staged by another
//    plugin: ceph-csi's node plugin before a switch) or whose record was
//    quarantined at start (journal/node_journal.h) is OK only once no nbd
//    device carries its cookie and nothing is mounted at <staging>/<id>
//    (so a volume never staged is OK); until then FAILED_PRECONDITION
//    saying why and naming what is left, none of which it touches.
//  - PublishVolume: bind-mount the staged filesystem (or the device, for
//    block) onto the target, read-only when asked, once the supervisor
//    confirmed the device is still the volume's (Supervisor::CheckDevice:
//    FAILED_PRECONDITION otherwise); idempotent; the target
//    is journaled so a restarted daemon knows it. A SINGLE_NODE_SINGLE_WRITER
//    publish while the volume is published at another target is
//    FAILED_PRECONDITION (the journal keeps no access mode: a CO sends one
//    volume's publishes with one mode).
//  - UnpublishVolume: unmount and remove the target; idempotent.
//  - VolumeStats: statvfs bytes and inodes, or the device size for block,
//    plus the volume condition from the Supervisor.
//  - ExpandVolume: grow the nbd device to the image's size when it is
//    smaller than asked (csi/node/device_growth.h), then resize2fs / xfs_growfs;
//    block just reports the size. An image still smaller than asked is
//    FAILED_PRECONDITION naming both sizes; so is a snapshot's volume
//    (read-only, it never grows).
#pragma once

#include <functional>

#include "csi/node/node_context.h"
#include "csi/node/node_request.h"
#include "csi/proto/csi.pb.h"

namespace nbdk {

void UnstageVolume(NodeContext& node, UnstageRequest request, VolumeOpLock lock, std::function<void(Status)> done);
void PublishVolume(NodeContext& node, PublishRequest request, VolumeOpLock lock, std::function<void(Status)> done);
void UnpublishVolume(NodeContext& node, UnpublishRequest request, VolumeOpLock lock, std::function<void(Status)> done);
void VolumeStats(NodeContext& node, VolumeStatsRequest request, csi::v1::NodeGetVolumeStatsResponse* response,
                 std::function<void(Status)> done);
void ExpandVolume(NodeContext& node, ExpandRequest request, VolumeOpLock lock,
                  csi::v1::NodeExpandVolumeResponse* response, std::function<void(Status)> done);

// The CSI VolumeCondition for a volume, from its mapping's state: abnormal
// while its rbd-nbd is dead, re-attaching or expired, or when nothing serves
// it (staged under a boot other than `boot_id`, this boot's id), with a
// message a person can act on.
void FillVolumeCondition(const Supervisor& supervisor, const VolumeRecord& record, const std::string& boot_id,
                         csi::v1::VolumeCondition* out);

}  // namespace nbdk
