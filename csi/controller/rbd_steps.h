// RbdStep: one named librbd step of a Controller operation (CreateSnapshot,
// CreateVolume from a snapshot or a volume). Each operation's steps are one
// list (SnapshotImageSteps, VolumeImageSteps) that the operation runs in
// order and that test/csi/rbd_step_crash_vm_test.cc stops after every
// prefix of, to leave what a crash between two steps leaves.
//
// Every step is idempotent: run again after any prefix of its list (or the
// whole list) ran, it finds what was done and does only the rest. Except
// an empty volume's one step, its rbd_create, which fails on an existing
// image (AlreadyExists): CreateVolume runs it only when the reserved image
// is missing, so an image it finds is another's (csi/controller/volume_claim.h).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/status.h"

namespace nbdk {

struct RbdStep {
  std::string name;              // what it does, e.g. "snapshot rbd-img@csi-snap-<uuid>"
  std::function<Status()> run;   // BLOCKING; uses IoCtxs the step list's maker was given
};

// BLOCKING. Runs `steps` in order and stops at the first failure.
inline Status RunRbdSteps(const std::vector<RbdStep>& steps) {
  for (const RbdStep& step : steps) NBDK_RETURN_IF_ERROR(step.run());
  return Status::Ok();
}

}  // namespace nbdk
