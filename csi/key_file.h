// KeyFile: the cephx key of a staged volume, in a 0600 file on tmpfs.
//
// rbd-nbd and librados read the key from this file (--keyfile), so the key
// never appears in argv, where any user can read it in /proc. The file is
// created with O_EXCL|O_NOFOLLOW and mode 0600 from the start (no chmod
// window), replaced atomically by rename, and removed at unstage.
// Blocking: call from EventLoop::RunBlocking.
#pragma once

#include <ctime>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace nbdk {

// The key file path for a volume: <dir>/<volume_id>.key. ValidateVolumeId
// makes every volume ID a safe file name of at most 128 bytes; the
// Controller's per-call names start with '.', which no volume ID does.
std::string KeyFilePath(const std::string& dir, const std::string& volume_id);

// Writes `key` to KeyFilePath(dir, volume_id), creating `dir` (0700) when
// missing. Returns the path. The key is never part of an error message.
Result<std::string> WriteKeyFile(const std::string& dir, const std::string& volume_id, const std::string& key);

// Removes the file; a missing file is success.
Status RemoveKeyFile(const std::string& path);

// The key directory as the keys need it, created (0700) when missing: a
// directory, not a symlink, owned by this process's user, with no access
// for group or others. FailedPrecondition naming what is wrong otherwise;
// nothing is changed then.
Status CheckKeyDir(const std::string& dir);

// What a crash left in `dir`: the key file of every volume that `keep`
// does not name, and every Controller call's (a name starting with '.')
// last changed before `before` (the daemon's start: a call since may be in
// flight). Removes them and returns their names; other files are left.
Result<std::vector<std::string>> RemoveStaleKeyFiles(const std::string& dir,
                                                     const std::function<bool(std::string_view volume_id)>& keep,
                                                     std::time_t before);

}  // namespace nbdk
