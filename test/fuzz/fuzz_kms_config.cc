// ceph-csi's KMS config.json (encryption/kms_config.h): every top-level KMS
// ID resolves to a served type under its own name, or to an error of the
// two codes the header promises, within the error rule.
#include <rapidjson/document.h>

#include "encryption/kms_config.h"
#include "test/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = nbdk::fuzz::Text(data, size);
  auto config = nbdk::ParseKmsConfig(text);
  if (!config.ok()) {
    NBDK_FUZZ_CHECK(nbdk::fuzz::WithinErrorRule(config.status()));
    return 0;
  }
  rapidjson::Document doc;
  doc.Parse(text.data(), text.size());
  for (auto it = doc.MemberBegin(); it != doc.MemberEnd(); ++it) {
    std::string_view kms_id(it->name.GetString(), it->name.GetStringLength());
    auto settings = config->Resolve(kms_id);
    if (settings.ok()) {
      bool built_in = kms_id.empty() || kms_id == nbdk::kDefaultKmsId;
      NBDK_FUZZ_CHECK(settings->kms_id == (built_in ? nbdk::kDefaultKmsId : kms_id));
      continue;
    }
    nbdk::Code code = settings.status().code();
    NBDK_FUZZ_CHECK(code == nbdk::Code::kInvalidArgument || code == nbdk::Code::kFailedPrecondition);
    NBDK_FUZZ_CHECK(nbdk::fuzz::WithinErrorRule(settings.status()));
  }
  return 0;
}
