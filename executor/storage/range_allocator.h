// RangeAllocator: first-fit allocator of aligned [offset, offset+len) ranges inside a
// fixed capacity, with coalescing on free and used/peak tracking. Shared by the pinned
// host pool (offsets into its region) and the swap-file extent allocator.
// Not thread-safe (callers lock).
#pragma once

#include <cstdint>
#include <map>
#include <optional>

namespace zinf {

class RangeAllocator {
 public:
  // capacity is rounded down to a multiple of alignment (a power of two >= 1).
  RangeAllocator(uint64_t capacity, uint64_t alignment);

  // Rounded up to the alignment (0 bytes take one unit so every range is distinct).
  uint64_t RoundUp(uint64_t bytes) const;
  // Offset of a new range of RoundUp(bytes), or nullopt when no free range fits.
  std::optional<uint64_t> Allocate(uint64_t bytes);
  // Returns the freed range's length, or 0 when `offset` is not an allocated range.
  uint64_t Free(uint64_t offset);
  // Length of the allocated range at `offset` (0 if none).
  uint64_t SizeOf(uint64_t offset) const;

  uint64_t capacity() const { return capacity_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t used_bytes() const { return used_; }
  uint64_t peak_bytes() const { return peak_; }
  uint64_t high_water() const { return high_water_; }  // highest end offset ever allocated
  uint64_t largest_free() const;
  size_t num_allocations() const { return allocated_.size(); }

 private:
  uint64_t capacity_;
  uint64_t alignment_;
  std::map<uint64_t, uint64_t> free_;       // offset -> length
  std::map<uint64_t, uint64_t> allocated_;  // offset -> length
  uint64_t used_ = 0, peak_ = 0, high_water_ = 0;
};

}  // namespace zinf
