#include "executor/storage/range_allocator.h"

#include <algorithm>

namespace zinf {

RangeAllocator::RangeAllocator(uint64_t capacity, uint64_t alignment)
    : capacity_(alignment > 1 ? capacity / alignment * alignment : capacity),
      alignment_(std::max<uint64_t>(alignment, 1)) {
  if (capacity_ > 0) free_.emplace(0, capacity_);
}

uint64_t RangeAllocator::RoundUp(uint64_t bytes) const {
  uint64_t b = std::max<uint64_t>(bytes, 1);
  if (b > UINT64_MAX - alignment_) return UINT64_MAX;  // cannot fit anything
  return (b + alignment_ - 1) / alignment_ * alignment_;
}

std::optional<uint64_t> RangeAllocator::Allocate(uint64_t bytes) {
  uint64_t need = RoundUp(bytes);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < need) continue;
    uint64_t off = it->first, len = it->second;
    free_.erase(it);
    if (len > need) free_.emplace(off + need, len - need);
    allocated_.emplace(off, need);
    used_ += need;
    peak_ = std::max(peak_, used_);
    high_water_ = std::max(high_water_, off + need);
    return off;
  }
  return std::nullopt;
}

uint64_t RangeAllocator::Free(uint64_t offset) {
  auto a = allocated_.find(offset);
  if (a == allocated_.end()) return 0;
  const uint64_t freed = a->second;
  allocated_.erase(a);
  used_ -= freed;
  uint64_t off = offset, len = freed;
  auto next = free_.lower_bound(off);
  if (next != free_.end() && off + len == next->first) {  // merge with the following range
    len += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {  // merge with the preceding range
    auto prev = std::prev(next);
    if (prev->first + prev->second == off) {
      prev->second += len;
      return freed;
    }
  }
  free_.emplace(off, len);
  return freed;
}

uint64_t RangeAllocator::SizeOf(uint64_t offset) const {
  auto a = allocated_.find(offset);
  return a == allocated_.end() ? 0 : a->second;
}

uint64_t RangeAllocator::largest_free() const {
  uint64_t best = 0;
  for (const auto& [off, len] : free_) best = std::max(best, len);
  return best;
}

}  // namespace zinf
