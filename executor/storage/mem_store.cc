#include "executor/storage/mem_store.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace zinf {

Result<std::unique_ptr<MemStore>> MemStore::Create(std::string name, const StorageOptions& options,
                                                   uint64_t capacity_bytes, size_t alignment) {
  ZINF_RETURN_IF_ERROR(ValidateOptions(name, options, alignment));
  return std::unique_ptr<MemStore>(new MemStore(std::move(name), options, capacity_bytes, alignment));
}

Status MemStore::DeviceSubmit(std::span<const ChunkOp> ops) {
  for (const ChunkOp& op : ops) {
    int64_t res;
    if (op.op == IoOp::kWrite) {
      if (op.offset >= capacity_) {
        res = -ENOSPC;
      } else {
        uint64_t n = std::min<uint64_t>(op.len, capacity_ - op.offset);
        if (data_.size() < op.offset + n) data_.resize(op.offset + n);
        std::memcpy(data_.data() + op.offset, op.buf, n);
        res = static_cast<int64_t>(n);
      }
    } else {
      uint64_t n = op.offset >= data_.size() ? 0 : std::min<uint64_t>(op.len, data_.size() - op.offset);
      if (n) std::memcpy(op.buf, data_.data() + op.offset, n);
      res = static_cast<int64_t>(n);
    }
    done_.push_back(ChunkDone{op.cookie, res});
  }
  return Status::Ok();
}

Result<size_t> MemStore::DeviceReap(std::span<ChunkDone> out, int /*timeout_ms*/) {
  size_t n = std::min(out.size(), done_.size() - done_head_);
  std::copy_n(done_.begin() + static_cast<ptrdiff_t>(done_head_), n, out.begin());
  done_head_ += n;
  if (done_head_ == done_.size()) {
    done_.clear();
    done_head_ = 0;
  }
  return n;
}

}  // namespace zinf
