// The journal form of a log event (base/log.h): under systemd, with
// stderr connected to the journal, every event goes to journald through its
// native protocol with one field per event field, so operators filter on
// them:
//
//   journalctl -u nbdkeeperd VOLUME=pvc-1
//   journalctl -u nbdkeeperd EVENT=mapping_state STATE=Dead
//   journalctl -u nbdkeeperd -p warning
//
// Event `mapping_state {volume: v1, from: Connected, state: Dead}` becomes
//   MESSAGE=mapping_state volume=v1 from=Connected state=Dead
//   PRIORITY=4  SYSLOG_IDENTIFIER=nbdkeeperd  EVENT=mapping_state
//   VOLUME=v1  FROM=Connected  STATE=Dead
// Thread-safe.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "base/log.h"

namespace nbdk {

// Whether `fd` is the journal stream that `journal_stream` names: the value
// of JOURNAL_STREAM, "<st_dev>:<st_ino>" in decimal, which systemd sets for
// a service whose stdout or stderr it connected to the journal. The variable
// alone proves nothing: children inherit it with their stderr redirected
// elsewhere, so the fd's own device and inode must match (systemd.exec(5)).
// False for nullptr, a malformed value or an fd fstat cannot see.
bool IsJournalStream(const char* journal_stream, int fd);

// The journal field name for a log field's `key`: upper case, every byte
// outside [A-Z0-9] made '_', at most 64 characters (journald's limit). A
// name the journal would refuse or read as its own - one starting with '_'
// (trusted fields) or a digit, one this mapping writes itself (MESSAGE,
// PRIORITY, EVENT), or one journald or journalctl give a meaning (MESSAGE_ID,
// ERRNO, CODE_*, SYSLOG_*, OBJECT_*, COREDUMP_*, UNIT, ...) - gets the prefix
// "NBDK_", so no event field can pose as journal metadata.
std::string JournalFieldName(std::string_view key);

// The "NAME=value" entries of one event, in this order: MESSAGE (the event
// and its fields as FormatLogMessage shows them), PRIORITY (syslog(3)
// level: debug 7, info 6, warn 4, error 3), SYSLOG_IDENTIFIER=`identifier`,
// EVENT=`event`, then one entry per field, named by JournalFieldName
// ("volume" gives VOLUME, "state" STATE). Values are raw bytes: the native
// protocol carries newlines, so only MESSAGE is quoted.
std::vector<std::string> JournalFields(LogLevel level, std::string_view event, std::initializer_list<LogField> fields,
                                       std::string_view identifier);

// Sends one event to journald (sd_journal_sendv), identified by the
// program's name. False when the send failed; the caller then writes it to
// stderr.
bool SendToJournal(LogLevel level, std::string_view event, std::initializer_list<LogField> fields);

}  // namespace nbdk
