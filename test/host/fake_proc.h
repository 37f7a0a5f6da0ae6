// A process as /proc shows it, written into a test's fake proc root: the
// files the process scan (host/process_scan.h) reads. Shared by the host's
// tests and the heal's evidence tests (test/csi/heal/heal_evidence_test.cc).
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace nbdk {

// <proc_root>/<pid>/cmdline holding `cmdline` (NULs included), an exe link
// to `exe` and a status whose Uid line gives `uid` four times.
inline void WriteFakeProcess(const std::string& proc_root, int pid, const std::string& cmdline, const std::string& exe,
                             int64_t uid) {
  std::string d = proc_root + "/" + std::to_string(pid);
  std::filesystem::create_directories(d);
  std::ofstream(d + "/cmdline", std::ios::binary) << cmdline;
  std::filesystem::create_symlink(exe, d + "/exe");
  std::ofstream(d + "/status") << "Name:\trbd-nbd\nUid:\t" << uid << "\t" << uid << "\t" << uid << "\t" << uid
                               << "\nGid:\t0\t0\t0\t0\n";
}

}  // namespace nbdk
