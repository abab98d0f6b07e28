// Zero3Engine: the ZeRO-3 parameter coordinator, gradient reducer and sharded optimizer of
// one rank, as a ParamProvider for the model.
//
// Parameters: each group is sharded 1/R (shard_layout.h); this rank's shards live on the
// plan's params tier. Before op i uses group g, the chain NVMe -> pinned host staging ->
// device (arena) -> allgather fills a gathered buffer of the whole group; ops ahead are
// prefetched in the model's recorded op order: the NVMe read of op i+dn, the H2D copy of
// op i+dh and the allgather of op i+da are issued when op i begins (depths from the plan,
// made monotone dn >= dh >= da). Each stage runs on its own lane (thread), so transfers
// overlap with compute; Release frees the gathered buffer.
// Gradients: AcquireGrad hands out a zeroed gathered-size buffer; ReleaseGrad
// reduce-scatters it (sum over ranks, fixed order) on the comm lane and adds this rank's
// part, scaled by grad_scale, into the grads tier; the step's first contribution to a group
// overwrites the shard instead (no zeroing pass, no NVMe read-back).
// Optimizer: after backward, AdamW on this rank's shards in sub-groups of
// optimizer_chunk_params elements on the CPU (the executor's own kernel), streaming params,
// grads, m and v through their tiers; the same kernel and order for every placement, so
// losses are bitwise identical whatever the placement.
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/plan.h"
#include "executor/backend/backend.h"
#include "executor/comm/comm.h"
#include "executor/model/gpt_schedule.h"
#include "executor/model/param_groups.h"
#include "executor/model/param_provider.h"
#include "executor/storage/pinned_host_pool.h"
#include "executor/zero3/lane.h"
#include "executor/zero3/shard_tier.h"

namespace zinf {

struct Zero3Options {
  Placement placement;
  int prefetch_nvme = 3, prefetch_h2d = 2, prefetch_allgather = 1;
  std::string nvme_dir = "/tmp/zinf-nvme";
  StorageOptions io;
  size_t optimizer_chunk_params = 1 << 20;
  size_t pinned_bytes = 0;  // host staging pool; 0 -> derived from the largest shard and depths
  std::optional<FaultSpec> nvme_faults;  // tests: inject faults into the NVMe store
  // Gradient bytes on the device waiting for their reduce-scatter / offload (the plan's
  // reduce bucket): ReleaseGrad blocks while more are in flight, so a slow offload path
  // cannot pile gradient buffers up in the arena. 0: one largest group.
  double grad_bucket_bytes = 0;
};

// The per-rank state a checkpoint holds for each group: fp32 params (the master copy) and
// Adam's m and v.
enum class ShardState : int { kParams = 0, kAdamM = 1, kAdamV = 2 };

// Bytes and seconds per lane, for metrics and the measured-vs-predicted report.
struct Zero3Stats {
  double nvme_read_bytes = 0, nvme_write_bytes = 0, h2d_bytes = 0, d2h_bytes = 0, network_bytes = 0;
  double nvme_busy_s = 0, h2d_busy_s = 0, comm_busy_s = 0, optimizer_s = 0;
  double nvme_cpu_s = 0, h2d_cpu_s = 0, comm_cpu_s = 0;  // the lanes' threads' CPU time
  double wait_s = 0;  // compute thread blocked in Acquire (fetches not hidden)
};

class Zero3Engine final : public ParamProvider {
 public:
  static Result<std::unique_ptr<Zero3Engine>> Create(const std::vector<ParamGroup>& groups,
                                                     const std::vector<GroupOp>& schedule, Backend* backend,
                                                     Comm* comm, const Zero3Options& o);
  ~Zero3Engine() override;

  // Deterministic init: every rank computes the full group and keeps its shard.
  Status InitParams(uint64_t seed);
  // Starts a step: grads zeroed, op cursor reset. grad_scale multiplies each contribution
  // (1 / (ranks * grad_accum) for a mean over the global batch).
  Status BeginStep(float grad_scale);
  // Waits for every outstanding transfer of the passes (call after the last backward).
  Status FinishBackward();
  Status OptimizerStep(const AdamParams& hp);

  // ParamProvider
  void OnOpBegin(int op_index) override;
  Result<const float*> Acquire(int group) override;
  Status Release(int group) override;
  Result<float*> AcquireGrad(int group) override;
  Status ReleaseGrad(int group) override;
  void OnKernelBegin() override;
  void OnKernelEnd(const char* kind, int layer, Phase phase) override;

  // Records every op (compute track), lane job and optimizer group into `trace` under
  // process `pid` (the rank), in the simulator's resource names. nullptr stops recording
  // (between steps).
  void SetTrace(reports::ChromeTraceWriter* trace, int64_t pid);

  // Tests and checkpoints: this rank's shard of group g (params or grads) on the host.
  Status ReadShard(int group, bool grads, std::vector<float>* out);
  // Full params of every group (allgather; collective: all ranks call it).
  Status GatherAllParams(std::vector<std::vector<float>>* out);
  // Checkpoints: this rank's whole shard (shard floats, padding included) of one state,
  // from / to wherever the plan placed it. Not while a step is in flight.
  Status ReadState(int group, ShardState state, float* out);
  Status WriteState(int group, ShardState state, const float* in);
  int64_t adam_step() const { return adam_step_; }
  void set_adam_step(int64_t s) { adam_step_ = s; }

  const std::vector<GroupShard>& shards() const { return shards_; }
  Zero3Stats stats() const;
  double host_bytes() const;   // host tiers + the pinned pool's capacity
  double nvme_bytes() const;
  uint64_t pinned_peak_bytes() const { return pool_->peak_bytes(); }

 private:
  struct OpFetch;
  struct OptGroup;
  Result<std::shared_ptr<OptGroup>> StageOptGroup(int g);
  struct NvmeXfer {
    const std::string* name;
    void* buf;
    bool write;
  };
  Status NvmeBatch(const std::vector<NvmeXfer>& xfers);
  // NVMe parameter reads: the compute thread queues them as it issues fetches and starts
  // them itself (asynchronously) when the store is free; the NVMe lane starts every queued
  // one whenever it runs a job, then waits for its own. The device so works ahead of the
  // lane thread, which on a machine whose cores all run compute gets the CPU only when
  // compute yields it.
  struct ParamRead;
  void StartParamReads();  // with nvme_mu_ held
  Zero3Engine(const std::vector<ParamGroup>& groups, const std::vector<GroupOp>& schedule, Backend* backend, Comm* comm,
              const Zero3Options& o);
  Status Setup();
  void IssueStage(int stage, int op);  // 0 nvme, 1 h2d, 2 allgather
  Status FailIfError();

  std::vector<ParamGroup> groups_;
  std::vector<GroupOp> schedule_;
  Backend* be_;
  Comm* comm_;
  Zero3Options o_;
  int rank_ = 0, ranks_ = 1;
  int dn_ = 0, dh_ = 0, da_ = 0;
  std::vector<GroupShard> shards_;
  size_t max_shard_ = 0;  // elements of the largest shard (sizes the staging buffers)
  std::unique_ptr<PinnedHostPool> pool_;  // outlives the NVMe store it is registered with
  std::unique_ptr<NvmeStore> nvme_;       // declared before the tiers that use it
  std::mutex nvme_mu_;
  std::mutex ahead_mu_;
  std::deque<std::shared_ptr<ParamRead>> ahead_;  // queued parameter reads not yet started
  std::unique_ptr<ShardTier> params_, grads_, adam_m_, adam_v_;
  std::unique_ptr<Lane> nvme_lane_, h2d_lane_, comm_lane_;
  std::vector<std::unique_ptr<OpFetch>> fetch_;  // per op of the schedule (this pass)
  int cur_op_ = -1;
  std::map<int, DeviceBuffer> grad_bufs_;         // group -> gathered grad buffer in flight
  std::vector<SignalPtr> pending_;                // grad reductions in flight
  std::vector<bool> grad_written_;                // per group: this step's grads exist
  std::deque<std::pair<SignalPtr, size_t>> grad_inflight_;  // reductions not yet done, bytes
  size_t grad_inflight_bytes_ = 0;
  float grad_scale_ = 1.0f;
  int64_t adam_step_ = 0;
  Status first_error_;
  reports::ChromeTraceWriter* trace_ = nullptr;
  int64_t trace_pid_ = 0;
  // A traced interval on the calling thread: its start on the trace's clock and on the
  // thread's CPU clock. EndSpan records it with the thread's CPU in it (args.cpu_us, read
  // inside the wall interval so it never exceeds it) and its CPU clock at the start (cpu_at_us).
  struct TraceSpan {
    double us = 0, cpu_s = 0;
  };
  TraceSpan BeginSpan() const;
  void EndSpan(const TraceSpan& span, std::string name, const char* cat, int tid) const;
  TraceSpan op_span_, kernel_span_;  // the op and the kernel between ops now traced
  void Count(double Zero3Stats::*field, double v) const;  // lanes update stats concurrently
  mutable std::mutex stats_mu_;
  mutable Zero3Stats stats_;
};

}  // namespace zinf
