#include "csi/controller/volume_claim.h"

#include <vector>

#include "csi/controller/clone_operations.h"
#include "csi/controller/volume_encryption.h"

namespace nbdk {

Result<VolumeClaim> ClaimVolumeName(VolumeJournal& journal, const CreateVolumeParams& params,
                                    const ImageExists& image_exists) {
  auto found = journal.Lookup(params.name);
  if (!found.ok()) return found.status();
  if (*found) {
    const VolumeReservation& reserved = **found;
    if (!params.image_name.empty() && params.image_name != reserved.image_name) {
      return Status::AlreadyExists("name " + params.name + " is the volume of image " + reserved.image_name +
                                   ", not of image " + params.image_name + "; nothing changed");
    }
    NBDK_RETURN_IF_ERROR(CheckRepeatedEncryption(params.name, reserved.encryption, params.encryption_kms_id));
    return VolumeClaim{reserved, false};
  }
  // <prefix><uuid> is named after a uuid the reservation makes new.
  if (!params.image_name.empty()) {
    std::vector<std::string> made = {params.image_name};
    if (params.source.kind == ContentSource::Kind::kVolume) made.push_back(TemporaryCloneName(params.image_name));
    for (const std::string& image : made) {
      auto exists = image_exists(image);
      if (!exists.ok()) return exists.status();
      if (*exists) {
        return Status::AlreadyExists("image " + image + " in pool " + params.pool +
                                     " exists and no CreateVolume of name " + params.name +
                                     " made it; it is left untouched");
      }
    }
  }
  auto reserved = journal.Reserve(params.name, params.image_name, RecordedSource(params.source), params.name_prefix,
                                  JournalEncryptionFor(params.encryption_kms_id));
  if (!reserved.ok()) return reserved.status();
  return VolumeClaim{*reserved, true};
}

}  // namespace nbdk
