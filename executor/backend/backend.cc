#include "executor/backend/backend.h"

namespace zinf {

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    reset();
    backend_ = o.backend_;
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    o.backend_ = nullptr;
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

void DeviceBuffer::reset() {
  if (ptr_ != nullptr && backend_ != nullptr) {
    (void)backend_->Free(ptr_);
  }
  backend_ = nullptr;
  ptr_ = nullptr;
  bytes_ = 0;
}

Result<DeviceBuffer> Backend::AllocBuffer(size_t bytes, size_t alignment) {
  ZINF_ASSIGN_OR_RETURN(void* p, Alloc(bytes, alignment));
  return DeviceBuffer(this, p, bytes);
}

}  // namespace zinf
