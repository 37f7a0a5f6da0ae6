// NodeJournal: the durable record of every volume staged on this node, one
// file per volume in <state_dir>/journal/, read back on start so the daemon
// can re-adopt live rbd-nbd processes.
//
// Layout of the journal directory:
//   LOCK                  flock'ed by the open journal: one process at a time
//   <name>.rec            one VolumeRecord in a checksummed frame
//                         (node_record_frame.h; name: node_record_file_name.h)
//   <name>.rec.tmp        a Put in progress; left over only by a crash
//   quarantine/<name>.rec.<unix ms>[.<n>]   files that failed to load
//
// Why files and not SQLite, why a frame, why an fsync failure is sticky:
// docs/design/node-journal.md.
//
// Durability: a Put or Remove that returned OK survives a crash or power
// loss. After a crash the file holds the old or the new record, never a mix.
// An fsync failure leaves the kernel's view of the file unknown (written-back
// pages may have been dropped), so it makes the journal refuse every later
// Put, Remove and LoadAll (a sticky error, as in LevelDB); the daemon must
// restart to trust the journal again.
//
// Threading: every call blocks on file I/O and fsync - run it in
// EventLoop::RunBlocking, never on the loop thread. Calls may come from any
// thread; an internal mutex serializes them.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "journal/node_journal_fs.h"
#include "journal/volume_record.h"

namespace nbdk {

// A journal file that did not load, now under <dir>/quarantine/.
struct QuarantinedFile {
  std::string file;      // its name in the journal directory
  std::string moved_to;  // its full path in the quarantine directory
  Status reason;         // why it did not load, e.g. a checksum mismatch
};

struct LoadResult {
  std::vector<VolumeRecord> records;  // sorted by volume_id
  std::vector<QuarantinedFile> quarantined;
};

class NodeJournal {
 public:
  // Creates `dir` (mode 0700; its parent must exist) if it is missing, takes
  // its LOCK (Unavailable if another process holds it) and deletes temp
  // files left by a crash: they were never renamed, so no Put returned OK
  // for them. `fs` must outlive the journal; tests pass a failing one.
  static Result<NodeJournal> Open(std::string dir, JournalFs& fs = PosixJournalFs());

  NodeJournal(NodeJournal&&) noexcept;
  NodeJournal& operator=(NodeJournal&&) noexcept;
  ~NodeJournal();  // releases the LOCK

  // Replaces the volume's record (temp file, fsync, rename, fsync of the
  // directory). InvalidArgument for a volume id that is empty or longer
  // than 128 bytes. On failure the previous record is still in place; after
  // an fsync failure it may be either, and the journal is read-only.
  Status Put(const VolumeRecord& record);

  // Deletes the volume's record; OK when there is none.
  Status Remove(std::string_view volume_id);

  // Reads every record. A file that cannot be read, is torn, fails its
  // checksum, does not parse or names another volume is moved to the
  // quarantine directory (never overwritten, never deleted), logged as an
  // error and listed; loading goes on with the others. Fails only when a
  // file cannot be quarantined, the directory cannot be listed, or after an
  // fsync failure (quarantining writes to the directory).
  Result<LoadResult> LoadAll();

  const std::string& dir() const;

 private:
  struct State;
  explicit NodeJournal(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;  // behind a pointer: the mutex cannot move
};

}  // namespace nbdk
