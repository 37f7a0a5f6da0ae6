// ImageSpec: everything needed to reach one RBD image as a given cephx user.
// Shared by the supervisor (rbd-nbd argv, lock breaking) and csi/.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace nbdk {

struct ImageSpec {
  std::string pool;
  std::string rados_namespace;  // empty: the default namespace
  std::string image;
  std::vector<std::string> monitors;  // "host:port"; empty: from ceph.conf
  std::string ceph_conf;              // path; empty: librados/rbd-nbd default
  std::string user_id;                // cephx user without "client."
  std::string keyfile;                // 0600 file holding the key; never the key
  // A snapshot of the image, which rbd-nbd maps read-only; "": the image
  // itself. The image's clients and lock are the image's either way.
  std::string snap;
  // "pool/[ns/]image": the image (also a snapshot's), as the lock breaker
  // and the fence name it.
  std::string Path() const { return pool + "/" + (rados_namespace.empty() ? "" : rados_namespace + "/") + image; }
  // "pool/[ns/]image[@snap]": what is mapped, as rbd-nbd and `rbd device
  // map` take it and log lines name it.
  std::string Spec() const { return Path() + (snap.empty() ? "" : "@" + snap); }
};

// The inverse of ImageSpec::Path: "pool/image" or "pool/ns/image" split at
// '/' into pool, namespace and image of `image` (nothing else is set).
// False, `image` untouched, unless there are 2 or 3 parts. The parts are
// not checked here (they may be empty): callers apply CheckCephName.
bool SplitImagePath(std::string_view path, ImageSpec* image);

// The inverse of ImageSpec::Spec: SplitImagePath of what comes before the
// first '@', and the snapshot after it. False, `image` untouched, when
// SplitImagePath is, or when an '@' has nothing after it (that is no
// snapshot, and never the image itself). Not checked here either.
bool SplitImageSpec(std::string_view spec, ImageSpec* image);

// The one rule for pool, RADOS namespace and image names from outside
// (requests, StorageClass parameters, journal records): 1 to 255 bytes, no
// whitespace, control character, '/' or '@' (they separate the parts of
// "pool/ns/image@snap"), not "." or "..", and never starting with '-', so
// that a name on rbd-nbd's command line can never be read as an option.
// InvalidArgument naming `field`; empty is OK unless `required`.
Status CheckCephName(std::string_view field, std::string_view value, bool required);

}  // namespace nbdk
