// A ceph.conf (ceph/ceph_conf.h), which nbdkeeperd and nbdkeeperctl read
// from /etc/ceph without ceph-csi's config.json: parses never crash, errors
// stay within the error rule, monitors are never empty tokens, and a
// metavariable expansion either fails within the rule or leaves no "$".
#include "ceph/ceph_conf.h"
#include "test/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = nbdk::fuzz::Text(data, size);
  auto conf = nbdk::ParseCephConf(text, "/etc/ceph/ceph.conf");
  NBDK_FUZZ_CHECK(nbdk::fuzz::WithinErrorRule(conf.status()));
  if (conf.ok()) {
    for (const std::string& m : nbdk::SplitMonHost(conf->Get("mon host", "admin"))) NBDK_FUZZ_CHECK(!m.empty());
    auto keyring = nbdk::ExpandCephMeta(conf->Get("keyring", "admin"), "ceph", "admin");
    NBDK_FUZZ_CHECK(nbdk::fuzz::WithinErrorRule(keyring.status()));
    if (keyring.ok()) NBDK_FUZZ_CHECK(keyring->find('$') == std::string::npos);
  }
  return 0;
}
