// Page-locked host memory for the CUDA backend (needs a CUDA build; include only where
// ZINF_HAVE_CUDA is defined).
//
// CudaPinnedHostPool: the CUDA counterpart of storage/PinnedHostPool (same interface and
// semantics: fixed capacity, 4096-aligned blocks, OutOfMemory past the budget, used /
// peak tracked, thread-safe), but the region comes from cudaHostAlloc(Portable), so
// cudaMemcpyAsync from / to it is truly asynchronous DMA. Sub-allocation is the device
// arena's best-fit allocator (ArenaAllocator) with a 4096 granularity.
//
// CudaHostRegistration: pins an existing region (e.g. a storage/PinnedHostPool's
// base()/capacity_bytes(), which io_uring also registers) with cudaHostRegister for the
// lifetime of the object, instead of allocating a second pool.
#pragma once

#include <cstdint>
#include <memory>

#include "core/status.h"
#include "executor/backend/arena.h"

namespace zinf {

class CudaPinnedHostPool;

class CudaPinnedBuffer {
 public:
  CudaPinnedBuffer() = default;
  CudaPinnedBuffer(CudaPinnedHostPool* pool, void* ptr, uint64_t bytes)
      : pool_(pool), ptr_(ptr), bytes_(bytes) {}
  CudaPinnedBuffer(CudaPinnedBuffer&& o) noexcept { *this = std::move(o); }
  CudaPinnedBuffer& operator=(CudaPinnedBuffer&& o) noexcept;
  CudaPinnedBuffer(const CudaPinnedBuffer&) = delete;
  CudaPinnedBuffer& operator=(const CudaPinnedBuffer&) = delete;
  ~CudaPinnedBuffer() { reset(); }

  void reset();
  void* data() const { return ptr_; }
  template <typename T>
  T* as() const { return static_cast<T*>(ptr_); }
  uint64_t bytes() const { return bytes_; }
  explicit operator bool() const { return ptr_ != nullptr; }

 private:
  CudaPinnedHostPool* pool_ = nullptr;
  void* ptr_ = nullptr;
  uint64_t bytes_ = 0;
};

class CudaPinnedHostPool {
 public:
  static constexpr uint64_t kAlignment = 4096;

  // capacity_bytes > 0 (rounded up to 4096). OutOfMemory if cudaHostAlloc fails.
  static Result<std::unique_ptr<CudaPinnedHostPool>> Create(uint64_t capacity_bytes);
  ~CudaPinnedHostPool();  // cudaFreeHost; every buffer must be released first
  CudaPinnedHostPool(const CudaPinnedHostPool&) = delete;
  CudaPinnedHostPool& operator=(const CudaPinnedHostPool&) = delete;

  Result<void*> Alloc(uint64_t bytes);
  Result<CudaPinnedBuffer> AllocBuffer(uint64_t bytes);
  Status Free(void* ptr);

  bool locked() const { return true; }  // cudaHostAlloc memory is always page-locked
  void* base() const { return base_; }
  uint64_t capacity_bytes() const { return capacity_; }
  bool Contains(const void* p, uint64_t bytes) const;
  uint64_t used_bytes() const { return alloc_.Stats().used_bytes; }
  uint64_t peak_bytes() const { return alloc_.Stats().peak_bytes; }
  uint64_t largest_free_bytes() const { return alloc_.Stats().largest_free_bytes; }
  size_t num_allocations() const { return alloc_.Stats().live_allocations; }

 private:
  CudaPinnedHostPool(char* base, uint64_t capacity);

  char* base_;
  uint64_t capacity_;
  ArenaAllocator alloc_;
};

class CudaHostRegistration {
 public:
  // cudaHostRegister(ptr, bytes, cudaHostRegisterPortable).
  static Result<std::unique_ptr<CudaHostRegistration>> Register(void* ptr, uint64_t bytes);
  ~CudaHostRegistration();  // cudaHostUnregister
  CudaHostRegistration(const CudaHostRegistration&) = delete;
  CudaHostRegistration& operator=(const CudaHostRegistration&) = delete;
  void* ptr() const { return ptr_; }

 private:
  explicit CudaHostRegistration(void* p) : ptr_(p) {}
  void* ptr_;
};

}  // namespace zinf
