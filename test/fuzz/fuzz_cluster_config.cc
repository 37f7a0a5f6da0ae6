// ceph-csi's config.json (csi/cluster_config.h): every parsed entry can be
// found by its cluster ID and has monitors.
#include "csi/cluster_config.h"
#include "test/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto config = nbdk::ParseClusterConfig(nbdk::fuzz::Text(data, size));
  if (!config.ok()) return 0;
  for (const nbdk::ClusterEntry& entry : config->entries()) {
    NBDK_FUZZ_CHECK(!entry.monitors.empty());
    auto found = config->Find(entry.cluster_id);
    NBDK_FUZZ_CHECK(found.ok() && *found == entry);
  }
  return 0;
}
