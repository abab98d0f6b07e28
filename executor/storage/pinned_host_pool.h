// PinnedHostPool: one 4096-aligned host region of fixed capacity, page-locked with
// mlock when possible, from which staging buffers (NVMe swap buffers, H2D/D2H staging)
// are carved. Exceeding the capacity fails with OutOfMemory, like a real pinned budget.
//
// * The region is an anonymous mapping (MAP_NORESERVE); one of 2 MiB or more is 2 MiB-aligned
//   and asks for transparent huge pages (MADV_HUGEPAGE: physically contiguous DMA targets, so
//   an I/O block is a few virtio segments, not one per 4 KiB page); with lock=true it is mlock'ed
//   at creation (which commits it). If mlock fails (RLIMIT_MEMLOCK, no CAP_IPC_LOCK)
//   the pool still works unlocked: locked() is false and lock_error() says why.
// * Alloc rounds sizes up to 4096 and returns 4096-aligned pointers (O_DIRECT-ready);
//   first-fit with coalescing; used and peak bytes are tracked.
// * Thread-safe. The CUDA backend may additionally cudaHostRegister(base(), size()).
// * UringStore registers the whole region as fixed buffers.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "core/status.h"
#include "executor/storage/range_allocator.h"

namespace zinf {

class PinnedHostPool;

// Move-only owner of one pool allocation; frees on destruction.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(PinnedHostPool* pool, void* ptr, uint64_t bytes) : pool_(pool), ptr_(ptr), bytes_(bytes) {}
  PinnedBuffer(PinnedBuffer&& o) noexcept { *this = std::move(o); }
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() { reset(); }

  void reset();
  void* data() const { return ptr_; }
  template <typename T>
  T* as() const { return static_cast<T*>(ptr_); }
  uint64_t bytes() const { return bytes_; }  // the rounded-up size
  explicit operator bool() const { return ptr_ != nullptr; }

 private:
  PinnedHostPool* pool_ = nullptr;
  void* ptr_ = nullptr;
  uint64_t bytes_ = 0;
};

class PinnedHostPool {
 public:
  static constexpr uint64_t kAlignment = 4096;
  static constexpr uint64_t kHugePage = uint64_t{2} << 20;  // x86-64's transparent huge page

  // capacity_bytes > 0 (rounded up to 4096). lock: try to mlock the region.
  static Result<std::unique_ptr<PinnedHostPool>> Create(uint64_t capacity_bytes, bool lock = true);
  ~PinnedHostPool();
  PinnedHostPool(const PinnedHostPool&) = delete;
  PinnedHostPool& operator=(const PinnedHostPool&) = delete;

  Result<void*> Alloc(uint64_t bytes);
  Result<PinnedBuffer> AllocBuffer(uint64_t bytes);
  Status Free(void* ptr);

  bool locked() const { return locked_; }
  // The region (at least kHugePage) was asked for transparent huge pages (madvise accepted;
  // whether the kernel found them is its call: AnonHugePages in /proc/self/smaps).
  bool huge_pages() const { return huge_pages_; }
  const std::string& lock_error() const { return lock_error_; }
  void* base() const { return base_; }
  uint64_t capacity_bytes() const { return capacity_; }
  bool Contains(const void* p, uint64_t bytes) const;
  uint64_t used_bytes() const;
  uint64_t peak_bytes() const;
  uint64_t largest_free_bytes() const;
  size_t num_allocations() const;

 private:
  PinnedHostPool(void* base, uint64_t capacity);

  char* base_;
  uint64_t capacity_;
  bool locked_ = false;
  bool huge_pages_ = false;
  std::string lock_error_;
  mutable std::mutex mu_;
  RangeAllocator alloc_;
};

}  // namespace zinf
