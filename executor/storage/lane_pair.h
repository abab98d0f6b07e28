// One transfer pair of the NVMe lane's pattern, as zrun's optimizer drives the lane (a read of
// one group's states, then a write of the previous group's): a read at slot `i`'s scattered
// offset, CRC-32C'd, then a write (CRC-32C'd first) half a file away, each waited before the
// next. The profile's lane curves (zplan profile, nvme probe) and zrun's drive check time the
// same pair, so the check's ratio against the curves compares like with like.
#pragma once

#include <cstdint>

#include "core/status.h"
#include "executor/storage/storage.h"

namespace zinf {

struct LanePair {
  double read_s = 0, write_s = 0;  // wall seconds of each, its CRC included
  uint64_t read_off = 0, write_off = 0;
};

// Transfers of `bytes` in a file of `file_bytes` (at least one transfer); `rbuf` and `wbuf`
// hold `bytes` each (aligned as the store needs).
Result<LanePair> TimeLanePair(Storage& store, void* rbuf, const void* wbuf, uint64_t bytes, uint64_t file_bytes, uint64_t i);

}  // namespace zinf
