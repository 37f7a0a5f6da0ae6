// THE CRASH TEST: a child process Put()s a few records over and over with
// increasing sequence numbers while the parent SIGKILLs it at a random
// moment; LoadAll() must then find, for every volume, the last version whose
// Put returned or the one being written - whole, checksummed, never torn -
// and nothing to quarantine. Repeated kRounds times on the real file system.
//
// A SIGKILL keeps the page cache, so this checks atomic replacement (rename)
// and temp-file cleanup, not fsync durability under power loss; fsync errors
// are covered by the sticky-error tests.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>
#include <thread>

#include "base/log.h"
#include "journal/node_journal.h"
#include "test/journal/node_journal_fixtures.h"

namespace nbdk {
namespace {

constexpr int kRounds = 50;
constexpr int kVolumes = 4;
constexpr int kMaxPutsPerRound = 2000;  // the parent kills long before
constexpr int kMaxPutsBeforeKill = 200;
constexpr int kMaxExtraDelayUs = 3000;

// Written by the child, read by the parent after the kill.
struct Progress {
  std::atomic<int64_t> started[kVolumes];    // seq of the Put begun last
  std::atomic<int64_t> completed[kVolumes];  // seq of the Put that returned OK last
  std::atomic<int> puts;                     // Puts returned OK this round
};
static_assert(std::atomic<int64_t>::is_always_lock_free);

std::string VolumeId(int v) { return "crash-vol-" + std::to_string(v); }

// A record whose every field depends on seq, with sizes from ~1 KiB to
// ~9 KiB, so a torn or mixed file would be visible.
VolumeRecord RecordAt(int v, int64_t seq) {
  VolumeRecord r = testing::FullRecord(VolumeId(v));
  r.updated_ms = seq;
  r.rbd_nbd_pid = static_cast<int32_t>(seq % 1000000);
  r.staging_path += "/" + std::to_string(seq);
  r.map_options.push_back(std::string(static_cast<size_t>((seq * 7919) % 8000), static_cast<char>('a' + seq % 26)));
  r.published_targets.resize(static_cast<size_t>(seq % 5), {"/pods/" + std::to_string(seq), seq % 2 == 0, false, {}});
  return r;
}

[[noreturn]] void RunChild(const std::string& dir, Progress* p, int64_t base_seq, uint64_t seed) {
  Result<NodeJournal> j = NodeJournal::Open(dir);
  if (!j.ok()) _exit(3);
  std::mt19937_64 rng(seed);
  for (int i = 1; i <= kMaxPutsPerRound; ++i) {
    int v = static_cast<int>(rng() % kVolumes);
    int64_t seq = base_seq + i;
    p->started[v].store(seq);
    if (!j->Put(RecordAt(v, seq)).ok()) _exit(2);
    p->completed[v].store(seq);
    p->puts.fetch_add(1);
  }
  _exit(0);
}

size_t CountTempFiles(const std::string& dir) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) n += e.path().extension() == ".tmp";
  return n;
}

TEST(NodeJournalCrashTest, SigkillDuringPutsLeavesOnlyWholeRecords) {
  uint64_t seed = std::random_device{}();
  if (const char* s = std::getenv("NBDK_CRASH_SEED")) seed = std::strtoull(s, nullptr, 10);
  std::cout << "crash test seed " << seed << " (rerun with NBDK_CRASH_SEED=" << seed << ")" << std::endl;
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
  std::mt19937_64 rng(seed);
  SetLogLevel(LogLevel::kWarn);  // every Open logs the temp files it removes

  testing::ScratchDir scratch;
  std::string dir = scratch.path() + "/journal";
  void* mem = mmap(nullptr, sizeof(Progress), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  auto* p = new (mem) Progress{};
  int64_t last_loaded[kVolumes] = {};  // 0: no record yet
  int total_puts = 0, mid_put = 0, new_versions = 0, temp_files = 0;

  auto begin = std::chrono::steady_clock::now();
  for (int round = 0; round < kRounds; ++round) {
    for (int v = 0; v < kVolumes; ++v) p->started[v] = p->completed[v] = last_loaded[v];
    p->puts = 0;
    int64_t base_seq = int64_t{round + 1} * 1000000;
    int kill_after = 1 + static_cast<int>(rng() % kMaxPutsBeforeKill);
    int delay_us = static_cast<int>(rng() % (kMaxExtraDelayUs + 1));
    uint64_t child_seed = rng();
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) RunChild(dir, p, base_seq, child_seed);

    int status = 0;
    while (p->puts.load() < kill_after && waitpid(pid, &status, WNOHANG) == 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
    kill(pid, SIGKILL);
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "round " << round << ": child was not killed mid-run, status " << status;

    total_puts += p->puts.load();
    temp_files += static_cast<int>(CountTempFiles(dir));
    Result<NodeJournal> j = NodeJournal::Open(dir);
    ASSERT_TRUE(j.ok()) << j.status().ToString();
    Result<LoadResult> loaded = j->LoadAll();
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    ASSERT_TRUE(loaded->quarantined.empty())
        << "round " << round << ": " << loaded->quarantined[0].reason.ToString() << " (seed " << seed << ")";

    bool present[kVolumes] = {};
    for (const VolumeRecord& r : loaded->records) {
      int v = r.volume_id.back() - '0';
      ASSERT_TRUE(v >= 0 && v < kVolumes) << r.volume_id;
      int64_t seq = r.updated_ms, done = p->completed[v].load(), begun = p->started[v].load();
      ASSERT_TRUE(seq == done || seq == begun)
          << "round " << round << " " << r.volume_id << ": loaded seq " << seq << ", last completed " << done
          << ", in flight " << begun << " (seed " << seed << ")";
      ASSERT_EQ(r, RecordAt(v, seq)) << "round " << round << " " << r.volume_id << " seq " << seq;
      if (begun != done) ++mid_put;
      if (begun != done && seq == begun) ++new_versions;
      present[v] = true;
      last_loaded[v] = seq;
    }
    for (int v = 0; v < kVolumes; ++v) {
      EXPECT_EQ(present[v], p->completed[v].load() != 0) << "round " << round << " " << VolumeId(v);
    }
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  std::cout << "crash test: " << kRounds << " SIGKILLs, " << total_puts << " completed Puts, " << mid_put
            << " kills during a Put (" << new_versions << " of those already showed the new version), " << temp_files
            << " leftover temp files cleaned, 0 torn or quarantined, " << seconds << " s" << std::endl;
  ::testing::Test::RecordProperty("completed_puts", total_puts);
  ::testing::Test::RecordProperty("kills_during_put", mid_put);
  p->~Progress();
  munmap(mem, sizeof(Progress));
  SetLogLevel(LogLevel::kInfo);
}

}  // namespace
}  // namespace nbdk
