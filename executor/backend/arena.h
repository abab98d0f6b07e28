// ArenaAllocator: offset bookkeeping for one preallocated block of fixed
// capacity (a device arena). Best-fit over a free list ordered by address, with
// coalescing of neighbours on Free, so fragmentation behaves like a real
// device allocator. Thread-safe. Backends map offsets to pointers
// (CPU: one aligned host block; CUDA: one cudaMalloc).
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>

#include "core/status.h"
#include "executor/backend/backend.h"

namespace zinf {

class ArenaAllocator {
 public:
  // granularity: every block size and start is a multiple of it (power of two).
  explicit ArenaAllocator(size_t capacity_bytes, size_t granularity = kDefaultDeviceAlignment,
                          std::string name = "device arena");

  // Returns the offset of a block of at least `bytes` aligned to `alignment`
  // (power of two; raised to the granularity). OutOfMemory if no free block fits.
  Result<size_t> Alloc(size_t bytes, size_t alignment = kDefaultDeviceAlignment);
  // InvalidArgument if offset was not returned by Alloc (or already freed).
  Status Free(size_t offset);
  // Size reserved for the allocation at offset (0 if unknown).
  size_t SizeOf(size_t offset) const;

  ArenaStats Stats() const;
  void ResetPeak();
  size_t capacity() const { return capacity_; }

 private:
  void InsertFree(size_t off, size_t size);
  void EraseFree(std::map<size_t, size_t>::iterator it);

  const size_t capacity_;
  const size_t granularity_;
  const std::string name_;
  mutable std::mutex mu_;
  std::map<size_t, size_t> free_by_off_;             // offset -> size
  std::set<std::pair<size_t, size_t>> free_by_size_;  // (size, offset)
  std::unordered_map<size_t, size_t> live_;          // offset -> size
  size_t used_ = 0;
  size_t peak_ = 0;
};

}  // namespace zinf
