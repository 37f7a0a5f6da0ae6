// Test-only: runs the real nbdkeeperd binary as a child process.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace nbdk::test {

class DaemonProcess {
 public:
  // `dir` holds the socket, the state dir and the daemon's stderr log.
  DaemonProcess(std::string binary, std::string dir, std::string node_id = "test-node");
  ~DaemonProcess();  // SIGKILLs a daemon still running

  // Starts with the standard test flags plus `extra`; returns once the CSI
  // socket accepts connections (false after 60 s or if the daemon exited;
  // under TCG beside other work a start has taken over 20 s).
  bool Start(const std::vector<std::string>& extra = {});
  // Starts `binary --config <config_file>` and nothing else, as the systemd
  // unit's ExecStart does. The file must put the CSI socket at socket_path()
  // and the health endpoint on 127.0.0.1:<health_port>.
  bool StartWithConfig(const std::string& config_file, int health_port);
  // Sends `signum` and waits; returns the raw wait status.
  int Stop(int signum);
  // Polls /readyz until 200 (journal loaded, volumes healed: Node volume
  // calls are answered UNAVAILABLE before). False on timeout.
  bool WaitReady(int timeout_ms);
  // Waits for the process to exit by itself (up to timeout); raw wait status
  // or -1 on timeout.
  int Wait(int timeout_ms);

  std::string socket_path() const { return dir_ + "/csi.sock"; }
  std::string endpoint() const { return "unix://" + socket_path(); }
  int health_port() const { return health_port_; }
  pid_t pid() const { return pid_; }
  // Raw wait status of a daemon that exited during Start().
  int start_exit_status() const { return start_exit_status_; }
  std::string log_path() const { return dir_ + "/daemon.log"; }
  std::string Log() const;
  // The log's last `lines` lines: what a dead daemon said last.
  std::string LogTail(size_t lines) const;

 private:
  // Runs `args` with stdout and stderr appended to the log; waits as Start().
  bool Launch(std::vector<std::string> args);

  std::string binary_, dir_, node_id_;
  pid_t pid_ = -1;
  int health_port_ = 0;
  int start_exit_status_ = -1;
};

// A wait status as a person reads it: "exit status 0", "killed by signal
// 11 (SEGV)"; -1 (DaemonProcess::Wait's timeout) is "still running".
std::string DescribeWaitStatus(int status);

// Whether something accepts connections on a unix socket path.
bool SocketAccepts(const std::string& path);

}  // namespace nbdk::test
