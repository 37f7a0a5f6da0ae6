// Daemon: wires the loop, the CSI gRPC server, the health endpoint, signals
// and systemd notification together. main() only parses flags and calls Run().
#pragma once

#include "daemon/config.h"

namespace nbdk {

// Runs nbdkeeperd until SIGTERM/SIGINT. Returns the process exit code: 0
// after a clean stop, 1 when startup failed (the reason is logged).
//
// Signals: SIGTERM and SIGINT stop gracefully (stop accepting, finish
// in-flight RPCs, remove the socket; rbd-nbd children keep serving unless
// on_stop=detach). SIGHUP is ignored: logs go to stderr or the journal, so
// there is no file to reopen. SIGPIPE is ignored so a vanished peer is an
// error, not a death.
int RunDaemon(const Config& config);

}  // namespace nbdk
