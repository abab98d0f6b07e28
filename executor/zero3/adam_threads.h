// How many threads zrun's optimizer step gives one parameter group's Adam (Zero3Engine::
// OptimizerStep); the planner's simulator costs the step by the same rule.
#pragma once

#include <algorithm>
#include <cstddef>

namespace zinf {

// With states staged through the NVMe lane the step waits on the drive, not on Adam. A small
// group's Adam leaves one core to the lane, whose completions otherwise wait for the thread
// team (and its spin) to let go of every core: small-nvme-r1 (groups up to 66K params) took a
// median 15.1-15.5 ms a step in its optimizer against 16.9-21.1 with Adam on both cores (three
// alternating pairs), its groups' Adam no slower on one thread (144-247 us against 223-319).
// cpu-medium's 1-4M-param groups keep every thread: on one fewer its optimizer took 3-9%
// longer (medium-allnvme-r1, two pairs).
inline constexpr size_t kAdamLeaveLaneACoreBelow = size_t{1} << 20;  // shard elements

// A group of `n` shard elements, on a rank of `threads` threads; `staged`: some of its states
// (params, grads, m, v) live on NVMe.
inline int AdamThreads(int threads, bool staged, size_t n) {
  return staged && n < kAdamLeaveLaneACoreBelow ? std::max(1, threads - 1) : threads;
}

}  // namespace zinf
