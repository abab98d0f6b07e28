// File helpers: whole-file read, atomic write (temp file, fsync, rename).
#pragma once

#include <functional>
#include <string>

#include "core/status.h"

namespace zinf {

Result<std::string> ReadFile(const std::string& path);
// Writes `data` to path.tmp.<pid>, fsyncs it, renames it over `path`, fsyncs the directory.
// On failure the old file (if any) is untouched and the temporary is removed.
Status WriteFileAtomic(const std::string& path, const std::string& data);
// The same, with the contents streamed by `write(fd)` (large files), e.g. through WriteAll.
Status WriteFileAtomicWith(const std::string& path, const std::function<Status(int fd)>& write);
// Writes all n bytes to fd (retrying short writes and EINTR); errors name `path`.
Status WriteAll(int fd, const void* data, size_t n, const std::string& path);
// Creates the directory and its parents (like mkdir -p).
Status MakeDirs(const std::string& dir);

}  // namespace zinf
