// ReportFatalSignals: a daemon that dies of SIGSEGV, SIGBUS, SIGFPE, SIGILL
// or SIGABRT (a failed check, librados' ceph_abort, the systemd watchdog)
// first writes one line naming the signal and the faulting thread's
// backtrace to stderr, the daemon's log (journald under systemd, the
// container log in a pod). It writes no core file (main.cc clears
// PR_SET_DUMPABLE: keys pass through this process), so this is all that is
// left to read of a crash.
//
// The handler then restores the default action and raises the signal
// again: the exit status still says "killed by signal N", so systemd's and
// kubelet's restart policies see what they saw before.
#pragma once

namespace nbdk {

// Installs the handlers (once, before any other thread starts). Returns
// false, with errno set, if sigaction refused one.
bool ReportFatalSignals();

}  // namespace nbdk
