// Opening the file behind a file-backed Storage, with clear errors.
#pragma once

#include <string>

#include "core/status.h"

namespace zinf {

// Opens (creating, mode 0644) `path` read-write; direct adds O_DIRECT; truncate empties
// an existing file. Errors: missing directory -> NotFound; O_DIRECT refused (EINVAL, e.g.
// tmpfs on older kernels) -> Unsupported with a hint; read-only or unwritable location
// -> Io naming the path.
Result<int> OpenStorageFile(const std::string& path, bool direct, bool truncate);

// Filesystem type of `path` for messages ("ext4", "xfs", "tmpfs", "0x1234" if unknown).
std::string FilesystemName(const std::string& path);

}  // namespace zinf
