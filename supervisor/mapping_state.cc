#include "supervisor/mapping_state.h"

namespace nbdk {

std::string_view MappingStateName(MappingState state) {
  switch (state) {
    case MappingState::kMapping:
      return "Mapping";
    case MappingState::kConnected:
      return "Connected";
    case MappingState::kDead:
      return "Dead";
    case MappingState::kReattaching:
      return "Reattaching";
    case MappingState::kExpired:
      return "Expired";
    case MappingState::kFenced:
      return "Fenced";
    case MappingState::kUnmapping:
      return "Unmapping";
    case MappingState::kUnmapped:
      return "Unmapped";
    case MappingState::kFailed:
      return "Failed";
  }
  return "Unknown";
}

}  // namespace nbdk
