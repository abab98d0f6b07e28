#include "executor/backend/arena.h"

#include <fmt/format.h>

namespace zinf {
namespace {

size_t AlignUp(size_t x, size_t a) { return (x + a - 1) & ~(a - 1); }
bool IsPow2(size_t x) { return x != 0 && (x & (x - 1)) == 0; }

}  // namespace

ArenaAllocator::ArenaAllocator(size_t capacity_bytes, size_t granularity, std::string name)
    : capacity_(capacity_bytes & ~(granularity - 1)),
      granularity_(granularity),
      name_(std::move(name)) {
  if (capacity_ > 0) InsertFree(0, capacity_);
}

void ArenaAllocator::InsertFree(size_t off, size_t size) {
  free_by_off_.emplace(off, size);
  free_by_size_.emplace(size, off);
}

void ArenaAllocator::EraseFree(std::map<size_t, size_t>::iterator it) {
  free_by_size_.erase({it->second, it->first});
  free_by_off_.erase(it);
}

Result<size_t> ArenaAllocator::Alloc(size_t bytes, size_t alignment) {
  if (!IsPow2(alignment)) {
    return InvalidArgument(fmt::format("{}: alignment {} is not a power of two", name_, alignment));
  }
  if (alignment < granularity_) alignment = granularity_;
  const size_t size = AlignUp(bytes == 0 ? 1 : bytes, granularity_);
  std::lock_guard<std::mutex> lock(mu_);
  // Best fit: the smallest free block that holds `size` after aligning its start.
  for (auto it = free_by_size_.lower_bound({size, 0}); it != free_by_size_.end(); ++it) {
    const size_t block_off = it->second, block_size = it->first;
    const size_t start = AlignUp(block_off, alignment);
    const size_t pad = start - block_off;
    if (pad + size > block_size) continue;
    EraseFree(free_by_off_.find(block_off));
    if (pad > 0) InsertFree(block_off, pad);
    const size_t tail = block_size - pad - size;
    if (tail > 0) InsertFree(start + size, tail);
    live_.emplace(start, size);
    used_ += size;
    if (used_ > peak_) peak_ = used_;
    return start;
  }
  const size_t largest = free_by_size_.empty() ? 0 : free_by_size_.rbegin()->first;
  return OutOfMemory(fmt::format(
      "{}: out of memory: requested {} bytes ({} reserved), used {} of capacity {} bytes "
      "(free {} bytes, largest free block {} bytes{})",
      name_, bytes, size, used_, capacity_, capacity_ - used_, largest,
      capacity_ - used_ >= size ? ", fragmented" : ""));
}

Status ArenaAllocator::Free(size_t offset) {
  std::lock_guard<std::mutex> lock(mu_);
  auto live = live_.find(offset);
  if (live == live_.end()) {
    return InvalidArgument(fmt::format("{}: free of unknown offset {}", name_, offset));
  }
  size_t off = offset, size = live->second;
  live_.erase(live);
  used_ -= size;
  // Coalesce with the following and the preceding free block.
  auto next = free_by_off_.lower_bound(off);
  if (next != free_by_off_.end() && next->first == off + size) {
    size += next->second;
    EraseFree(next);
  }
  auto after = free_by_off_.lower_bound(off);
  if (after != free_by_off_.begin()) {
    auto prev = std::prev(after);
    if (prev->first + prev->second == off) {
      off = prev->first;
      size += prev->second;
      EraseFree(prev);
    }
  }
  InsertFree(off, size);
  return Status::Ok();
}

size_t ArenaAllocator::SizeOf(size_t offset) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(offset);
  return it == live_.end() ? 0 : it->second;
}

ArenaStats ArenaAllocator::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  ArenaStats s;
  s.capacity_bytes = capacity_;
  s.used_bytes = used_;
  s.peak_bytes = peak_;
  s.largest_free_bytes = free_by_size_.empty() ? 0 : free_by_size_.rbegin()->first;
  s.free_blocks = free_by_off_.size();
  s.live_allocations = live_.size();
  return s;
}

void ArenaAllocator::ResetPeak() {
  std::lock_guard<std::mutex> lock(mu_);
  peak_ = used_;
}

}  // namespace zinf
