#include "executor/storage/uring_store.h"

#include <fmt/format.h>
#include <liburing.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "executor/storage/storage_file.h"

namespace zinf {

namespace {
constexpr uint64_t kMaxFixedBuffer = 1ull << 30;  // kernel limit per registered buffer
}

UringStore::UringStore(std::string path, StorageOptions options)
    : Storage(std::move(path), options, kDirectIoAlignment), ring_(std::make_unique<io_uring>()) {}

Result<std::unique_ptr<UringStore>> UringStore::Open(const std::string& path, const StorageOptions& options,
                                                     const PinnedHostPool* pool, bool truncate) {
  ZINF_RETURN_IF_ERROR(ValidateOptions(path, options, kDirectIoAlignment));
  std::unique_ptr<UringStore> s(new UringStore(path, options));
  int rc = io_uring_queue_init(options.queue_depth, s->ring_.get(), 0);
  if (rc < 0) {
    return Unsupported(fmt::format(
        "io_uring_queue_init(entries={}) failed: {} (io_uring disabled by seccomp/container or "
        "kernel.io_uring_disabled?); use the posix backend",
        options.queue_depth, std::strerror(-rc)));
  }
  s->ring_ready_ = true;
  ZINF_ASSIGN_OR_RETURN(s->fd_, OpenStorageFile(path, /*direct=*/true, truncate));

  rc = io_uring_register_files(s->ring_.get(), &s->fd_, 1);
  if (rc == 0) {
    s->fixed_file_ = true;
  } else {
    s->note_ = fmt::format("fixed file not registered: {}", std::strerror(-rc));
  }
  if (pool != nullptr) {
    auto* base = static_cast<const char*>(pool->base());
    for (uint64_t off = 0; off < pool->capacity_bytes(); off += kMaxFixedBuffer) {
      uint64_t n = std::min(kMaxFixedBuffer, pool->capacity_bytes() - off);
      s->iovecs_.push_back(iovec{const_cast<char*>(base + off), n});
    }
    rc = io_uring_register_buffers(s->ring_.get(), s->iovecs_.data(),
                                   static_cast<unsigned>(s->iovecs_.size()));
    if (rc == 0) {
      s->reg_base_ = base;
      s->reg_bytes_ = pool->capacity_bytes();
    } else {
      s->iovecs_.clear();
      if (!s->note_.empty()) s->note_ += "; ";
      s->note_ += fmt::format("fixed buffers not registered: {} (RLIMIT_MEMLOCK?)", std::strerror(-rc));
    }
  }
  s->cqes_.resize(std::max<uint32_t>(options.queue_depth, 16));
  return s;
}

UringStore::~UringStore() {
  if (ring_ready_ && fd_ >= 0) (void)WaitAll();  // never free a ring with I/O into caller buffers
  if (ring_ready_) io_uring_queue_exit(ring_.get());  // waits for in-flight requests
  if (fd_ >= 0) ::close(fd_);
}

int UringStore::FixedIndex(const void* buf, uint32_t len) const {
  if (reg_base_ == nullptr) return -1;
  auto* c = static_cast<const char*>(buf);
  if (c < reg_base_ || c >= reg_base_ + reg_bytes_) return -1;
  uint64_t off = static_cast<uint64_t>(c - reg_base_);
  uint64_t idx = off / kMaxFixedBuffer;
  if (off + len > std::min(reg_bytes_, (idx + 1) * kMaxFixedBuffer)) return -1;  // straddles
  return static_cast<int>(idx);
}

Status UringStore::DeviceSubmit(std::span<const ChunkOp> ops) {
  if (broken_) return IoError(broken_msg_);
  io_uring* ring = ring_.get();
  const int fd = fixed_file_ ? 0 : fd_;
  for (const ChunkOp& op : ops) {
    io_uring_sqe* sqe = io_uring_get_sqe(ring);
    if (sqe == nullptr) {
      io_uring_submit(ring);
      sqe = io_uring_get_sqe(ring);
      if (sqe == nullptr) return Internal(fmt::format("{}: io_uring submission queue full", path()));
    }
    int idx = FixedIndex(op.buf, op.len);
    if (op.op == IoOp::kRead) {
      if (idx >= 0) io_uring_prep_read_fixed(sqe, fd, op.buf, op.len, op.offset, idx);
      else io_uring_prep_read(sqe, fd, op.buf, op.len, op.offset);
    } else {
      if (idx >= 0) io_uring_prep_write_fixed(sqe, fd, op.buf, op.len, op.offset, idx);
      else io_uring_prep_write(sqe, fd, op.buf, op.len, op.offset);
    }
    if (idx >= 0) ++fixed_ops_;
    if (fixed_file_) sqe->flags |= IOSQE_FIXED_FILE;
    io_uring_sqe_set_data(sqe, reinterpret_cast<void*>(static_cast<uintptr_t>(op.cookie)));
  }
  int transient = 0;
  while (io_uring_sq_ready(ring) > 0) {
    int rc = io_uring_submit(ring);
    if (rc >= 0) continue;
    if ((rc == -EINTR || rc == -EAGAIN || rc == -EBUSY) && ++transient < 10000) {
      std::this_thread::yield();
      continue;
    }
    broken_ = true;
    broken_msg_ = fmt::format("{}: io_uring_submit failed: {} (ring unusable)", path(), std::strerror(-rc));
    return IoError(broken_msg_);
  }
  return Status::Ok();
}

Result<size_t> UringStore::DeviceReap(std::span<ChunkDone> out, int timeout_ms) {
  io_uring* ring = ring_.get();
  if (timeout_ms != 0 && io_uring_cq_ready(ring) == 0) {
    io_uring_cqe* cqe = nullptr;
    int rc;
    if (timeout_ms < 0) {
      rc = io_uring_wait_cqe(ring, &cqe);
    } else {
      __kernel_timespec ts{timeout_ms / 1000, (timeout_ms % 1000) * 1000000LL};
      rc = io_uring_wait_cqe_timeout(ring, &cqe, &ts);
    }
    if (rc < 0 && rc != -ETIME && rc != -EINTR && rc != -EAGAIN) {
      return ErrnoStatus(-rc, fmt::format("io_uring wait on {}", path()), __FILE__, __LINE__);
    }
  }
  unsigned want = static_cast<unsigned>(std::min(out.size(), cqes_.size()));
  unsigned n = io_uring_peek_batch_cqe(ring, cqes_.data(), want);
  for (unsigned i = 0; i < n; ++i) {
    out[i] = ChunkDone{static_cast<uint64_t>(reinterpret_cast<uintptr_t>(io_uring_cqe_get_data(cqes_[i]))),
                       cqes_[i]->res};
  }
  io_uring_cq_advance(ring, n);
  return static_cast<size_t>(n);
}

Status UringStore::Flush() {
  if (::fdatasync(fd_) != 0) {
    return ErrnoStatus(errno, fmt::format("fdatasync {}", path()), __FILE__, __LINE__);
  }
  return Status::Ok();
}

}  // namespace zinf
