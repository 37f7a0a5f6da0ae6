#include "base/log_journal.h"

#include <sys/stat.h>
#include <sys/uio.h>
#include <syslog.h>

// Without this, sd-journal.h turns sd_journal_sendv into a macro that adds
// CODE_FILE/CODE_LINE/CODE_FUNC of this file to every event: noise.
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

#include <cerrno>
#include <charconv>
#include <cstdint>

namespace nbdk {
namespace {

constexpr size_t kFieldNameMax = 64;
constexpr std::string_view kOwnPrefix = "NBDK_";

// Names journald or journalctl interpret, and the ones written below.
constexpr std::string_view kReservedNames[] = {
    "MESSAGE",   "MESSAGE_ID",    "PRIORITY",           "EVENT",         "ERRNO", "TID", "UNIT",
    "USER_UNIT", "INVOCATION_ID", "USER_INVOCATION_ID", "DOCUMENTATION",
};
constexpr std::string_view kReservedPrefixes[] = {"CODE_", "SYSLOG_", "OBJECT_", "COREDUMP_"};

bool Reserved(std::string_view name) {
  for (std::string_view r : kReservedNames) {
    if (name == r) return true;
  }
  for (std::string_view p : kReservedPrefixes) {
    if (name.starts_with(p)) return true;
  }
  return name.empty() || name[0] == '_' || (name[0] >= '0' && name[0] <= '9');
}

int Priority(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return LOG_DEBUG;
    case LogLevel::kInfo:
      return LOG_INFO;
    case LogLevel::kWarn:
      return LOG_WARNING;
    case LogLevel::kError:
      return LOG_ERR;
  }
  return LOG_INFO;
}

// One unsigned decimal number filling `text` entirely.
bool ParseDecimal(std::string_view text, uint64_t* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

bool IsJournalStream(const char* journal_stream, int fd) {
  if (journal_stream == nullptr) return false;
  std::string_view value(journal_stream);
  size_t colon = value.find(':');
  if (colon == std::string_view::npos) return false;
  uint64_t dev = 0, ino = 0;
  if (!ParseDecimal(value.substr(0, colon), &dev) || !ParseDecimal(value.substr(colon + 1), &ino)) return false;
  struct stat st {};
  if (::fstat(fd, &st) != 0) return false;
  return static_cast<uint64_t>(st.st_dev) == dev && static_cast<uint64_t>(st.st_ino) == ino;
}

std::string JournalFieldName(std::string_view key) {
  std::string name;
  for (char c : key) {
    if (c >= 'a' && c <= 'z') {
      name.push_back(static_cast<char>(c - 'a' + 'A'));
    } else if ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
      name.push_back(c);
    } else {
      name.push_back('_');
    }
  }
  if (Reserved(name)) name.insert(0, kOwnPrefix);
  if (name.size() > kFieldNameMax) name.resize(kFieldNameMax);
  return name;
}

std::vector<std::string> JournalFields(LogLevel level, std::string_view event, std::initializer_list<LogField> fields,
                                       std::string_view identifier) {
  std::vector<std::string> out;
  out.reserve(4 + fields.size());
  out.push_back("MESSAGE=" + FormatLogMessage(event, fields));
  out.push_back("PRIORITY=" + std::to_string(Priority(level)));
  out.push_back("SYSLOG_IDENTIFIER=" + std::string(identifier));
  out.push_back("EVENT=" + std::string(event));
  for (const LogField& f : fields) out.push_back(JournalFieldName(f.key) + "=" + f.value);
  return out;
}

bool SendToJournal(LogLevel level, std::string_view event, std::initializer_list<LogField> fields) {
  std::vector<std::string> entries = JournalFields(level, event, fields, program_invocation_short_name);
  std::vector<iovec> iov;
  iov.reserve(entries.size());
  for (std::string& e : entries) iov.push_back({e.data(), e.size()});
  // One sendmsg(2) of one datagram to /run/systemd/journal/socket (an event
  // too large for a datagram goes as a sealed memfd instead). It is NOT a
  // non-blocking send: libsystemd's socket is a blocking one, and a
  // datagram to a full receive queue waits until journald reads. So the
  // loop thread stalls only while journald itself stalls - as it did on
  // the stderr stream's write(2) before; journald's rate limit drops
  // events, it never makes the sender wait.
  return sd_journal_sendv(iov.data(), static_cast<int>(iov.size())) >= 0;
}

}  // namespace nbdk
