// OpLocks: at most one operation per key (a request name, a volume ID).
// CSI asks a plugin to answer ABORTED to a second call for the same volume
// while the first is in flight. The one op-lock class: the Controller keeps
// one (csi/controller/controller_service.h), the Node's StagedVolumes another, keyed
// "volume <id>"; csi/locked_call.h takes them for an RPC. Loop thread only.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"

namespace nbdk {

class OpLocks {
 public:
  // Holds its keys until destroyed. The held set is shared, so a guard may
  // outlive the OpLocks (at shutdown).
  class Guard {
   public:
    Guard(std::shared_ptr<std::set<std::string>> held, std::vector<std::string> keys)
        : held_(std::move(held)), keys_(std::move(keys)) {}
    Guard(Guard&&) = default;
    Guard& operator=(Guard&&) = delete;
    ~Guard() {
      if (!held_) return;
      for (const std::string& key : keys_) held_->erase(key);
    }

   private:
    std::shared_ptr<std::set<std::string>> held_;
    std::vector<std::string> keys_;
  };

  // Aborted "operation pending for <key>" while another guard holds it.
  Result<Guard> Lock(const std::string& key) { return Lock(std::vector<std::string>{key}); }

  // All of `keys` or none: Aborted naming the first one another guard holds.
  // A key listed twice is held once.
  Result<Guard> Lock(std::vector<std::string> keys) {
    for (const std::string& key : keys) {
      if (held_->count(key) != 0) return Status::Aborted("operation pending for " + key);
    }
    std::vector<std::string> taken;
    for (std::string& key : keys) {
      if (held_->insert(key).second) taken.push_back(std::move(key));
    }
    return Guard(held_, std::move(taken));
  }

 private:
  std::shared_ptr<std::set<std::string>> held_ = std::make_shared<std::set<std::string>>();
};

}  // namespace nbdk
