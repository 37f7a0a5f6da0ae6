// CreateVolume's rule of ownership: the omap reservation of the request
// name (csi/controller/omap_volume_journal.h) alone says which image a CreateVolume
// may return. An image that exists without that reservation naming it is
// another volume's, or an operator's `rbd create`: CreateVolume never
// adopts it, since deleting the volume would then delete the other's data.
//
//  - The name's reservation names the image: a repeated CreateVolume, which
//    gets that image (made or finished by the caller).
//  - No reservation, and an image the creation would make exists (the
//    nbdkeeper.io/imageName image; for a clone of a volume, its temporary
//    clone too): AlreadyExists naming it, with nothing written.
//  - The name's reservation names another image than the request's
//    nbdkeeper.io/imageName, or records another encryption (encrypted or
//    not, another KMS ID): AlreadyExists (an incompatible repeat).
//  - Otherwise the name is reserved afresh, with its encryption (the KMS ID
//    and "block", as ceph-csi records them); the caller then makes its image
//    exclusively (an empty volume's rbd_create fails on an existing image),
//    which closes the window between this check and the create.
#pragma once

#include <functional>
#include <string>

#include "base/status.h"
#include "csi/controller/controller_request.h"
#include "csi/controller/omap_volume_journal.h"

namespace nbdk {

struct VolumeClaim {
  VolumeReservation reservation;
  bool fresh = false;  // reserved by this call: none of its images existed
};

// Whether an image of that name exists in the image pool. BLOCKING.
using ImageExists = std::function<Result<bool>(const std::string& image)>;

// BLOCKING. Looks `params.name` up in `journal` (cleaning stale keys),
// else checks the images as above and reserves. On AlreadyExists nothing
// was reserved and no image touched.
Result<VolumeClaim> ClaimVolumeName(VolumeJournal& journal, const CreateVolumeParams& params,
                                    const ImageExists& image_exists);

}  // namespace nbdk
