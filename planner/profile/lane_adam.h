// How the NVMe lane and CPU Adam slow each other when they run at once, as they do in zrun's
// optimizer on the CPU backend (a group's Adam on the cores while the lane writes the previous
// group's states and reads the next's).
#pragma once

#include <cstdint>

#include "core/status.h"
#include "executor/storage/storage.h"
#include "planner/profile/probe.h"

namespace zinf {

struct LaneAdamCoupling {
  double read = 0, write = 0;  // a lane read's / write's time beside Adam over its time alone
  double adam = 0;             // an Adam pass's time beside the lane over its time alone
  uint64_t bytes = 0;          // the lane transfers' size
  int64_t adam_params = 0;     // the Adam passes' size
  int threads = 0;             // Adam's threads
  int rounds = 0;
  int pairs = 0;               // lane pairs a round alone (at least as many beside Adam)
};

// Rounds of: lane pairs (read then write of `bytes`, as TimeLanePair) alone; Adam passes over
// arrays of its own alone (`threads` threads, as zrun's optimizer runs a large group); and both
// at once (the pairs go on, up to 8x, until two Adam passes have ended beside them). Each factor is the median over rounds of the round's mean beside over its mean alone.
// `rbuf` and `wbuf` hold `bytes` each.
Result<LaneAdamCoupling> MeasureLaneBesideAdam(Storage& store, void* rbuf, const void* wbuf, uint64_t bytes,
                                               uint64_t file_bytes, int threads, bool quick, ProfileContext& ctx);

}  // namespace zinf
