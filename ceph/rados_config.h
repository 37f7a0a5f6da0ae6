// RadosConfig: how to reach one Ceph cluster as one cephx user, and the
// mapping of librados/librbd -errno results to Status.
//
// The key itself never passes through nbdkeeper's memory: librados reads it
// from `keyfile` (a file holding only the base64 key, as rbd-nbd --keyfile).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "ceph/image_spec.h"

namespace nbdk {

struct RadosConfig {
  std::string ceph_conf;              // path; empty: librados' default search
  std::vector<std::string> monitors;  // "host:port" or "[v2:..,v1:..]"
  std::string user_id;                // cephx user without "client."
  std::string keyfile;                // path of the file holding the key
  // Bounds rados_connect (client_mount_timeout); every later mon/OSD
  // operation on the connection gets OpTimeoutS().
  int timeout_s = 10;

  // "monitors 10.0.0.1:6789,10.0.0.2:6789 (conf /etc/ceph/ceph.conf) as
  // client.csi": names the connection in errors and logs. No secret.
  std::string Describe() const;
  // The RadosClients cache key: conf path, sorted monitors and user. Two
  // configs with the same key share one connection (see RadosClients).
  std::string CacheKey() const;
};

// The one way from an image to its cluster: the RadosConfig that reaches
// `image`'s cluster (monitors, ceph.conf) as its cephx user and key file,
// each cluster operation bounded by `timeout_s`. Pool, namespace and image
// are not part of a connection and are ignored.
RadosConfig RadosConfigForImage(const ImageSpec& image, int timeout_s);

// How long one mon or OSD operation may take (rados_mon_op_timeout,
// rados_osd_op_timeout): timeout_s beyond the time Ceph takes to declare a
// dead OSD down and re-send its ops to the next (osd_heartbeat_grace 20 s +
// osd_heartbeat_interval 6 s). Shorter, a merely slow or failing-over
// cluster times ops out inside librbd's state machines, which retry some
// without end or take error paths seldom run (as tcmu-runner reasons).
int OpTimeoutS(const RadosConfig& config);

// Checks every field and that `keyfile` is a readable regular file. The
// error names the field. Touches the filesystem: call it in blocking work
// (RadosCluster::Connect does).
Status ValidateRadosConfig(const RadosConfig& config);

// BLOCKING (reads `keyfile`). A fingerprint of the key in `keyfile`
// (surrounding whitespace ignored), never the key itself: RadosClients
// shares a connection only between callers that present the same key.
// The error names the keyfile.
Result<std::string> KeyFingerprint(const std::string& keyfile);

// librados/librbd return value `rc` (< 0) as a Status "<what>: <strerror>".
// Blocklisting and lost sessions are Unavailable, missing caps
// FailedPrecondition; the rest as Status::FromErrno.
Status StatusFromRados(int rc, std::string_view what);

// True for the results that mean the connection itself is unusable (the
// client was blocklisted or shut down, lost its session, or the cluster
// stopped answering): ESHUTDOWN (librados' EBLOCKLISTED), ENOTCONN,
// ETIMEDOUT. Accepts rc with either sign.
bool IsConnectionError(int rc);

}  // namespace nbdk
