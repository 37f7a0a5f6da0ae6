#include "host/mount_table.h"

#include <libmount/libmount.h>

#include <cerrno>
#include <cstdio>
#include <memory>

namespace nbdk {
namespace {

struct TableUnref {
  void operator()(libmnt_table* t) const { mnt_unref_table(t); }
};
struct IterFree {
  void operator()(libmnt_iter* i) const { mnt_free_iter(i); }
};
struct FileClose {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using TablePtr = std::unique_ptr<libmnt_table, TableUnref>;
using IterPtr = std::unique_ptr<libmnt_iter, IterFree>;
using FilePtr = std::unique_ptr<std::FILE, FileClose>;

// libmount skips a line it cannot parse unless told otherwise; this
// callback records the first such line (in the table's userdata) and stops.
int StopAtBadLine(libmnt_table* table, const char* /*filename*/, int line) {
  int* bad_line = static_cast<int*>(mnt_table_get_userdata(table));
  if (*bad_line == 0) *bad_line = line;
  return -EINVAL;
}

// A table whose parser stops at the first malformed line. libmount reads
// its debug mask from the environment on first use, unsynchronised: done
// once here, before any pool thread can race it.
TablePtr NewStrictTable(int* bad_line) {
  [[maybe_unused]] static const bool debug_initialised = (mnt_init_debug(0), true);
  TablePtr table(mnt_new_table());
  if (!table) return nullptr;
  mnt_table_set_userdata(table.get(), bad_line);
  mnt_table_set_parser_errcb(table.get(), StopAtBadLine);
  return table;
}

std::string Field(const char* value) { return value ? value : ""; }

// The parsed table as MountEntry values; `what` names the input in errors.
// libmount guesses the format from the first line and reads anything not
// starting with two numbers as fstab, so entries without the kernel's mark
// mean the input was not mountinfo at all.
Result<std::vector<MountEntry>> Entries(libmnt_table* table, int rc, int bad_line, const std::string& what) {
  if (bad_line != 0) return Status::Corruption(what + " line " + std::to_string(bad_line) + ": malformed");
  if (rc < 0) return Status::FromErrno(-rc, "read " + what);
  IterPtr iter(mnt_new_iter(MNT_ITER_FORWARD));
  if (!iter) return Status::FromErrno(ENOMEM, "read " + what);
  std::vector<MountEntry> out;
  libmnt_fs* fs = nullptr;
  while (mnt_table_next_fs(table, iter.get(), &fs) == 0) {
    if (!mnt_fs_is_kernel(fs)) {
      return Status::Corruption(what +
                                ": not in the mountinfo format (each line starts with a mount ID and a parent ID)");
    }
    MountEntry e;
    e.root = Field(mnt_fs_get_root(fs));
    e.mount_point = Field(mnt_fs_get_target(fs));
    e.fs_type = Field(mnt_fs_get_fstype(fs));
    e.source = Field(mnt_fs_get_source(fs));
    e.options = Field(mnt_fs_get_vfs_options(fs));
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

bool MountEntry::read_only() const {
  return options == "ro" || options.starts_with("ro,") || options.find(",ro,") != std::string::npos ||
         options.ends_with(",ro");
}

Result<std::vector<MountEntry>> ParseMountInfo(std::string_view text) {
  const std::string what = "mountinfo";
  if (text.empty()) return std::vector<MountEntry>{};
  std::string copy(text);  // fmemopen wants a mutable buffer
  FilePtr file(fmemopen(copy.data(), copy.size(), "r"));
  if (!file) return Status::FromErrno(errno, "read " + what);
  int bad_line = 0;
  TablePtr table = NewStrictTable(&bad_line);
  if (!table) return Status::FromErrno(ENOMEM, "read " + what);
  int rc = mnt_table_parse_stream(table.get(), file.get(), what.c_str());
  return Entries(table.get(), rc, bad_line, what);
}

Result<std::vector<MountEntry>> ReadMountTable(const std::string& path) {
  int bad_line = 0;
  TablePtr table = NewStrictTable(&bad_line);
  if (!table) return Status::FromErrno(ENOMEM, "read " + path);
  int rc = mnt_table_parse_file(table.get(), path.c_str());
  return Entries(table.get(), rc, bad_line, path);
}

const MountEntry* FindMount(const std::vector<MountEntry>& table, std::string_view mount_point) {
  const MountEntry* found = nullptr;
  for (const MountEntry& e : table) {
    if (e.mount_point == mount_point) found = &e;
  }
  return found;
}

}  // namespace nbdk
