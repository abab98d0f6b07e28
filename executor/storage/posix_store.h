// PosixStore: Storage on pread/pwrite, optionally O_DIRECT. The fallback where io_uring
// is unavailable, or O_DIRECT is not supported (open fails with Unsupported; reopen with
// direct=false). Chunk ops run on `threads` worker threads (0: inline on submit).
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "executor/storage/storage.h"

namespace zinf {

class PosixStore : public Storage {
 public:
  // threads < 0: min(queue_depth, 4).
  static Result<std::unique_ptr<PosixStore>> Open(const std::string& path, const StorageOptions& options,
                                                  bool direct, bool truncate = true, int threads = -1);
  ~PosixStore() override;
  const char* kind() const override { return direct_ ? "posix-direct" : "posix"; }
  Status Flush() override;
  bool direct() const { return direct_; }

 protected:
  Status DeviceSubmit(std::span<const ChunkOp> ops) override;
  Result<size_t> DeviceReap(std::span<ChunkDone> out, int timeout_ms) override;

 private:
  PosixStore(std::string path, StorageOptions options, bool direct, int fd);
  int64_t Execute(const ChunkOp& op) const;  // bytes or -errno
  void WorkerLoop();

  bool direct_;
  int fd_;
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<ChunkOp> work_;
  std::deque<ChunkDone> done_;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace zinf
