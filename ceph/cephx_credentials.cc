#include "ceph/cephx_credentials.h"

#include "base/quote_field.h"
#include "base/text_rules.h"

namespace nbdk {
namespace {

bool IsBase64(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/' || c == '=';
}

bool IsAsciiSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

}  // namespace

Status CheckCephxUserId(std::string_view field, std::string_view user_id) {
  const std::string f(field);
  if (user_id.empty()) return Status::InvalidArgument(f + ": missing");
  if (user_id.size() > kMaxCephxUserIdBytes) {
    return Status::InvalidArgument(f + ": longer than " + std::to_string(kMaxCephxUserIdBytes) + " bytes");
  }
  if (HasSpaceOrControl(user_id)) return Status::InvalidArgument(f + ": contains whitespace or a control character");
  const std::string shown = f + ": " + QuoteField(user_id) + " ";
  // It follows --id in rbd-nbd's argv: a leading '-' would make it an option.
  if (user_id.front() == '-') return Status::InvalidArgument(shown + "starts with '-'");
  if (user_id.starts_with("client.")) {
    return Status::InvalidArgument(shown + "names the user with the 'client.' prefix; give it without");
  }
  return Status::Ok();
}

Result<std::string> ParseCephxKey(std::string_view field, std::string_view text) {
  const std::string f(field);
  while (!text.empty() && IsAsciiSpace(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsAsciiSpace(text.back())) text.remove_suffix(1);
  if (text.empty()) return Status::InvalidArgument(f + ": missing");
  for (char c : text) {
    if (!IsBase64(c)) {
      return Status::InvalidArgument(f + ": not a base64 cephx key (has a character other than A-Z, a-z, 0-9, " +
                                     "'+', '/' and '=')");
    }
  }
  return std::string(text);
}

}  // namespace nbdk
