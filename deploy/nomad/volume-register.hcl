# An existing ceph-csi RBD volume (one ceph-csi's provisioner created, e.g.
# for a Kubernetes PV) handed to Nomad: `nomad volume register
# volume-register.hcl`. external_id is ceph-csi's volume ID (the PV's
# spec.csi.volumeHandle: version, cluster ID length, cluster ID, pool ID,
# the image's UUID); context is the volume context ceph-csi's CreateVolume
# answered (the PV's spec.csi.volumeAttributes), which Nomad sends to
# NodeStageVolume as it is. Registration asks the controller plugin's
# ValidateVolumeCapabilities, which decodes external_id and reads the
# image's journal entry with these secrets.
id          = "legacy-db"
name        = "legacy-db"
type        = "csi"
plugin_id   = "nbdkeeper"
external_id = "0001-0024-b9127830-b0cc-4e34-aa47-9d1a2e9949a8-0000000000000003-6f1e2a8c-3b4d-4e5f-8a9b-0c1d2e3f4a5b"

capability {
  access_mode     = "single-node-writer"
  attachment_mode = "file-system"
}

mount_options {
  fs_type = "ext4"
}

secrets {
  userID  = "nomad"
  userKey = "AQBvB2ZnAAAAABAAqJ2C8l1QF3WdTLMyWvfq6w=="
}

# clusterID selects the config.json entry; imageName is
# csi-vol-<the UUID of external_id>; without it the node plugin looks the
# name up in the pool's RADOS journal.
context {
  clusterID = "b9127830-b0cc-4e34-aa47-9d1a2e9949a8"
  pool      = "nomad"
  imageName = "csi-vol-6f1e2a8c-3b4d-4e5f-8a9b-0c1d2e3f4a5b"
  mounter   = "rbd-nbd"
}
