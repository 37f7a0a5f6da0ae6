// OpLocks: at most one operation per key (a request name, a volume ID).
// CSI asks a plugin to answer ABORTED to a second call for the same volume
// while the first is in flight. The one op-lock class: the Controller keeps
// one (csi/controller_service.h), the Node's StagedVolumes another, keyed
// "volume <id>". Loop thread only.
#pragma once

#include <memory>
#include <set>
#include <string>

#include "daemon/base/status.h"

namespace nbdk {

class OpLocks {
 public:
  // Holds one key until destroyed. The held set is shared, so a guard may
  // outlive the OpLocks (at shutdown).
  class Guard {
   public:
    Guard(std::shared_ptr<std::set<std::string>> held, std::string key) : held_(std::move(held)), key_(std::move(key)) {}
    Guard(Guard&&) = default;
    Guard& operator=(Guard&&) = delete;
    ~Guard() {
      if (held_) held_->erase(key_);
    }

   private:
    std::shared_ptr<std::set<std::string>> held_;
    std::string key_;
  };

  // Aborted "operation pending for <key>" while another guard holds it.
  Result<Guard> Lock(const std::string& key) {
    if (!held_->insert(key).second) return Status::Aborted("operation pending for " + key);
    return Guard(held_, key);
  }

 private:
  std::shared_ptr<std::set<std::string>> held_ = std::make_shared<std::set<std::string>>();
};

}  // namespace nbdk
