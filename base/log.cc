#include "base/log.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>

#include "base/log_journal.h"

namespace nbdk {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};

std::string_view LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

bool NeedsQuotes(std::string_view v) {
  if (v.empty()) return true;
  for (char c : v) {
    if (c == ' ' || c == '"' || c == '=' || c == '\\' || c < 0x20) return true;
  }
  return false;
}

void AppendValue(std::string* out, std::string_view v) {
  if (!NeedsQuotes(v)) {
    out->append(v);
    return;
  }
  out->push_back('"');
  for (char c : v) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out->push_back('?');
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

std::string Timestamp() {
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  std::time_t secs = ms / 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof(out), "%s.%03dZ", buf, static_cast<int>(ms % 1000));
  return out;
}

void AppendFields(std::string* out, std::initializer_list<LogField> fields) {
  for (const LogField& f : fields) {
    out->push_back(' ');
    out->append(f.key);
    out->push_back('=');
    AppendValue(out, f.value);
  }
}

}  // namespace

bool ParseLogLevel(std::string_view text, LogLevel* out) {
  for (LogLevel l : {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarn, LogLevel::kError}) {
    if (text == LevelName(l)) {
      *out = l;
      return true;
    }
  }
  return false;
}

void SetLogLevel(LogLevel level) { g_level.store(static_cast<int>(level)); }

bool LogEnabled(LogLevel level) { return static_cast<int>(level) >= g_level.load(); }

std::string FormatLogLine(LogLevel level, std::string_view event, std::initializer_list<LogField> fields) {
  std::string line = "level=";
  line.append(LevelName(level));
  line.append(" event=");
  AppendValue(&line, event);
  AppendFields(&line, fields);
  return line;
}

std::string FormatLogMessage(std::string_view event, std::initializer_list<LogField> fields) {
  std::string message;
  AppendValue(&message, event);
  AppendFields(&message, fields);
  return message;
}

void Log(LogLevel level, std::string_view event, std::initializer_list<LogField> fields) {
  if (!LogEnabled(level)) return;
  // Decided once: the stream systemd connected is the stderr we start with.
  static const bool to_journal = IsJournalStream(std::getenv("JOURNAL_STREAM"), STDERR_FILENO);
  // A failed send (journald gone) still leaves the event on stderr.
  if (to_journal && SendToJournal(level, event, fields)) return;
  std::string line = Timestamp();
  line.push_back(' ');
  line += FormatLogLine(level, event, fields);
  line.push_back('\n');
  // One write per line keeps lines whole when several threads log.
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

}  // namespace nbdk
