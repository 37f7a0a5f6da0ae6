# nbdkeeperd as Nomad's CSI node plugin, on every Linux client (a system
# job). The image is built by scripts/image.sh and loaded into each client's
# Docker (`docker load`, docs/operate/nomad.md); its tag is not "latest", so the
# Docker driver uses the loaded image and pulls nothing.
#
# The client's Docker plugin needs allow_privileged = true (privileged, host
# PID) and volumes { enabled = true } (the host paths below). Nomad itself
# binds into the task: mount_dir (its csi.sock directory, the plugin's
# --csi-endpoint), stage_publish_base_dir (the host's
# <data_dir>/client/csi/node/nbdkeeper, with rshared propagation, so mounts
# made there reach the host and the allocations) and the host's /dev.
job "nbdkeeper-node" {
  type = "system"

  constraint {
    attribute = "${attr.kernel.name}"
    value     = "linux"
  }

  group "node" {
    task "nbdkeeperd" {
      driver = "docker"

      config {
        image = "localhost/nbdkeeperd:0.1.0"

        # Mounts and nbd devices need root's privileges. Host PID: rbd-nbd's
        # pids in the node journal are the host's, its child scopes are the
        # host systemd's, and a restarted daemon adopts or breaks the lock of
        # an rbd-nbd it finds there. Host network: rbd-nbd's Ceph client
        # address (the lock breaker's evidence) is the node's own.
        privileged   = true
        pid_mode     = "host"
        network_mode = "host"

        args = [
          "--driver-name=rbd.nbdkeeper.io",
          "--node-id=${node.unique.name}",
          "--csi-endpoint=unix:///csi/csi.sock",
          # Nomad sends staging and target paths beneath the plugin's
          # stage_publish_base_dir: the root they are confined to.
          "--csi-root=/csi-volumes",
          "--state-dir=/var/lib/nbdkeeper",
          "--key-dir=/run/nbdkeeper/keys",
          "--ceph-csi-config=/etc/ceph-csi-config/config.json",
          # The host's systemd: each rbd-nbd in a scope of its own, so a
          # restart of this task leaves it serving.
          "--systemd-bus=unix:path=/run/host-systemd/private",
          # /healthz, /readyz, /status and /metrics on the node's loopback.
          "--health-listen=127.0.0.1:9810",
        ]

        # Host directories Docker creates when missing, as the DaemonSet's
        # DirectoryOrCreate: the journal outlives the task, the key files stay
        # on the host's tmpfs, and the host systemd's private socket is
        # reached through its directory (systemd re-creates the socket on a
        # daemon-reexec). /sys and /lib/modules: the nbd devices' sysfs and
        # modprobe nbd. The cluster list comes from the template below.
        volumes = [
          "/var/lib/nbdkeeper:/var/lib/nbdkeeper",
          "/run/nbdkeeper:/run/nbdkeeper",
          "/sys:/sys",
          "/lib/modules:/lib/modules:ro",
          "/run/systemd:/run/host-systemd",
          "local/ceph-csi-config:/etc/ceph-csi-config:ro",
        ]
      }

      # ceph-csi's cluster list (config.json): each cluster's fsid and
      # monitors; a volume's clusterID selects its entry. `nomad job run`
      # reads the file beside this job file, as the controller job does.
      template {
        destination = "local/ceph-csi-config/config.json"
        data        = file("ceph-csi-config.json")
      }

      csi_plugin {
        id                     = "nbdkeeper"
        type                   = "node"
        mount_dir              = "/csi"
        stage_publish_base_dir = "/csi-volumes"
        # Nomad restarts the task when CSI Probe has not answered ready
        # within this time of a start; the daemon answers ready only once
        # its journal heal is done. Five minutes, as the DaemonSet's startup
        # probe: above every heal measured (docs/design/plugin-restart.md:
        # ready again 31 s at worst, loaded) and the heal's own
        # bound (60 s per re-attach, csi/heal/volume_healer.h), and the
        # kernel's reattach window (--reattach-timeout, 300 s), past which a
        # heal cannot keep IO going anyway. Nomad's 30 s default would
        # restart a daemon in the middle of a loaded heal.
        health_timeout = "5m"
      }

      # SIGTERM: the daemon stops serving CSI and leaves rbd-nbd running.
      kill_timeout = "30s"

      resources {
        cpu    = 500
        memory = 256
      }
    }
  }
}
