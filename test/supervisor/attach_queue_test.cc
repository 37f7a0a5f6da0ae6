// AttachQueue on its own: the bound, the order, leaving, freeing.
#include "supervisor/attach_queue.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/event_loop.h"

namespace nbdk {
namespace {

class AttachQueueTest : public ::testing::Test {
 protected:
  void TearDown() override {
    tickets_.clear();
    queue_.reset();
    EXPECT_TRUE(loop_.Shutdown().ok());
  }

  void MakeQueue(size_t limit) { queue_ = std::make_unique<AttachQueue>(loop_, limit); }

  // Queues ticket `name`; its grant appends the name to granted_. A
  // re-attach's window closes at `deadline_ms`.
  AttachQueue::Ticket* Add(const std::string& name, AttachQueue::Kind kind = AttachQueue::Kind::kMap,
                           uint64_t deadline_ms = 0) {
    auto grant = [this, name] { granted_.push_back(name); };
    tickets_[name] =
        kind == AttachQueue::Kind::kReattach ? queue_->EnqueueReattach(deadline_ms, grant) : queue_->EnqueueMap(grant);
    return tickets_[name].get();
  }
  AttachQueue::Ticket* AddReattach(const std::string& name, uint64_t deadline_ms) {
    return Add(name, AttachQueue::Kind::kReattach, deadline_ms);
  }
  void Drop(const std::string& name) { tickets_.erase(name); }

  // Grants happen on later loop turns: run a few.
  void Settle() {
    for (int i = 0; i < 5; ++i) {
      loop_.Post([this] { loop_.Stop(); });
      loop_.Run();
    }
  }

  EventLoop loop_;
  std::unique_ptr<AttachQueue> queue_;
  std::map<std::string, std::unique_ptr<AttachQueue::Ticket>> tickets_;
  std::vector<std::string> granted_;
};

TEST_F(AttachQueueTest, AtMostTheLimitInFlightAndFreedSlotsGoInFifoOrder) {
  MakeQueue(2);
  for (const char* name : {"a", "b", "c", "d", "e"}) Add(name);
  EXPECT_TRUE(granted_.empty()) << "never granted inside Enqueue";
  Settle();
  EXPECT_EQ(granted_, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(queue_->in_flight(), 2u);
  EXPECT_EQ(queue_->waiting(), 3u);
  EXPECT_EQ(queue_->Position(*tickets_["a"]), 0u);
  EXPECT_EQ(queue_->Position(*tickets_["c"]), 1u);
  EXPECT_EQ(queue_->Position(*tickets_["e"]), 3u);

  Drop("b");  // its process printed the device, or exited, or was killed
  EXPECT_EQ(granted_.size(), 2u) << "a freed slot is handed on later, not inside the release";
  Settle();
  EXPECT_EQ(granted_, (std::vector<std::string>{"a", "b", "c"}));
  Drop("a");
  Drop("c");
  Settle();
  EXPECT_EQ(granted_, (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  EXPECT_EQ(queue_->in_flight(), 2u);
  EXPECT_EQ(queue_->waiting(), 0u);
  Drop("d");
  Drop("e");
  EXPECT_EQ(queue_->in_flight(), 0u);
}

TEST_F(AttachQueueTest, ReattachesGoBeforeMapsFifoWithinEach) {
  MakeQueue(1);
  Add("map0");
  Settle();
  Add("map1");
  Add("re0", AttachQueue::Kind::kReattach);
  Add("map2");
  Add("re1", AttachQueue::Kind::kReattach);
  EXPECT_EQ(queue_->Position(*tickets_["re0"]), 1u);
  EXPECT_EQ(queue_->Position(*tickets_["re1"]), 2u);
  EXPECT_EQ(queue_->Position(*tickets_["map1"]), 3u);
  EXPECT_EQ(queue_->Position(*tickets_["map2"]), 4u);
  for (const char* holder : {"map0", "re0", "re1", "map1"}) {
    Drop(holder);
    Settle();
  }
  EXPECT_EQ(granted_, (std::vector<std::string>{"map0", "re0", "re1", "map1", "map2"}));
}

// A mass heal: every volume died at about the same time. One attempt is
// killed at its deadline and queues again: it goes before the volumes that
// died after it, not behind them all (no starvation); equal deadlines keep
// their arrival order.
TEST_F(AttachQueueTest, ReattachesGoEarliestDeadlineFirstAndARetryKeepsItsPlace) {
  MakeQueue(1);
  AddReattach("v1", 1000);
  Settle();
  AddReattach("v3", 1003);
  AddReattach("v2", 1002);
  AddReattach("v2b", 1002);
  Add("map");
  AddReattach("v4", 1004);
  EXPECT_EQ(queue_->Position(*tickets_["v2"]), 1u);
  EXPECT_EQ(queue_->Position(*tickets_["v2b"]), 2u) << "FIFO among equal deadlines";
  EXPECT_EQ(queue_->Position(*tickets_["v3"]), 3u);
  EXPECT_EQ(queue_->Position(*tickets_["v4"]), 4u);
  EXPECT_EQ(queue_->Position(*tickets_["map"]), 5u);

  Drop("v1");  // its attach was killed at the attach deadline ...
  Settle();
  AddReattach("v1", 1000);  // ... and it queues again with its death's deadline
  EXPECT_EQ(queue_->Position(*tickets_["v1"]), 1u);
  for (const char* holder : {"v2", "v1", "v2b", "v3", "v4"}) {
    Drop(holder);
    Settle();
  }
  EXPECT_EQ(granted_, (std::vector<std::string>{"v1", "v2", "v1", "v2b", "v3", "v4", "map"}));
}

TEST_F(AttachQueueTest, AWaiterThatLeavesIsNeverGrantedAndTheOthersMoveUp) {
  MakeQueue(1);
  Add("a");
  Add("b");
  Add("c");
  Add("d");
  Settle();
  Drop("c");  // an unmap, an expiry, a daemon stop
  EXPECT_EQ(queue_->Position(*tickets_["d"]), 2u);
  EXPECT_EQ(queue_->in_flight(), 1u);
  Drop("a");
  Settle();
  Drop("b");
  Settle();
  EXPECT_EQ(granted_, (std::vector<std::string>{"a", "b", "d"}));
}

TEST_F(AttachQueueTest, ZeroMeansNoBound) {
  MakeQueue(0);
  for (int i = 0; i < 40; ++i) Add(std::to_string(i));
  Settle();
  EXPECT_EQ(granted_.size(), 40u);
  EXPECT_EQ(queue_->in_flight(), 40u);
}

TEST_F(AttachQueueTest, AGrantWhoseStartFailsAtOnceFreesItsSlotForTheNext) {
  MakeQueue(1);
  // "a" fails to spawn inside its grant and drops its own ticket there.
  tickets_["a"] = queue_->EnqueueMap([this] {
    granted_.push_back("a");
    Drop("a");
  });
  Add("b");
  Settle();
  EXPECT_EQ(granted_, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(queue_->in_flight(), 1u);
}

}  // namespace
}  // namespace nbdk
