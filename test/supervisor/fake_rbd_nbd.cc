// fake_rbd_nbd: a test stand-in for rbd-nbd 16.2 (map/attach -f, unmap).
//
// Everything happens in $FAKE_RBD_NBD_DIR:
//  - argv.log: every invocation's argv, one line each (space-joined);
//  - <image>.<map|attach> / <nbdN>.unmap: optional behaviour, whitespace
//    separated key=value (a snapshot's: <image>@<snap>.<map|attach>):
//      mode=serve|exit|hang|garbage   (default serve; unmap: default exit 0)
//      device=/dev/nbdN               (map: the device to print)
//      delay_ms=N                     before printing the device
//      exit_code=N                    for mode=exit
//      stderr=text_with_underscores   one stderr line (underscores -> spaces)
//      fail_first=K                   the first K invocations exit 1
//      crash_after_ms=N               serve, then SIGKILL itself
//  - <image>.<cmd>.count: invocations so far (<image>@<snap>.<cmd>.count);
//  - <nbdN>.pid: the pid serving the device (serve mode). `unmap` SIGTERMs
//    it, like rbd-nbd unmap making the server exit 0;
//  - <image>.watchers: the image's watchers as the cluster would list them,
//    one "client.<pid>@127.0.0.1:0/<pid>" line each, the last one also the
//    lock owner: a server adds its line before it prints the device and
//    removes it when it exits on SIGTERM; a killed one's stays, as a
//    SIGKILLed client's watch and lock do;
//  - <image>.readers: the same for the servers of the image's snapshots,
//    which watch its header as rbd-nbd does but never own its lock.
// A server exits 0 on SIGTERM, like rbd-nbd's detach.
// With $FAKE_RBD_NBD_SYSFS it also plays the kernel's part there: a server
// writes its --cookie to block/<nbdN>/backend before it prints the device
// (the connect), and unmap removes it (the disconnect); a killed server's
// stays, as the kernel keeps a dead connection's configuration.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

std::string g_dir;
std::string g_sysfs;   // $FAKE_RBD_NBD_SYSFS, or empty
std::string g_cookie;  // --cookie

std::string Path(const std::string& name) { return g_dir + "/" + name; }

std::map<std::string, std::string> ReadBehaviour(const std::string& name) {
  std::map<std::string, std::string> kv;
  std::ifstream in(Path(name));
  std::string token;
  while (in >> token) {
    size_t eq = token.find('=');
    if (eq != std::string::npos) kv[token.substr(0, eq)] = token.substr(eq + 1);
  }
  return kv;
}

int Bump(const std::string& name) {
  int count = 0;
  {
    std::ifstream in(Path(name + ".count"));
    in >> count;
  }
  std::ofstream(Path(name + ".count")) << count + 1;
  return count;
}

int IntOr(const std::map<std::string, std::string>& kv, const std::string& key, int fallback) {
  auto it = kv.find(key);
  return it == kv.end() ? fallback : std::atoi(it->second.c_str());
}

void SleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

[[noreturn]] void HangForever() {
  for (;;) pause();
}

std::string DevName(const std::string& device) {  // "/dev/nbd3" -> "nbd3"
  return device.substr(device.rfind('/') + 1);
}

std::string BackendFile(const std::string& device) { return g_sysfs + "/block/" + DevName(device) + "/backend"; }

int Unmap(const std::string& device) {
  auto kv = ReadBehaviour(DevName(device) + ".unmap");
  if (kv.count("stderr")) {
    std::string text = kv["stderr"];
    for (char& c : text) c = c == '_' ? ' ' : c;
    std::fprintf(stderr, "%s\n", text.c_str());
  }
  if (kv.count("exit_code")) return IntOr(kv, "exit_code", 0);
  if (!g_sysfs.empty()) std::remove(BackendFile(device).c_str());
  int pid = 0;
  std::ifstream(Path(DevName(device) + ".pid")) >> pid;
  if (pid > 0) kill(pid, SIGTERM);
  return 0;
}

std::string ClientLine() { return "client." + std::to_string(getpid()) + "@127.0.0.1:0/" + std::to_string(getpid()); }

// The file a server's watch is listed in: <image>.watchers, or
// <image>.readers for a snapshot's.
std::string WatchFile(const std::string& name) {
  size_t at = name.find('@');
  return at == std::string::npos ? name + ".watchers" : name.substr(0, at) + ".readers";
}

void Unwatch(const std::string& name) {
  std::vector<std::string> kept;
  {
    std::ifstream in(Path(WatchFile(name)));
    for (std::string l; std::getline(in, l);) {
      if (l != ClientLine()) kept.push_back(l);
    }
  }
  std::ofstream out(Path(WatchFile(name)));
  for (const std::string& l : kept) out << l << "\n";
}

int Serve(const std::string& name, const std::string& device, const std::map<std::string, std::string>& kv) {
  // SIGTERM waits for sigwait from the start, as rbd-nbd's handler is in
  // place before it connects: an unmap right after the device is printed
  // must still see the watch removed.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigprocmask(SIG_BLOCK, &set, nullptr);
  std::ofstream(Path(WatchFile(name)), std::ios::app) << ClientLine() << "\n";
  std::ofstream(Path(DevName(device) + ".pid")) << getpid();
  if (!g_sysfs.empty()) {
    std::filesystem::create_directories(g_sysfs + "/block/" + DevName(device));
    std::ofstream(BackendFile(device)) << g_cookie << "\n";
  }
  std::printf("%s\n", device.c_str());
  std::fflush(stdout);
  std::fprintf(stderr, "fake: serving %s as pid %d\n", device.c_str(), getpid());
  std::fflush(stderr);
  if (kv.count("crash_after_ms")) {
    SleepMs(IntOr(kv, "crash_after_ms", 0));
    raise(SIGKILL);
  }
  int sig = 0;
  sigwait(&set, &sig);
  std::fprintf(stderr, "fake: SIGTERM, detaching %s\n", device.c_str());
  Unwatch(name);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* dir = std::getenv("FAKE_RBD_NBD_DIR");
  if (!dir || argc < 2) {
    std::fprintf(stderr, "fake_rbd_nbd: FAKE_RBD_NBD_DIR and a command are required\n");
    return 2;
  }
  g_dir = dir;
  if (const char* sysfs = std::getenv("FAKE_RBD_NBD_SYSFS")) g_sysfs = sysfs;
  std::string line;
  for (int i = 0; i < argc; ++i) line += (i ? " " : "") + std::string(argv[i]);
  line += "\n";
  // One append per invocation: concurrent fakes do not interleave.
  FILE* log = std::fopen(Path("argv.log").c_str(), "a");
  if (log) {
    std::fwrite(line.data(), 1, line.size(), log);
    std::fclose(log);
  }

  std::string cmd = argv[1];
  if (cmd == "unmap") return argc >= 3 ? Unmap(argv[2]) : 1;
  if (cmd != "map" && cmd != "attach") {
    std::fprintf(stderr, "fake_rbd_nbd: unknown command %s\n", cmd.c_str());
    return 1;
  }
  std::string spec = argv[argc - 1];
  std::string name = spec.substr(spec.rfind('/') + 1);  // "img" or "img@snap"
  std::string device;
  for (int i = 2; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--device") device = argv[i + 1];
    if (std::string(argv[i]) == "--cookie") g_cookie = argv[i + 1];
  }
  auto kv = ReadBehaviour(name + "." + cmd);
  int count = Bump(name + "." + cmd);
  if (cmd == "map") device = kv.count("device") ? kv["device"] : "/dev/nbd0";
  if (kv.count("stderr")) {
    std::string text = kv["stderr"];
    for (char& c : text) c = c == '_' ? ' ' : c;
    std::fprintf(stderr, "%s\n", text.c_str());
    std::fflush(stderr);
  }
  if (count < IntOr(kv, "fail_first", 0)) {
    std::fprintf(stderr, "rbd-nbd: fake %s failure %d\n", cmd.c_str(), count + 1);
    return 1;
  }
  std::string mode = kv.count("mode") ? kv["mode"] : "serve";
  SleepMs(IntOr(kv, "delay_ms", 0));
  if (mode == "exit") return IntOr(kv, "exit_code", 1);
  if (mode == "hang") HangForever();
  if (mode == "garbage") {
    std::printf("this is not a device\n/dev/sda1\n");
    std::fflush(stdout);
    HangForever();
  }
  return Serve(name, device, kv);
}
