# A new volume: `nomad volume create volume-create.hcl` has the controller
# plugin create an RBD image with ceph-csi's parameters (the same as the
# Kubernetes example StorageClass's), and registers it with Nomad under `id`.
# `name` is the CSI name, which ceph-csi's RADOS journal reserves: unique per
# cluster. The controller's answer (the ceph-csi volume ID and the volume
# context: clusterID, pool, imageName, mounter) is what Nomad later sends to
# the node plugin's NodeStageVolume.
id        = "db"
name      = "nomad-db"
type      = "csi"
plugin_id = "nbdkeeper"

capacity_min = "10GiB"
capacity_max = "10GiB"

capability {
  access_mode     = "single-node-writer"
  attachment_mode = "file-system"
}

capability {
  access_mode     = "single-node-reader-only"
  attachment_mode = "file-system"
}

mount_options {
  fs_type     = "ext4"
  mount_flags = ["noatime"]
}

# The cephx user for CreateVolume and for NodeStageVolume (Nomad sends the
# volume's secrets to both): userID without "client.", userKey as
# `ceph auth get-key client.<userID>` prints it. A made-up key: put your own.
secrets {
  userID  = "nomad"
  userKey = "AQBvB2ZnAAAAABAAqJ2C8l1QF3WdTLMyWvfq6w=="
}

# clusterID: an entry of the plugins' config.json.
parameters {
  clusterID     = "b9127830-b0cc-4e34-aa47-9d1a2e9949a8"
  pool          = "nomad"
  imageFeatures = "layering,exclusive-lock,object-map,fast-diff"
  mounter       = "rbd-nbd"
}
