// AttachQueue: at most `limit` rbd-nbd starts (first maps and re-attaches)
// in flight; the rest wait their turn.
//
// Why: every rbd-nbd start connects to the cluster, loads its libraries and
// opens the image. When many children die together (an OOM kill, a
// node-wide upgrade) starting all of their replacements at once makes every
// one of them slow: under qemu TCG 32 simultaneous attaches each missed the
// 60 s map deadline, were killed, retried, and expired. A bounded number in
// flight finishes the whole sooner (test/bench/scale_bench.cc measures the
// curve; the default is in daemon/config.h).
//
// Order: re-attaches before first maps. A re-attach is a volume whose IO is
// stalled right now and whose kernel reattach window is running out; a
// first map is a NodeStage whose caller retries and whose volume has no IO
// yet. Re-attaches cannot starve maps for long: there is at most one per
// volume, and each leaves the queue when it starts.
// Re-attaches go earliest deadline first (FIFO among equal ones): the
// volume whose window closes first starts first, and an attempt that
// failed (or was killed at its deadline) and queues again keeps the place
// its death gave it instead of going behind every volume that died after
// it - in a mass heal that back-of-the-queue retry was what left a few
// volumes far behind the rest. Maps: FIFO.
//
// A Ticket is a place in the queue, then a slot. Destroying it leaves the
// queue or frees the slot, whichever it holds; freed slots go to the next
// waiters on a later loop turn (never from inside the caller that freed
// one), so a grant callback never runs re-entrantly.
//
// Loop thread only. The queue must outlive its tickets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>

#include "base/event_loop.h"

namespace nbdk {

class AttachQueue {
 public:
  enum class Kind { kReattach, kMap };

  class Ticket {
   public:
    ~Ticket();
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;
    bool granted() const { return granted_; }

   private:
    friend class AttachQueue;
    Ticket(AttachQueue& queue, Kind kind, uint64_t deadline_ms, std::function<void()> on_granted)
        : queue_(queue), kind_(kind), deadline_ms_(deadline_ms), on_granted_(std::move(on_granted)) {}
    AttachQueue& queue_;
    Kind kind_;
    uint64_t deadline_ms_;
    std::function<void()> on_granted_;
    bool granted_ = false;
  };

  // `limit` 0: no bound (every ticket is granted on the next loop turn).
  AttachQueue(EventLoop& loop, size_t limit);
  ~AttachQueue();
  AttachQueue(const AttachQueue&) = delete;
  AttachQueue& operator=(const AttachQueue&) = delete;

  // Queue a start; `on_granted` runs on a later loop turn once a slot is
  // free and every waiter before it (in the order above) got one. The
  // caller owns the ticket and destroys it when its process printed the
  // device, exited or was abandoned. `deadline_ms` (loop time): when the
  // volume's reattach window closes.
  std::unique_ptr<Ticket> EnqueueReattach(uint64_t deadline_ms, std::function<void()> on_granted);
  std::unique_ptr<Ticket> EnqueueMap(std::function<void()> on_granted);

  // 1-based place among the waiters in grant order; 0 once granted.
  size_t Position(const Ticket& ticket) const;
  size_t in_flight() const { return in_flight_; }
  size_t waiting() const { return reattaches_.size() + maps_.size(); }
  size_t limit() const { return limit_; }

 private:
  void Leave(Ticket* ticket);
  void SchedulePump();
  void Pump();

  EventLoop& loop_;
  size_t limit_;
  size_t in_flight_ = 0;
  std::deque<Ticket*> reattaches_;
  std::deque<Ticket*> maps_;
  bool pump_scheduled_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace nbdk
