// Structured logging: one event per call, written one of two ways.
//
// Under systemd, when stderr is the journal's stream (JOURNAL_STREAM names
// it), each event goes to journald natively with a field per event field
// (base/log_journal.h): `journalctl -u nbdkeeperd VOLUME=v1`.
// Otherwise one line per event to stderr:
//
//   2026-11-22T04:52:51.123Z level=info event=mapping_state volume=v1 state=Connected
//
// Values containing spaces, quotes or '=' are quoted. Never pass a secret.
// Thread-safe (each event is a single write(2) or a single sendmsg(2)).
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace nbdk {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

struct LogField {
  LogField(std::string_view k, std::string_view v) : key(k), value(v) {}
  LogField(std::string_view k, const std::string& v) : key(k), value(v) {}
  LogField(std::string_view k, const char* v) : key(k), value(v) {}
  template <typename N, typename = std::enable_if_t<std::is_arithmetic_v<N>>>
  LogField(std::string_view k, N v) : key(k), value(std::to_string(v)) {}
  std::string_view key;
  std::string value;
};

// Parses "debug", "info", "warn", "error".
bool ParseLogLevel(std::string_view text, LogLevel* out);
void SetLogLevel(LogLevel level);
bool LogEnabled(LogLevel level);

// Formats one line (without the timestamp) - exposed for tests.
std::string FormatLogLine(LogLevel level, std::string_view event, std::initializer_list<LogField> fields);

// The event and its fields as the line shows them, without timestamp and
// level: `mapping_state volume=v1 state=Connected` (the journal's MESSAGE).
std::string FormatLogMessage(std::string_view event, std::initializer_list<LogField> fields);

void Log(LogLevel level, std::string_view event, std::initializer_list<LogField> fields = {});

}  // namespace nbdk

#define NBDK_LOG_DEBUG(...) ::nbdk::Log(::nbdk::LogLevel::kDebug, __VA_ARGS__)
#define NBDK_LOG_INFO(...) ::nbdk::Log(::nbdk::LogLevel::kInfo, __VA_ARGS__)
#define NBDK_LOG_WARN(...) ::nbdk::Log(::nbdk::LogLevel::kWarn, __VA_ARGS__)
#define NBDK_LOG_ERROR(...) ::nbdk::Log(::nbdk::LogLevel::kError, __VA_ARGS__)
