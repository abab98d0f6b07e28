#include "core/file_util.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

namespace zinf {

Result<std::string> ReadFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, fmt::format("{}: open", path), __FILE__, __LINE__);
  std::string out;
  char buf[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      return ErrnoStatus(e, fmt::format("{}: read", path), __FILE__, __LINE__);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

Status WriteAll(int fd, const void* data, size_t n, const std::string& path) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return ErrnoStatus(w < 0 ? errno : EIO, fmt::format("{}: write", path), __FILE__, __LINE__);
    p += w;
    n -= static_cast<size_t>(w);
  }
  return Status::Ok();
}

Status WriteFileAtomic(const std::string& path, const std::string& data) {
  return WriteFileAtomicWith(path, [&](int fd) { return WriteAll(fd, data.data(), data.size(), path); });
}

Status WriteFileAtomicWith(const std::string& path, const std::function<Status(int fd)>& write) {
  std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(errno, fmt::format("{}: create", tmp), __FILE__, __LINE__);
  if (Status st = write(fd); !st.ok()) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return st;
  }
  if (::fsync(fd) != 0) {
    int e = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return ErrnoStatus(e, fmt::format("{}: fsync", path), __FILE__, __LINE__);
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return ErrnoStatus(e, fmt::format("{}: rename", path), __FILE__, __LINE__);
  }
  std::string dir = std::filesystem::path(path).parent_path().string();
  int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Status::Ok();
}

Status MakeDirs(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return IoError(fmt::format("{}: cannot create directory: {}", dir, ec.message()));
  return Status::Ok();
}

}  // namespace zinf
