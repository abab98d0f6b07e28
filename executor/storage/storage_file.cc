#include "executor/storage/storage_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace zinf {

std::string FilesystemName(const std::string& path) {
  struct statfs st;
  if (statfs(path.c_str(), &st) != 0) return "unknown";
  switch (static_cast<unsigned long>(st.f_type)) {
    case EXT4_SUPER_MAGIC: return "ext4";
    case XFS_SUPER_MAGIC: return "xfs";
    case TMPFS_MAGIC: return "tmpfs";
    case BTRFS_SUPER_MAGIC: return "btrfs";
    case OVERLAYFS_SUPER_MAGIC: return "overlayfs";
    case NFS_SUPER_MAGIC: return "nfs";
    case 0x65735546: return "fuse";
    case 0x62656572: return "sysfs";
    case PROC_SUPER_MAGIC: return "proc";
    default: return fmt::format("{:#x}", static_cast<unsigned long>(st.f_type));
  }
}

Result<int> OpenStorageFile(const std::string& path, bool direct, bool truncate) {
  int flags = O_RDWR | O_CREAT | O_CLOEXEC | (truncate ? O_TRUNC : 0) | (direct ? O_DIRECT : 0);
  int fd = ::open(path.c_str(), flags, 0644);
  if (fd >= 0) return fd;
  int err = errno;
  if (err == EINVAL && direct) {
    std::string dir = path.substr(0, path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/'));
    return Unsupported(fmt::format(
        "open {} with O_DIRECT: the filesystem ({}) does not support direct I/O; put the swap "
        "directory on a real disk or use the posix backend without O_DIRECT",
        path, FilesystemName(dir.empty() ? "." : dir)));
  }
  if (err == EACCES || err == EROFS || err == EPERM) {
    return IoError(fmt::format("cannot create {}: {} (is the directory writable?)", path,
                               std::strerror(err)));
  }
  return ErrnoStatus(err, fmt::format("open {}", path), __FILE__, __LINE__);
}

}  // namespace zinf
