// RbdStep: one named librbd step of a Controller operation (CreateSnapshot,
// CreateVolume, empty or from a snapshot or a volume, encrypted or not).
// Each operation's steps are one list (SnapshotImageSteps,
// VolumeImageSteps, with the encryption steps of
// csi/controller/volume_encryption.h in them) that the operation runs in
// order and that test/csi/controller/rbd_step_crash_vm_test.cc stops after
// every prefix of, to leave what a crash between two steps leaves.
//
// Every step is idempotent: run again after any prefix of its list (or the
// whole list) ran, it finds what was done and does only the rest. Except
// an empty volume's first step, its rbd_create, which fails on an existing
// image (AlreadyExists): CreateVolume runs it only when the reserved image
// is missing, so an image it finds is another's (csi/controller/volume_claim.h);
// on a made image it runs the rest, the encryption steps, alone.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"

namespace nbdk {

struct RbdStep {
  std::string name;             // what it does, e.g. "snapshot rbd-img@csi-snap-<uuid>"
  std::function<Status()> run;  // BLOCKING; uses IoCtxs the step list's maker was given
};

// BLOCKING. Runs `steps` in order and stops at the first failure; `ran`
// (may be null) gets the number of steps that succeeded.
inline Status RunRbdSteps(const std::vector<RbdStep>& steps, size_t* ran = nullptr) {
  if (ran) *ran = 0;
  for (const RbdStep& step : steps) {
    NBDK_RETURN_IF_ERROR(step.run());
    if (ran) ++*ran;
  }
  return Status::Ok();
}

}  // namespace nbdk
