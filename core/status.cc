#include "core/status.h"

#include <fmt/format.h>

namespace zinf {

const char* CodeName(Code c) {
  switch (c) {
    case Code::kOk: return "OK";
    case Code::kInvalidArgument: return "InvalidArgument";
    case Code::kNotFound: return "NotFound";
    case Code::kIo: return "IoError";
    case Code::kNoSpace: return "NoSpace";
    case Code::kOutOfMemory: return "OutOfMemory";
    case Code::kCorrupt: return "Corrupt";
    case Code::kUnsupported: return "Unsupported";
    case Code::kInfeasible: return "Infeasible";
    case Code::kInternal: return "Internal";
    case Code::kAborted: return "Aborted";
  }
  return "Unknown";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return fmt::format("{}: {}", CodeName(code_), message_);
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  return Status(code_, fmt::format("{}: {}", context, message_));
}

int ExitCodeFor(const Status& s) {
  switch (s.code()) {
    case Code::kOk: return 0;
    case Code::kInvalidArgument:
    case Code::kNotFound: return 2;
    case Code::kInfeasible: return 3;
    default: return 1;
  }
}

Status ErrnoStatus(int err, std::string_view what, const char* file, int line) {
  std::string msg = fmt::format("{}: {} (errno {}) [{}:{}]", what, std::strerror(err), err, file, line);
  switch (err) {
    case ENOSPC: return NoSpace(std::move(msg));
    case ENOENT: return NotFound(std::move(msg));
    case ENOMEM: return OutOfMemory(std::move(msg));
    case EINVAL:
    // A path that names the wrong kind of thing ("/etc/passwd/x", a directory given as a file,
    // an over-long name) is bad input, not an I/O failure.
    case ENOTDIR:
    case EISDIR:
    case ENAMETOOLONG: return InvalidArgument(std::move(msg));
    default: return IoError(std::move(msg));
  }
}

}  // namespace zinf
