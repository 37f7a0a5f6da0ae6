#include "supervisor/attach_queue.h"

#include <algorithm>

namespace nbdk {

AttachQueue::Ticket::~Ticket() { queue_.Leave(this); }

AttachQueue::AttachQueue(EventLoop& loop, size_t limit) : loop_(loop), limit_(limit) {}

AttachQueue::~AttachQueue() { *alive_ = false; }

std::unique_ptr<AttachQueue::Ticket> AttachQueue::EnqueueReattach(uint64_t deadline_ms,
                                                                  std::function<void()> on_granted) {
  std::unique_ptr<Ticket> ticket(new Ticket(*this, Kind::kReattach, deadline_ms, std::move(on_granted)));
  auto after = std::upper_bound(reattaches_.begin(), reattaches_.end(), deadline_ms,
                                [](uint64_t deadline, const Ticket* t) { return deadline < t->deadline_ms_; });
  reattaches_.insert(after, ticket.get());
  SchedulePump();
  return ticket;
}

std::unique_ptr<AttachQueue::Ticket> AttachQueue::EnqueueMap(std::function<void()> on_granted) {
  std::unique_ptr<Ticket> ticket(new Ticket(*this, Kind::kMap, 0, std::move(on_granted)));
  maps_.push_back(ticket.get());
  SchedulePump();
  return ticket;
}

size_t AttachQueue::Position(const Ticket& ticket) const {
  if (ticket.granted_) return 0;
  auto find = [&](const std::deque<Ticket*>& q) { return std::find(q.begin(), q.end(), &ticket) - q.begin(); };
  if (ticket.kind_ == Kind::kReattach) return static_cast<size_t>(find(reattaches_)) + 1;
  return reattaches_.size() + static_cast<size_t>(find(maps_)) + 1;
}

void AttachQueue::Leave(Ticket* ticket) {
  if (ticket->granted_) {
    --in_flight_;
    SchedulePump();
    return;
  }
  auto& q = ticket->kind_ == Kind::kReattach ? reattaches_ : maps_;
  q.erase(std::remove(q.begin(), q.end(), ticket), q.end());
}

void AttachQueue::SchedulePump() {
  if (pump_scheduled_ || waiting() == 0) return;
  pump_scheduled_ = true;
  std::weak_ptr<bool> weak = alive_;
  loop_.Post([this, weak] {
    if (weak.expired()) return;
    pump_scheduled_ = false;
    Pump();
  });
}

void AttachQueue::Pump() {
  while ((limit_ == 0 || in_flight_ < limit_) && waiting() > 0) {
    auto& q = reattaches_.empty() ? maps_ : reattaches_;
    Ticket* next = q.front();
    q.pop_front();
    next->granted_ = true;
    ++in_flight_;
    // May destroy tickets, this one included (a spawn that fails at once):
    // that only touches the counters and deques re-read above, and the
    // callback runs from a local copy.
    std::function<void()> start = std::move(next->on_granted_);
    start();
  }
}

}  // namespace nbdk
