// UringStore: Storage on io_uring with O_DIRECT (alignment 4096), the file registered as
// a fixed file, and (optionally) a PinnedHostPool's region registered as fixed buffers:
// chunks whose buffer lies inside it use READ_FIXED / WRITE_FIXED (no per-op page
// pinning); other buffers use plain READ / WRITE. The ring has queue_depth entries.
//
// Open fails with Unsupported when io_uring cannot be set up (seccomp in containers,
// kernel.io_uring_disabled) or the filesystem refuses O_DIRECT; callers fall back to
// PosixStore (OpenStore in store_factory.h does this). Registration failures (e.g.
// RLIMIT_MEMLOCK) are not fatal: fixed_buffers()/fixed_file() report what is in use.
#pragma once

#include <memory>
#include <string>
#include <sys/uio.h>
#include <vector>

#include "executor/storage/pinned_host_pool.h"
#include "executor/storage/storage.h"

struct io_uring;
struct io_uring_cqe;

namespace zinf {

class UringStore : public Storage {
 public:
  static Result<std::unique_ptr<UringStore>> Open(const std::string& path, const StorageOptions& options,
                                                  const PinnedHostPool* pool = nullptr,
                                                  bool truncate = true);
  ~UringStore() override;
  const char* kind() const override { return "uring"; }
  Status Flush() override;

  bool fixed_file() const { return fixed_file_; }
  bool fixed_buffers() const { return !iovecs_.empty(); }
  const std::string& registration_note() const { return note_; }  // why something is not fixed
  uint64_t fixed_buffer_ops() const { return fixed_ops_; }

 protected:
  Status DeviceSubmit(std::span<const ChunkOp> ops) override;
  Result<size_t> DeviceReap(std::span<ChunkDone> out, int timeout_ms) override;

 private:
  UringStore(std::string path, StorageOptions options);
  int FixedIndex(const void* buf, uint32_t len) const;  // -1 if not in a registered buffer

  std::unique_ptr<io_uring> ring_;
  bool ring_ready_ = false;
  int fd_ = -1;
  bool fixed_file_ = false;
  bool broken_ = false;
  std::string broken_msg_;
  std::vector<iovec> iovecs_;  // registered buffers (<= 1 GiB each, contiguous)
  const char* reg_base_ = nullptr;
  uint64_t reg_bytes_ = 0;
  std::string note_;
  uint64_t fixed_ops_ = 0;
  std::vector<io_uring_cqe*> cqes_;
};

}  // namespace zinf
