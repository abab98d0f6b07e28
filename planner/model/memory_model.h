// Analytic memory model: bytes per tier for a plan (ZeRO-Infinity paper, section 3, plus the
// buffers a real run needs). Every item carries its formula so reports can spell it out.
#pragma once

#include <string>
#include <vector>

#include "core/hw_profile.h"
#include "core/model_spec.h"
#include "core/plan.h"

namespace zinf {

// Bytes per parameter of each model state, by working dtype and accounting.
struct StateBytes {
  double param = 2;      // working-precision parameters
  double grad = 2;       // working-precision gradients
  double optimizer = 12; // fp32 master + m + v (+ fp32 grads in the paper's accounting)
  double total() const { return param + grad + optimizer; }
};
StateBytes StateBytesFor(const std::string& dtype, const std::string& accounting);
// Bytes per parameter the CPU optimizer reads from NVMe besides the optimizer states: the
// gradients when they live there, and the params when they live there and are their own
// fp32 master (dtype fp32).
double OptimizerExtraNvmeReadBytes(const PlanKnobs& k, const StateBytes& sb);

// zinf's CPU executor shards every parameter group separately (executor/zero3/shard_layout.h:
// ceil(numel / dp) rounded up to 1024 floats per rank), groups as in
// executor/model/param_groups.cc (embed, per layer ln1, qkv x tile, proj x tile, ln2, fc x tile,
// mlp.proj x tile, then ln_f). Elements per rank, summed over groups, and the largest shard.
struct ExecutorShards {
  double total_elems = 0;
  double max_elems = 0;
};
ExecutorShards ExecutorShardElems(const ModelSpec& m, int64_t seq_len, int64_t tile, int64_t dp);
// Each of the executor's parameter groups' shard (elements per rank, padded), in its order.
std::vector<double> ExecutorGroupShards(const ModelSpec& m, int64_t seq_len, int64_t tile, int64_t dp);
// How many of the executor's parameter groups have a shard (per rank, padded) of at least
// min_elems elements: on the CPU backend, those whose Adam step runs in parallel.
double ExecutorGroupsOfAtLeast(const ModelSpec& m, int64_t seq_len, int64_t tile, int64_t dp, double min_elems);
// The most padded group elements (ceil(numel / dp) to 1024, times dp: a gathered group) that
// `window` consecutive ops of the executor's step schedule (forward, then backward) touch:
// what the fetch buffers of the current op and the window - 1 prefetched ones hold at most.
double ExecutorFetchWindowElems(const ModelSpec& m, int64_t seq_len, int64_t tile, int64_t dp, int64_t window);
// The executor's parameter-group buffers at the op of its schedule where they are most: the
// fetch buffers of that op and its window - 1 successors, and in backward its gradient buffer
// plus the released gradients still waiting for their reduce-scatter (Zero3Engine::ReleaseGrad
// keeps them within the bucket, the newest always; the worst case: none has finished), and,
// with `shard_window` > 0, the device shard copies of the shard_window ops after it (params off
// the device with several ranks: a shard copied ahead waits in its own buffer until its op
// acquires it).
struct ExecutorWorkingSet {
  double fetched_elems = 0;
  double grad_elems = 0;
  double shard_elems = 0;
};
ExecutorWorkingSet ExecutorWorkingElems(const ModelSpec& m, int64_t seq_len, int64_t tile, int64_t dp, int64_t window,
                                        double bucket_elems, int64_t shard_window = 0);
// The executor's pinned staging pool per rank (Zero3Engine::Setup): NVMe reads in flight
// (prefetch depth + 1), a grad read-modify-write (2) and the optimizer pipeline (3 groups x 4
// states), each one largest shard, plus 1 MiB.
double ExecutorPinnedPoolBytes(const ExecutorShards& s, const PlanKnobs& k);
double DtypeBytes(const std::string& dtype);

struct MemoryEstimate {
  double device_bytes = 0;  // per GPU
  double host_bytes = 0;    // per node
  double nvme_bytes = 0;    // per node
  std::vector<MemoryItem> items;
};

// The paper's closed forms (fp16, bytes), for checks and reports.
double PaperModelStateBytes(const ModelSpec& m);                 // 20 * 12*nl*hd^2
double PaperCheckpointBytes(const ModelSpec& m, double bsz, double ci);   // 2*bsz*seq*hd*nl/ci
double PaperModelStateWorkingBytes(const ModelSpec& m);          // 4 * hd * 4hd
double PaperActivationWorkingBytes(const ModelSpec& m, double bsz, double ci);  // bsz*seq*ci*(16hd+2*heads*seq)

// Per-op sizes (elements) used by the memory model, the time model and the executor.
struct OpSizes {
  double largest_linear = 0;  // params of the largest block linear (before tiling)
  double embedding = 0;       // vocab * hidden (gathered whole: tied LM head)
  double layer = 0;           // params of one block
};
OpSizes ComputeOpSizes(const ModelSpec& m);

// detail=false skips the formula and name text (for the search's hot loop).
MemoryEstimate EstimateMemory(const ModelSpec& m, const HwProfile& hw, const PlanKnobs& k, bool detail = true);

}  // namespace zinf
