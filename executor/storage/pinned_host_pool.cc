#include "executor/storage/pinned_host_pool.h"

#include <fmt/format.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "core/units.h"
#include "executor/storage/storage.h"  // AlignUp

namespace zinf {

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& o) noexcept {
  if (this != &o) {
    reset();
    pool_ = o.pool_;
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    o.pool_ = nullptr;
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

void PinnedBuffer::reset() {
  if (pool_ && ptr_) (void)pool_->Free(ptr_);
  pool_ = nullptr;
  ptr_ = nullptr;
  bytes_ = 0;
}

PinnedHostPool::PinnedHostPool(void* base, uint64_t capacity)
    : base_(static_cast<char*>(base)), capacity_(capacity), alloc_(capacity, kAlignment) {}

Result<std::unique_ptr<PinnedHostPool>> PinnedHostPool::Create(uint64_t capacity_bytes, bool lock) {
  if (capacity_bytes == 0) return InvalidArgument("pinned host pool: capacity must be > 0 bytes");
  uint64_t cap = AlignUp(capacity_bytes, kAlignment);
  // A pool of at least one huge page starts on a huge-page boundary and asks for transparent
  // huge pages before mlock commits it: a 4 MiB block whose pages are scattered takes up to
  // one virtio segment per 4 KiB page (254 a request here), so the block layer splits it,
  // and the same lane pairs read 1.3 or 2.1 GB/s by where the buffer's pages happened to lie
  // (docs/performance-model.md, the eighteenth session).
  const bool huge = cap >= kHugePage;
  const uint64_t span = huge ? cap + kHugePage : cap;
  void* m = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) {
    int err = errno;
    return OutOfMemory(fmt::format("pinned host pool: cannot map {} ({})", FormatBytes(double(cap)),
                                   std::strerror(err)));
  }
  char* p = static_cast<char*>(m);
  if (huge) {  // keep the aligned cap bytes, give back the rest (the tail is never empty: mmap's
               // address is page-aligned, so the head is under a huge page)
    char* aligned = reinterpret_cast<char*>(AlignUp(reinterpret_cast<uintptr_t>(p), kHugePage));
    const uint64_t head = static_cast<uint64_t>(aligned - p);
    if (head > 0) munmap(p, head);
    munmap(aligned + cap, span - head - cap);
    p = aligned;
  }
  std::unique_ptr<PinnedHostPool> pool(new PinnedHostPool(p, cap));
  if (huge) pool->huge_pages_ = madvise(p, cap, MADV_HUGEPAGE) == 0;
  if (lock) {
    if (mlock(p, cap) == 0) {
      pool->locked_ = true;
    } else {
      int err = errno;
      pool->lock_error_ = fmt::format("mlock of {} failed: {} (raise RLIMIT_MEMLOCK / ulimit -l)",
                                      FormatBytes(double(cap)), std::strerror(err));
    }
  } else {
    pool->lock_error_ = "locking not requested";
  }
  return pool;
}

PinnedHostPool::~PinnedHostPool() {
  if (locked_) munlock(base_, capacity_);
  munmap(base_, capacity_);
}

Result<void*> PinnedHostPool::Alloc(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  auto off = alloc_.Allocate(bytes);
  if (!off) {
    return OutOfMemory(fmt::format(
        "pinned host pool: cannot allocate {} ({} bytes): used {} of capacity {}, largest free block {}",
        FormatBytes(double(bytes)), bytes, FormatBytes(double(alloc_.used_bytes())),
        FormatBytes(double(capacity_)), FormatBytes(double(alloc_.largest_free()))));
  }
  return static_cast<void*>(base_ + *off);
}

Result<PinnedBuffer> PinnedHostPool::AllocBuffer(uint64_t bytes) {
  ZINF_ASSIGN_OR_RETURN(void* p, Alloc(bytes));
  return PinnedBuffer(this, p, alloc_.RoundUp(bytes));
}

Status PinnedHostPool::Free(void* ptr) {
  if (ptr == nullptr) return Status::Ok();
  auto* c = static_cast<char*>(ptr);
  if (c < base_ || c >= base_ + capacity_) {
    return InvalidArgument(fmt::format("pinned host pool: Free of {} outside the pool", ptr));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (alloc_.Free(static_cast<uint64_t>(c - base_)) == 0) {
    return InvalidArgument(fmt::format("pinned host pool: Free of {} which is not an allocation", ptr));
  }
  return Status::Ok();
}

bool PinnedHostPool::Contains(const void* p, uint64_t bytes) const {
  auto* c = static_cast<const char*>(p);
  return c >= base_ && bytes <= capacity_ && c - base_ <= static_cast<int64_t>(capacity_ - bytes);
}

uint64_t PinnedHostPool::used_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return alloc_.used_bytes();
}
uint64_t PinnedHostPool::peak_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return alloc_.peak_bytes();
}
uint64_t PinnedHostPool::largest_free_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return alloc_.largest_free();
}
size_t PinnedHostPool::num_allocations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return alloc_.num_allocations();
}

}  // namespace zinf
