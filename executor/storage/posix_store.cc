#include "executor/storage/posix_store.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "core/process_env.h"
#include "executor/storage/storage_file.h"

namespace zinf {

PosixStore::PosixStore(std::string path, StorageOptions options, bool direct, int fd)
    : Storage(std::move(path), options, direct ? kDirectIoAlignment : 1), direct_(direct), fd_(fd) {}

Result<std::unique_ptr<PosixStore>> PosixStore::Open(const std::string& path, const StorageOptions& options,
                                                     bool direct, bool truncate, int threads) {
  ZINF_RETURN_IF_ERROR(ValidateOptions(path, options, direct ? kDirectIoAlignment : 1));
  ZINF_ASSIGN_OR_RETURN(int fd, OpenStorageFile(path, direct, truncate));
  std::unique_ptr<PosixStore> s(new PosixStore(path, options, direct, fd));
  if (threads < 0) threads = static_cast<int>(std::min<uint32_t>(options.queue_depth, 4));
  for (int i = 0; i < threads; ++i) s->workers_.emplace_back([p = s.get()] { p->WorkerLoop(); });
  return s;
}

PosixStore::~PosixStore() {
  (void)WaitAll();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
  ::close(fd_);
}

int64_t PosixStore::Execute(const ChunkOp& op) const {
  for (;;) {
    ssize_t r = op.op == IoOp::kRead ? ::pread(fd_, op.buf, op.len, static_cast<off_t>(op.offset))
                                     : ::pwrite(fd_, op.buf, op.len, static_cast<off_t>(op.offset));
    if (r >= 0) return r;
    if (errno != EINTR) return -errno;
  }
}

void PosixStore::WorkerLoop() {
  SetThreadName("io");
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [&] { return stop_ || !work_.empty(); });
    if (work_.empty()) return;  // stop requested and drained
    ChunkOp op = work_.front();
    work_.pop_front();
    lock.unlock();
    ChunkDone d{op.cookie, Execute(op)};
    lock.lock();
    done_.push_back(d);
    done_cv_.notify_one();
  }
}

Status PosixStore::DeviceSubmit(std::span<const ChunkOp> ops) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const ChunkOp& op : ops) {
    if (workers_.empty()) {
      done_.push_back(ChunkDone{op.cookie, Execute(op)});
    } else {
      work_.push_back(op);
    }
  }
  if (!workers_.empty()) work_cv_.notify_all();
  return Status::Ok();
}

Result<size_t> PosixStore::DeviceReap(std::span<ChunkDone> out, int timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  auto ready = [&] { return !done_.empty(); };
  if (timeout_ms < 0) {
    done_cv_.wait(lock, ready);
  } else if (timeout_ms > 0) {
    done_cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), ready);
  }
  size_t n = std::min(out.size(), done_.size());
  for (size_t i = 0; i < n; ++i) {
    out[i] = done_.front();
    done_.pop_front();
  }
  return n;
}

Status PosixStore::Flush() {
  if (::fdatasync(fd_) != 0) {
    return ErrnoStatus(errno, fmt::format("fdatasync {}", path()), __FILE__, __LINE__);
  }
  return Status::Ok();
}

}  // namespace zinf
