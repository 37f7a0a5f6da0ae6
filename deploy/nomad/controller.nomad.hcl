# nbdkeeperd's Controller service as Nomad's CSI controller plugin (a
# service job): CreateVolume, DeleteVolume, ControllerExpandVolume and
# snapshots, for `nomad volume create`, `delete`, `snapshot create`. It only
# talks to Ceph: no privileges, no host paths. One instance: Nomad sends
# each controller call to one healthy instance and reschedules it when its
# node goes; the DaemonSet's second replica exists only for Kubernetes'
# leader-elected sidecars. The controller does not advertise
# PUBLISH_UNPUBLISH_VOLUME, so Nomad skips ControllerPublishVolume.
job "nbdkeeper-controller" {
  type = "service"

  constraint {
    attribute = "${attr.kernel.name}"
    value     = "linux"
  }

  group "controller" {
    count = 1

    task "nbdkeeperd" {
      driver = "docker"

      config {
        image = "localhost/nbdkeeperd:0.1.0"

        args = [
          "--driver-name=rbd.nbdkeeper.io",
          "--csi-endpoint=unix:///csi/csi.sock",
          "--state-dir=/local/state",
          "--key-dir=/secrets/keys",
          "--ceph-csi-config=/local/ceph-csi-config/config.json",
        ]
      }

      # The node job's cluster list: the file beside this job file.
      template {
        destination = "local/ceph-csi-config/config.json"
        data        = file("ceph-csi-config.json")
      }

      csi_plugin {
        id        = "nbdkeeper"
        type      = "controller"
        mount_dir = "/csi"
      }

      resources {
        cpu    = 200
        memory = 128
      }
    }
  }
}
