#include "daemon/ctl/http_reply.h"

#include <http_parser.h>

namespace nbdk::ctl {
namespace {

struct Reading {
  HttpAnswer answer;
  bool complete = false;
};

Reading& ReadingOf(http_parser* p) { return *static_cast<Reading*>(p->data); }

}  // namespace

Result<HttpAnswer> ParseHttpReply(std::string_view reply) {
  if (reply.empty()) return Status::Unavailable("no HTTP reply: the connection closed without one");
  Reading reading;
  http_parser parser{};
  http_parser_init(&parser, HTTP_RESPONSE);
  parser.data = &reading;
  http_parser_settings settings{};
  http_parser_settings_init(&settings);
  settings.on_body = [](http_parser* p, const char* at, size_t len) {
    ReadingOf(p).answer.body.append(at, len);
    return 0;
  };
  settings.on_message_complete = [](http_parser* p) {
    ReadingOf(p).complete = true;
    http_parser_pause(p, 1);  // what follows the first response is not read
    return 0;
  };
  http_parser_execute(&parser, &settings, reply.data(), reply.size());
  // The reply is whole: its end is the end of the stream, which ends a body
  // that runs to the close and fails one cut short.
  if (!reading.complete && HTTP_PARSER_ERRNO(&parser) == HPE_OK) http_parser_execute(&parser, &settings, nullptr, 0);
  if (!reading.complete && HTTP_PARSER_ERRNO(&parser) != HPE_OK) {
    return Status::Unavailable(std::string("malformed HTTP reply: ") +
                               http_errno_description(HTTP_PARSER_ERRNO(&parser)));
  }
  if (!reading.complete) return Status::Unavailable("no HTTP reply: only blank lines before the connection closed");
  reading.answer.status = static_cast<int>(parser.status_code);
  return std::move(reading.answer);
}

}  // namespace nbdk::ctl
