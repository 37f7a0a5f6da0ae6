// ImageFence: the one owner of the rule "one writer per image, across
// nodes": who may map an image here, and whose lock may be broken.
//
// A mapping is single-node unless it is read-only or its volume is
// MULTI_NODE_MULTI_WRITER block (MapRequest::multi_node). A single-node
// mapping starts only while no other client uses the image; "other" means
// not one of this volume's own rbd-nbd processes, present or past, compared
// by full identity (entity and address with nonce, CephClient), never by IP:
//  - a map (NodeStage) while no other client watches the image. A lock
//    owner that no longer watches is dead: librbd breaks its lock itself
//    when the new map first writes, and a fresh mount has nothing stale;
//  - a re-attach after a death while no other client watches the image or
//    holds its lock. Another client holding the lock, dead or alive, wrote
//    (or may write) since the death, and the mount this node kept predates
//    that: once that writer persists (the same client in every listing for
//    `persist_ms`), the mapping is Fenced, never re-attached. A writer seen
//    for less is waited for: a brief lock holder (a Controller resize or
//    snapshot, the mgr's mirror-snapshot schedule, a backup tool) leaves,
//    and a volume nobody took over is never fenced. One that only watches
//    an image with the exclusive-lock feature has not written (the lock is
//    ours or no one's), but it opened the image read-write (a read-only
//    open sets no watch): a snapshot, another node's stage in flight, or a
//    cooperative writer (qemu, a plain `rbd map`, rbd-nbd without
//    --exclusive) that takes the lock as soon as it is free and hands it
//    over when asked, so the re-attach's --exclusive acquire would get it
//    back after that writer wrote. The re-attach waits for it to leave, up
//    to the reattach deadline: a read-write opener that stays expires the
//    volume, liveness given up for one writer. Without the
//    feature a watcher may be writing: it counts as a writer.
//
// A lock is broken only when its owner is one of this volume's own
// processes (the caller breaks only after that process died); a stranger's
// lock is never broken, whatever mode the volume is in.
//
// A snapshot's mapping (ImageSpec::snap) is no writer: it is read-only,
// and rbd-nbd on a snapshot holds no exclusive lock (librbd shuts the lock
// down on moving to a snapshot; --exclusive is refused,
// supervisor/rbd_nbd_options.h).
// It is never fenced, whoever writes the image's head, and no lock is ever
// broken for it: a lock owner among its clients can only be a writer. It
// still watches the image's header, as every rbd-nbd does, so its clients
// are learnt like a writer's and a single-node mapping of the same image
// on this node does not count them as foreign (RoleOf, NotForeign).
// Another node's snapshot map looks like any other client there.
//
// Own processes are known by identity, once one printed its device (or
// exited without), among the clients absent before it started
// (IdentifyStarted): a single-node writer runs with --exclusive, so once
// its device is up it holds the image's lock, and librbd refuses that lock
// to every other client until it dies; the lock owner is then the process,
// and must also watch the image from this host. Any other new client is a
// stranger: the map fails naming it, the re-attach is Fenced. Where there
// is no lock to go by (an image without the exclusive-lock feature, an
// unfenced mapping, a process that exited), it is the one new watcher at
// this host's address, if exactly one appeared; several, or one elsewhere,
// name no one. Why --exclusive: docs/design/lock-breaking.md.
// The rule as a model, checked over every interleaving of two nodes:
// supervisor/one_writer.pml (its names are these).
// Pure; any thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "ceph/image_clients.h"
#include "supervisor/supervisor_config.h"

namespace nbdk {

using OwnClients = std::set<CephClient>;

// A mapping's part in the rule, from its request.
enum class ImageRole {
  kSingleWriter,  // fenced before each map and re-attach; its own dead lock is broken
  kUnfenced,      // read-only, or MULTI_NODE_MULTI_WRITER block: not fenced; its own dead lock is broken
  kSnapshot,      // a snapshot: not fenced, no lock broken, not foreign to this node's writers
};
ImageRole RoleOf(const MapRequest& request);

// The clients a single-node mapping's checks do not count as foreign: its
// own, and those of this node's snapshot mappings of the same image
// (`snapshot_mappings`). Only `own` are ever the owner whose lock is broken
// (OwnLockToBreak).
OwnClients NotForeign(const OwnClients& own, const OwnClients& snapshot_mappings);

// Every watcher and the lock owner that is not in `own`, each once.
std::vector<CephClient> ForeignClients(const ImageClients& seen, const OwnClients& own);

// OK, or FailedPrecondition "image <path> is in use by another client:
// watcher client.4123@10.0.0.2:0/77, ..." (at most 4 named; a lock owner
// that also watches is named "watcher and lock owner").
Status CheckMayMap(const std::string& image_path, const ImageClients& seen, const OwnClients& own);
// The foreign writers a re-attach saw, each with the time (ms) from which
// it was in every listing since.
using WriterSightings = std::map<CephClient, uint64_t>;
enum class ReattachVerdict { kGo, kWait, kFence };
struct ReattachCheck {
  ReattachVerdict verdict = ReattachVerdict::kGo;
  Status why;                 // kWait, kFence: FailedPrecondition naming the clients, as CheckMayMap
  WriterSightings sightings;  // to pass to the next check: the writers in `seen`
};
// `sightings`: the previous check's; `now_ms`: this listing's time. A
// writer in `sightings` and in `seen` since `persist_ms` or longer fences;
// persist_ms 0 fences at the first sight.
ReattachCheck CheckMayReattach(const std::string& image_path, const ImageClients& seen, const OwnClients& own,
                               const WriterSightings& sightings = {}, uint64_t now_ms = 0, uint64_t persist_ms = 0);

// The lock owner when it is one of `own`; nullopt otherwise.
std::optional<CephClient> OwnLockToBreak(const ImageClients& seen, const OwnClients& own);

// The clients of `after` (watchers and lock owner) that `before` lacks.
std::vector<CephClient> NewClients(const ImageClients& before, const ImageClients& after);

// What one rbd-nbd process left among the image's clients: `after` listed
// once it printed its device (`holds_lock`: it ran with --exclusive, so it
// holds the lock by now) or exited, `before` just before it started.
struct StartedClients {
  std::optional<CephClient> own;      // the process's client, when proven
  std::vector<CephClient> strangers;  // every other new client
  bool holds_lock = false;            // `own` is the lock owner: no stranger writes while it lives
};
StartedClients IdentifyStarted(const ImageClients& before, const ImageClients& after, bool holds_lock);

// A claim left pending by a process whose clients were never listed (its
// daemon died first, or the listing failed): in `seen`, the one new client
// at this host's address, watching or holding the lock, if exactly one
// appeared since `before`; never one elsewhere.
StartedClients ClaimPending(const ImageClients& before, const ImageClients& seen);

}  // namespace nbdk
