#include "executor/storage/fault_store.h"

#include <algorithm>
#include <cerrno>

namespace zinf {

FaultStore::FaultStore(std::unique_ptr<Storage> inner, const FaultSpec& spec)
    : Storage(inner->path(), inner->options(), inner->alignment()), inner_(std::move(inner)), spec_(spec) {}

Result<std::unique_ptr<FaultStore>> FaultStore::Wrap(std::unique_ptr<Storage> inner, const FaultSpec& spec) {
  if (!inner) return InvalidArgument("FaultStore: null inner store");
  if (inner->outstanding_requests() != 0) {
    return InvalidArgument("FaultStore: inner store " + inner->path() + " has requests in flight");
  }
  return std::unique_ptr<FaultStore>(new FaultStore(std::move(inner), spec));
}

Status FaultStore::DeviceSubmit(std::span<const ChunkOp> ops) {
  forward_.clear();
  const uint64_t align = std::max<size_t>(alignment(), 1);
  for (ChunkOp op : ops) {
    ++counts_.ops;
    if (spec_.eio_on_op >= 0 && (spec_.eio_any || op.op == spec_.eio_only)) {
      if (eio_counter_++ == static_cast<uint64_t>(spec_.eio_on_op)) {
        ++counts_.eio;
        injected_.push_back(ChunkDone{op.cookie, -EIO});
        continue;
      }
    }
    if (op.op == IoOp::kWrite && spec_.enospc_after_bytes >= 0) {
      uint64_t limit = static_cast<uint64_t>(spec_.enospc_after_bytes);
      uint64_t left = limit > write_budget_used_ ? limit - write_budget_used_ : 0;
      left = left / align * align;
      if (left == 0) {
        ++counts_.enospc;
        injected_.push_back(ChunkDone{op.cookie, -ENOSPC});
        continue;
      }
      if (left < op.len) {
        op.len = static_cast<uint32_t>(left);
        ++counts_.shorts;
      }
      write_budget_used_ += op.len;
    }
    if (spec_.short_every > 0 && counts_.ops % spec_.short_every == 0 && op.len >= 2 * align) {
      op.len = static_cast<uint32_t>(std::max<uint64_t>(op.len / 2 / align * align, align));
      ++counts_.shorts;
    }
    if (op.op == IoOp::kRead) reads_[op.cookie] = op;
    forward_.push_back(op);
  }
  if (forward_.empty()) return Status::Ok();
  return inner_->DeviceSubmit(forward_);
}

Result<size_t> FaultStore::DeviceReap(std::span<ChunkDone> out, int timeout_ms) {
  size_t n = std::min(out.size(), injected_.size());
  std::copy_n(injected_.begin(), n, out.begin());
  injected_.erase(injected_.begin(), injected_.begin() + static_cast<ptrdiff_t>(n));
  if (n < out.size()) {
    ZINF_ASSIGN_OR_RETURN(size_t m, inner_->DeviceReap(out.subspan(n), n > 0 ? 0 : timeout_ms));
    for (size_t i = n; i < n + m; ++i) {
      auto it = reads_.find(out[i].cookie);
      if (it == reads_.end()) continue;
      const ChunkOp& op = it->second;
      int64_t c = spec_.corrupt_offset;
      if (c >= 0 && out[i].result > 0 && static_cast<uint64_t>(c) >= op.offset &&
          static_cast<uint64_t>(c) < op.offset + static_cast<uint64_t>(out[i].result)) {
        static_cast<unsigned char*>(op.buf)[static_cast<uint64_t>(c) - op.offset] ^= 0xFF;
        ++counts_.corrupted;
      }
      reads_.erase(it);
    }
    n += m;
  }
  return n;
}

}  // namespace zinf
