#include "executor/backend/cuda/cuda_pinned_pool.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "executor/backend/cuda/cuda_check.h"

namespace zinf {

CudaPinnedBuffer& CudaPinnedBuffer::operator=(CudaPinnedBuffer&& o) noexcept {
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

void CudaPinnedBuffer::reset() {
  if (ptr_ != nullptr && pool_ != nullptr) (void)pool_->Free(ptr_);
  pool_ = nullptr;
  ptr_ = nullptr;
  bytes_ = 0;
}

Result<std::unique_ptr<CudaPinnedHostPool>> CudaPinnedHostPool::Create(uint64_t capacity_bytes) {
  if (capacity_bytes == 0) return InvalidArgument("cuda pinned host pool: capacity must be > 0");
  const uint64_t cap = (capacity_bytes + kAlignment - 1) / kAlignment * kAlignment;
  void* p = nullptr;
  const cudaError_t e = cudaHostAlloc(&p, cap, cudaHostAllocPortable);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return OutOfMemory(fmt::format("cuda pinned host pool: cudaHostAlloc({} bytes): {}: {}", cap,
                                   cudaGetErrorName(e), cudaGetErrorString(e)));
  }
  return std::unique_ptr<CudaPinnedHostPool>(new CudaPinnedHostPool(static_cast<char*>(p), cap));
}

CudaPinnedHostPool::CudaPinnedHostPool(char* base, uint64_t capacity)
    : base_(base), capacity_(capacity), alloc_(capacity, kAlignment, "cuda pinned host pool") {}

CudaPinnedHostPool::~CudaPinnedHostPool() { (void)cudaFreeHost(base_); }

Result<void*> CudaPinnedHostPool::Alloc(uint64_t bytes) {
  ZINF_ASSIGN_OR_RETURN(size_t off, alloc_.Alloc(bytes, kAlignment));
  return static_cast<void*>(base_ + off);
}

Result<CudaPinnedBuffer> CudaPinnedHostPool::AllocBuffer(uint64_t bytes) {
  ZINF_ASSIGN_OR_RETURN(void* p, Alloc(bytes));
  return CudaPinnedBuffer(this, p, alloc_.SizeOf(static_cast<size_t>(static_cast<char*>(p) - base_)));
}

Status CudaPinnedHostPool::Free(void* ptr) {
  if (ptr == nullptr) return Status::Ok();
  if (!Contains(ptr, 0)) {
    return InvalidArgument(fmt::format("cuda pinned host pool: free of foreign pointer {}", ptr));
  }
  return alloc_.Free(static_cast<size_t>(static_cast<char*>(ptr) - base_));
}

bool CudaPinnedHostPool::Contains(const void* p, uint64_t bytes) const {
  const char* c = static_cast<const char*>(p);
  return c >= base_ && c <= base_ + capacity_ && bytes <= static_cast<uint64_t>(base_ + capacity_ - c);
}

Result<std::unique_ptr<CudaHostRegistration>> CudaHostRegistration::Register(void* ptr,
                                                                             uint64_t bytes) {
  ZINF_CUDA_RETURN_IF_ERROR(cudaHostRegister(ptr, bytes, cudaHostRegisterPortable));
  return std::unique_ptr<CudaHostRegistration>(new CudaHostRegistration(ptr));
}

CudaHostRegistration::~CudaHostRegistration() { (void)cudaHostUnregister(ptr_); }

}  // namespace zinf
