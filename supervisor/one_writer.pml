/* The one-writer rule (supervisor/image_fence.h) as a model, for spin.
 *
 * Two nodes A and B stage one ReadWriteOnce image, their rbd-nbd may die
 * and be re-attached, a daemon may die mid re-attach and claim its
 * server's client when it is back, and a Controller call (resize,
 * snapshot) holds the image's lock for a moment. Ceph's side: watches,
 * the exclusive lock with its librbd rules, watch expiry, blocklisting.
 * test/supervisor/one-writer-model.sh checks every interleaving of them:
 *  - no stale write: once another node's client wrote the image, a node
 *    whose mount predates that write never writes again (two mounts of one
 *    filesystem, each free to write, corrupt it);
 *  - no fence without a takeover: a node is fenced only after another
 *    node mapped the image (started an rbd-nbd of it) while this node had
 *    it mounted; a Controller call's brief hold never fences.
 * The Controller's hold is brief: a node's check sees it at most once (in
 * the code: it leaves within foreign_writer_persist_ms). A node's listing
 * and the decision it feeds are one step; every other step of the code's
 * chain (list, start, lock, identify, write) is a step of its own, so
 * another node may act between any two.
 *
 * The code's names: CheckMayMap, CheckMayReattach, OwnLockToBreak,
 * IdentifyStarted (`holds`: StartedClients::holds_lock), ClaimPending
 * (supervisor/image_fence.h), Fence
 * (supervisor/mapping_fence.cc). Mutants the check must catch:
 *  - PRE_FIX: rbd-nbd without --exclusive (the lock moves to whoever
 *    writes) and own clients learnt by difference, as before issue 41;
 *  - NO_REATTACH_CHECK: a re-attach that does not look for a stranger;
 *  - FENCE_ON_WATCHERS: a re-attach whose server holds the lock fenced by
 *    a client that only watches beside it (a Controller call), as the code
 *    did until this model found it.
 * And the hole that remains, found under -DSHORT_TAKEOVERS (see
 * TAKEOVERS_LAST below). */

#define NONE 7
#define CTRL 4
#define BIT(c) (1 << (c))
#define NODE_OF(c) ((c) / 2)
#define NODE_MASK(n) (3 << ((n) * 2))
#define LOCK_BIT(l) ((l) == NONE -> 0 : BIT(l))
#define FOREIGN_LOCK(me, l) ((l) != NONE && (own[me] & BIT(l)) == 0)
#ifdef FENCE_ON_WATCHERS
#define WATCHERS_FENCE_ANYWAY 1
#else
#define WATCHERS_FENCE_ANYWAY 0
#endif

/* Ceph: who watches the image's header, whose process is alive and not
 * blocklisted, who owns the exclusive lock. Clients 0,1 are A's servers
 * (its stage's and its re-attach's), 2,3 B's, 4 the Controller's. */
byte watch = 0;
byte alive = 0;
byte lock = NONE;

/* The nodes: what each journaled as its own, its mount, its server. */
byte own[2];
bool mounted[2];
bool fenced[2];
byte server[2] = NONE;
/* The properties' witnesses: another node wrote, or started a server of
 * the image, since this node's mount. */
bool stale[2];
bool taken[2];
/* The looks of a node's re-attach since the other node took the image's
 * lock from under its mount (2: two or more). */
byte looks[2] = 2;
/* The Controller's hold was seen by a node's check. */
bool ctrl_seen = false;

/* A client leaves: a clean exit (an unmap, a map that lost the lock) or a
 * blocklisting ends its IO and drops its watch and lock. */
inline leave(c) {
  alive = alive & ~BIT(c);
  watch = watch & ~BIT(c);
  if
  :: lock == c -> lock = NONE
  :: else -> skip
  fi
}

/* A node's server starts: its open watches the image, and for the other
 * node, if it has the image mounted, that is a takeover attempt. */
inline start(me, c) {
  alive = alive | BIT(c);
  watch = watch | BIT(c);
  if
  :: mounted[1 - me] -> taken[1 - me] = true
  :: else -> skip
  fi
}

/* librbd's acquire: a free lock, or one whose owner no longer watches
 * (dead: librbd blocklists it and breaks the lock). A live owner's lock is
 * not given up (it runs with --exclusive); a dead owner that still
 * watches is waited for (its watch expires). */
#define LOCK_FREE_FOR(c) (lock == NONE || lock == (c) || (watch & BIT(lock)) == 0)

inline acquire(c) {
  if
  :: lock != NONE && lock != c -> leave(lock)
  :: else -> skip
  fi;
  lock = c;
  if
  :: c != CTRL && mounted[1 - NODE_OF(c)] && !fenced[1 - NODE_OF(c)] -> looks[1 - NODE_OF(c)] = 0
  :: else -> skip
  fi
}

/* TAKEOVERS_LAST, the timing the code's persist rule assumes (as BRIEF
 * is for the Controller): a node that took the lock from under the other
 * node's mount keeps it, its server neither dies nor unmaps and no one
 * breaks its lock, until the other node looked twice (in the code: a
 * takeover lasts longer than foreign_writer_persist_ms and one attempt).
 * -DSHORT_TAKEOVERS drops it: the hole docs/design/one-writer.md names
 * under "What is not covered". */
#ifdef SHORT_TAKEOVERS
#define MAY_LET_GO(me) true
#else
#define MAY_LET_GO(me) (!mounted[1 - (me)] || fenced[1 - (me)] || looks[1 - (me)] >= 2)
#endif

/* NodeUnstage: the unmount, then the unmap. */
inline unstage(me) {
  mounted[me] = false;
  if
  :: server[me] != NONE -> leave(server[me]); server[me] = NONE
  :: else -> skip
  fi
}

/* The image's clients now, as ListClients returns them. */
inline list(w, l) {
  w = watch;
  l = lock;
  if
  :: lock == CTRL -> ctrl_seen = true
  :: else -> skip
  fi
}

/* A node's check may not see the Controller's hold twice. */
#define BRIEF (lock != CTRL || !ctrl_seen)

/* IdentifyStarted (holds_lock: --exclusive) or ClaimPending, then every
 * other new client is a stranger. */
inline identify(me, c, before_w, before_l, seen_w, seen_l, claim, strangers) {
  fresh = (seen_w | LOCK_BIT(seen_l)) & ~(before_w | LOCK_BIT(before_l));
  holds = false;
#ifdef PRE_FIX
  own[me] = own[me] | fresh;
  strangers = 0;
#else
  if
  :: claim && (fresh & NODE_MASK(me)) == BIT(c) -> own[me] = own[me] | BIT(c)
  :: !claim && seen_l == c && (fresh & BIT(c)) && (seen_w & BIT(c)) -> own[me] = own[me] | BIT(c); holds = true
  :: else -> skip
  fi;
  strangers = fresh & ~own[me];
#endif
}

/* Writes of a node's filesystem: only through a live server of its own
 * that holds the lock (without --exclusive, librbd hands a live owner's
 * lock to the next writer). */
proctype Writer(byte me) {
  do
  :: atomic {
       mounted[me] && !fenced[me] && server[me] != NONE && (alive & BIT(server[me])) ->
#ifdef PRE_FIX
       lock = server[me];  /* librbd hands the lock over on request */
#endif
       if
       :: lock == server[me] ->
          assert(!stale[me]);
          if
          :: mounted[1 - me] -> stale[1 - me] = true
          :: else -> skip
          fi
       :: else -> skip
       fi
     }
  :: atomic { mounted[me] && !fenced[me] && !stale[me] -> break }  /* nothing more to write */
  od
}

/* The OSDs drop a dead client's watch (osd_client_watch_timeout). */
proctype Osds() {
  byte c;
  do
  :: atomic {
       (watch & ~alive) != 0 ->
       c = 0;
       do
       :: c < 5 && (watch & ~alive & BIT(c)) == 0 -> c++
       :: c < 5 && (watch & ~alive & BIT(c)) != 0 -> watch = watch & ~BIT(c); break
       od
     }
  od
}

/* A Controller call: opens the image (a watch), takes its lock for a
 * moment if no live client holds it (else librbd asks the owner to do the
 * operation), closes. */
proctype Controller() {
  atomic { alive = alive | BIT(CTRL); watch = watch | BIT(CTRL) }
  if
  :: atomic { LOCK_FREE_FOR(CTRL) -> acquire(CTRL) }
  :: atomic { !LOCK_FREE_FOR(CTRL) -> skip }
  fi;
  atomic { leave(CTRL); ctrl_seen = false }
}

/* A node: NodeStage, then after its server's death the re-attaches, each
 * perhaps cut by its daemon's death and finished by the next daemon. */
proctype Node(byte me) {
  byte before_w, before_l, seen_w, seen_l, fresh, strangers;
  bool holds;
  byte c = me * 2;
  bool claim = false;
  bool sighted = false;  /* its last look saw a foreign lock owner */

  /* NodeStage: CheckMayMap, rbd-nbd map --exclusive, IdentifyStarted. */
  atomic { BRIEF; list(before_w, before_l); (before_w & ~own[me]) == 0 }
  atomic { start(me, c) }
#ifdef PRE_FIX
  skip;
#else
  if
  :: atomic { LOCK_FREE_FOR(c) -> acquire(c) }
  :: atomic { lock != NONE && lock != c && (alive & BIT(lock)) -> leave(c); goto done }
  fi;
#endif
  atomic {
    BRIEF;
    list(seen_w, seen_l);
    identify(me, c, before_w, before_l, seen_w, seen_l, false, strangers);
    if
    :: strangers != 0 -> leave(c); goto done
    :: else -> mounted[me] = true; server[me] = c; stale[me] = false; taken[me] = false
    fi
  }
  run Writer(me);

  /* Its server dies (a crash, an OOM kill), or the volume is unstaged. */
  if
  :: atomic { alive & BIT(c) && MAY_LET_GO(me) -> alive = alive & ~BIT(c) }
  :: atomic { MAY_LET_GO(me) -> unstage(me) }; goto done
  fi;
  c++;

  /* The re-attach: CheckMayReattach, OwnLockToBreak, rbd-nbd attach
   * --exclusive on the same device (the kernel's IO resumes as soon as it
   * serves), IdentifyStarted. */
retry:
  skip;  /* others act between two looks */
  atomic {
    BRIEF;
    list(seen_w, seen_l);
    if
    :: looks[me] < 2 -> looks[me]++
    :: else -> skip
    fi;
#ifndef PRE_FIX
    if
    :: claim -> identify(me, c, before_w, before_l, seen_w, seen_l, true, strangers); claim = false
    :: else -> skip
    fi;
#endif
#ifndef NO_REATTACH_CHECK
    if
    :: FOREIGN_LOCK(me, seen_l) ->
       /* a foreign writer: fenced once it stays */
       if
       :: sighted -> assert(taken[me]); fenced[me] = true; goto done
       :: else -> sighted = true; goto retry
       fi
    :: !FOREIGN_LOCK(me, seen_l) && (seen_w & ~own[me]) != 0 -> sighted = false; goto retry  /* a watcher only: wait */
    :: else -> sighted = false
    fi;
#endif
    if
    :: alive & BIT(c) -> goto done  /* a claimed server already serves */
    :: else -> skip
    fi;
    before_w = seen_w;
    before_l = seen_l;
    if
    :: seen_l != NONE && (own[me] & BIT(seen_l)) && !(alive & BIT(seen_l)) -> leave(seen_l)
    :: else -> skip
    fi
  }
  atomic { !(alive & BIT(c)) && !(watch & BIT(c)) -> start(me, c); server[me] = c }
  if
  :: atomic { LOCK_FREE_FOR(c) -> acquire(c) }
  :: atomic { lock != NONE && lock != c && (alive & BIT(lock)) -> leave(c); server[me] = NONE; goto retry }
  fi;
  if
  /* the daemon died before it listed; the next one claims */
  :: claim = true; sighted = false; goto retry
  :: atomic {
       BRIEF;
       list(seen_w, seen_l);
       identify(me, c, before_w, before_l, seen_w, seen_l, false, strangers);
       if
       /* Its own server holds the lock and librbd gives it to no one
        * else while it lives: a new watcher is no writer. */
       :: strangers != 0 && !(holds && !WATCHERS_FENCE_ANYWAY) -> leave(c); server[me] = NONE; assert(taken[me]); fenced[me] = true
       :: else -> skip
       fi
     }
  fi;
  if
  :: atomic { mounted[me] && !fenced[me] && MAY_LET_GO(me) -> unstage(me) }
  :: skip
  fi;
done:
  skip
}

init {
  atomic {
    run Osds();
    run Controller();
    run Node(0);
    run Node(1)
  }
}
