#include "planner/sim/simulator.h"

#include <algorithm>
#include <cmath>

#include "executor/backend/cpu/kernels.h"
#include "executor/zero3/adam_threads.h"
#include "planner/model/memory_model.h"
#include "planner/model/op_graph.h"
#include "planner/model/time_model.h"

namespace zinf {

const char* ResName(Res r) {
  static const char* kNames[] = {"compute", "h2d", "d2h", "nvme_read", "nvme_write", "network", "cpu_optimizer"};
  return kNames[static_cast<int>(r)];
}

namespace {

struct Dep {
  int task;
  bool on_start;
};

class Graph {
 public:
  // copies_on_cores: the CPU backend, where host<->device copies and the collectives between
  // ranks are memcpy on the same cores as the kernels (no copy engine, no NIC): they queue
  // with compute.
  Graph(bool keep, bool copies_on_cores) : keep_(keep), copies_on_cores_(copies_on_cores) {}

  // Issues a task: it starts when its resource is free and every dependency is met.
  int Add(Res r, double dur, std::initializer_list<Dep> deps, const char* phase, const std::string& name = {}) {
    int id = static_cast<int>(tasks_.size());
    SimTask t;
    t.res = r;
    t.dur_s = dur;
    t.phase = phase;
    if (keep_) t.name = name;
    const int q = Queue(r);
    double start = free_[q];
    int pred = last_[q];
    for (const Dep& d : deps) {
      if (d.task < 0) continue;
      double at = d.on_start ? tasks_[static_cast<size_t>(d.task)].start_s : tasks_[static_cast<size_t>(d.task)].end_s;
      if (at > start || (at == start && pred < 0)) {
        start = at;
        pred = d.task;
      }
    }
    t.start_s = start;
    t.end_s = start + dur;
    t.critical_pred = pred;
    free_[q] = t.end_s;
    last_[q] = id;
    busy_[static_cast<int>(r)] += dur;
    tasks_.push_back(std::move(t));
    return id;
  }
  // NVMe reads and writes share one queue: one drive (share) serves both directions, as the
  // executor's single NVMe lane does; busy time is still reported per direction.
  int Queue(Res r) const {
    if (copies_on_cores_ && (r == Res::kH2D || r == Res::kD2H || r == Res::kNetwork)) return static_cast<int>(Res::kCompute);
    return static_cast<int>(r == Res::kNvmeWrite ? Res::kNvmeRead : r);
  }
  double end(int id) const { return id < 0 ? 0 : tasks_[static_cast<size_t>(id)].end_s; }
  double free_at(Res r) const { return free_[Queue(r)]; }  // when r's queue's last task ends
  std::vector<SimTask>& tasks() { return tasks_; }
  const std::array<double, kNumRes>& busy() const { return busy_; }

 private:
  bool keep_;
  bool copies_on_cores_;
  std::vector<SimTask> tasks_;
  std::array<double, kNumRes> free_{};
  std::array<int, kNumRes> last_ = [] {
    std::array<int, kNumRes> a;
    a.fill(-1);
    return a;
  }();
  std::array<double, kNumRes> busy_{};
};

struct Rates {
  double w, dp, nvme_r, nvme_w, h2d, d2h;
  double coupling;  // CPU backend, more ranks than cores: added to every collective
  double nvme_lat;  // CPU backend: each NVMe read request's latency beyond its bytes, with the cores busy
  double fetch_wake;  // CPU backend, ranks <= cores: each fetch's lane hand-offs, on the cores with its copy
  double grad_wake;   // CPU backend, ranks <= cores: each gradient's hand-off to the comm lane, on the cores
};

// One NVMe transfer of `bytes` (a rank's shard): at the lane curves' time for its size where
// the profile has them, else its bytes at the bandwidth (plus the busy latency for a read).
double NvmeTransferSeconds(const HwProfile& hw, const PlanKnobs& k, const Rates& r, double bytes, bool write) {
  if (hw.HasNvmeLaneCurves()) return LaneTransferSeconds(hw, k, bytes, write);
  return write ? bytes / r.nvme_w : r.nvme_lat + bytes / r.nvme_r;
}

// Runs a pass over ops[idx[...]]: compute tasks in order, each op's parameter fetch chain
// (NVMe -> host, host -> device, allgather) issued ahead of use: stage s of op j is issued
// when op j - depth_s begins. Earlier stages are at least as deep as later ones
// (nvme >= h2d >= allgather), so a chain is always issued in order.
class PassBuilder {
 public:
  PassBuilder(Graph& g, const HwProfile& hw, const PlanKnobs& k, const Rates& r) : g_(g), hw_(hw), k_(k), r_(r) {
    da_ = static_cast<int>(std::max<int64_t>(k.prefetch_allgather, 0));
    dh_ = std::max(da_, static_cast<int>(std::max<int64_t>(k.prefetch_h2d, 0)));
    dn_ = std::max(dh_, static_cast<int>(std::max<int64_t>(k.prefetch_nvme, 0)));
  }

  template <typename Dur, typename After>
  int Run(const std::vector<Op>& ops, const std::vector<int>& idx, int prev, const char* phase, bool keep, Dur dur,
          After after) {
    const int n = static_cast<int>(idx.size());
    std::vector<int> stage_task(static_cast<size_t>(n), -1);  // latest issued stage per op
    auto op_at = [&](int j) -> const Op& { return ops[static_cast<size_t>(idx[static_cast<size_t>(j)])]; };
    // Issues stage `st` (0 nvme, 1 h2d, 2 allgather) of op j, triggered by `trig` (start or end).
    auto stage = [&](int st, int j, int trig, bool on_start) {
      if (j < 0 || j >= n) return;
      const Op& op = op_at(j);
      if (op.params <= 0) return;
      const double shard = r_.w * op.params / r_.dp;
      int& t = stage_task[static_cast<size_t>(j)];
      const std::string name = keep ? op.name : std::string();
      if (st == 0 && k_.placement.params == Tier::kNvme) {
        t = g_.Add(Res::kNvmeRead, NvmeTransferSeconds(hw_, k_, r_, shard, false), {{trig, on_start}}, phase, name + " nvme->host");
        // CPU backend: the request's completion and CRC check on the cores.
        if (double cpu = NvmeCpuTime(hw_, k_, 1, shard); cpu > 0) t = g_.Add(Res::kCompute, cpu, {{t, false}}, phase, name + " nvme cpu");
      }
      if (st == 1 && k_.placement.params != Tier::kDevice)
        t = g_.Add(Res::kH2D, shard / r_.h2d + r_.fetch_wake, {{t, false}, {trig, on_start}}, phase, name + " h2d");
      if (st == 2 && k_.dp() > 1) {
        t = g_.Add(Res::kNetwork, CollectiveTime(hw_, k_, r_.w * op.params) + r_.coupling, {{t, false}, {trig, on_start}}, phase,
                   name + " allgather");
        g_.tasks()[static_cast<size_t>(t)].cpu_s = CollectiveCpuTime(hw_, k_, r_.w * op.params);
      }
    };
    const int depth[3] = {dn_, dh_, da_};
    // Fetches issued before the first op begins: triggered by the start of the previous task.
    for (int st = 0; st < 3; ++st)
      for (int j = 0; j < std::min(depth[st], n); ++j) stage(st, j, prev, true);
    int last = prev;
    for (int i = 0; i < n; ++i) {
      for (int st = 0; st < 3; ++st)
        if (depth[st] == 0) stage(st, i, last, false);  // no prefetch: fetched on demand
      const Op& op = op_at(i);
      int c = g_.Add(Res::kCompute, dur(op), {{stage_task[static_cast<size_t>(i)], false}, {last, false}}, phase,
                     keep ? op.name : std::string());
      for (int st = 0; st < 3; ++st)
        if (depth[st] > 0) stage(st, i + depth[st], c, true);
      after(op, c);
      last = c;
    }
    return last;
  }

 private:
  Graph& g_;
  const HwProfile& hw_;
  const PlanKnobs& k_;
  const Rates& r_;
  int dn_ = 0, dh_ = 0, da_ = 0;
};

// CPU backend, optimizer states off the device: zrun's optimizer step (Zero3Engine::
// OptimizerStep) group by group, in its order. Group g+1's states read is issued to the one
// NVMe lane as g's Adam begins, g's write as it ends, so the lane runs write g-1, read g+1,
// write g, ... while Adam updates g on the cores. With states on NVMe a group under 2^20
// elements runs its Adam on one thread fewer (leaving the lane a core). With the profile's
// lane-Adam coupling (HwProfile::HasLaneAdamCoupling), the two slow each other where they
// overlap: Adam at nvme_adam_beside_lane x its time while the lane is busy, and the lane's
// transfers at 1 / their factor of their rate while Adam runs (a "lane beside adam" task on
// the lane queue for what that adds). Returns the last Adam task.
int CpuOptimizerSteps(Graph& g, const ModelSpec& m, const HwProfile& hw, const PlanKnobs& k, const StateBytes& sb,
                      const Rates& r, int barrier) {
  std::vector<double> shards = ExecutorGroupShards(m, k.seq_len, k.tile_factor, k.dp());
  if (const double head = CountParams(m).lm_head; head > 0) shards.push_back(std::ceil(head / static_cast<double>(k.dp())));  // untied
  const int n = static_cast<int>(shards.size());
  const double gpn = static_cast<double>(k.gpus_per_node);
  const int threads = static_cast<int>(std::max<int64_t>(1, hw.cpu_cores / std::max<int64_t>(k.gpus_per_node, 1)));  // zrun's default
  const Placement& pl = k.placement;
  const bool staged = pl.params == Tier::kNvme || pl.grads == Tier::kNvme || pl.optimizer == Tier::kNvme;
  const bool lane = hw.HasNvmeLaneCurves();
  const bool coupled = hw.HasLaneAdamCoupling();
  const double read_bpp = OptimizerNvmeBytesPerParam(k, sb, true), write_bpp = OptimizerNvmeBytesPerParam(k, sb, false);
  const double read_arrays = OptimizerNvmeArrays(k, sb, true), write_arrays = OptimizerNvmeArrays(k, sb, false);
  auto read_s = [&](double e) {
    return lane ? LaneTransferSeconds(hw, k, read_bpp * e, false) : read_arrays * r.nvme_lat + read_bpp * e / r.nvme_r;
  };
  // A group's write time split between its arrays by bytes.
  auto write_s = [&](double e, double bpp) {
    return lane ? LaneTransferSeconds(hw, k, write_bpp * e, true) * bpp / write_bpp : bpp * e / r.nvme_w;
  };
  auto adam_s = [&](double e) {
    const int t = AdamThreads(threads, staged, static_cast<size_t>(e));  // zrun's rule
    const double launch = t > 1 && e >= static_cast<double>(cpu::kAdamMinParallel) ? hw.kernel_launch_s : 0.0;
    return e * gpn / std::max(hw.cpu_adam_params_per_s, 1e-30) * static_cast<double>(threads) / static_cast<double>(t) + launch;
  };
  // What a lane transfer of `work` seconds, from `at`, adds beside an Adam running until `adam_end`.
  auto stall = [&](double at, double work, double adam_end, double factor) {
    if (!coupled || work <= 0 || adam_end <= at) return 0.0;
    return std::min(work * (factor - 1.0), (adam_end - at) * (1.0 - 1.0 / factor));
  };
  auto add_stall = [&](double dur, int after) {
    return dur > 0 ? g.Add(Res::kNvmeWrite, dur, {{after, false}}, "optimizer", "lane beside adam") : after;
  };
  std::vector<int> rd(static_cast<size_t>(n), -1);
  auto issue_read = [&](int j, int trig) {
    if (j >= n || read_bpp <= 0) return;
    rd[static_cast<size_t>(j)] = g.Add(Res::kNvmeRead, read_s(shards[static_cast<size_t>(j)]), {{trig, false}, {barrier, false}}, "optimizer",
                                       "optimizer states read");
    const double cpu = NvmeCpuTime(hw, k, read_arrays, read_bpp * shards[static_cast<size_t>(j)]);
    if (cpu > 0) g.Add(Res::kCompute, cpu, {{rd[static_cast<size_t>(j)], false}}, "optimizer", "optimizer states read cpu");
  };
  issue_read(0, barrier);
  int last = barrier;
  for (int j = 0; j < n; ++j) {
    const double e = shards[static_cast<size_t>(j)];
    // Adam j starts when its states are in and the previous Adam is done; the lane is busy
    // from then until the pending write and the next group's read are through.
    const double a0 = std::max({g.end(rd[static_cast<size_t>(j)]), g.end(barrier), g.free_at(Res::kCpuOpt)});
    const double base = adam_s(e);
    double adam = base;
    if (coupled) {
      double busy_until = g.free_at(Res::kNvmeRead);
      if (j + 1 < n && read_bpp > 0) busy_until = std::max(busy_until, g.end(last)) + read_s(shards[static_cast<size_t>(j + 1)]);
      const double busy = std::max(0.0, busy_until - a0), f = hw.nvme_adam_beside_lane;
      adam = base * f <= busy ? base * f : busy + (base - busy / f);
    }
    const int u = g.Add(Res::kCpuOpt, adam, {{rd[static_cast<size_t>(j)], false}, {barrier, false}}, "optimizer", "cpu adam");
    const double a1 = g.end(u);
    // The previous group's write, still on the lane, beside this Adam.
    const double pending = g.free_at(Res::kNvmeWrite);
    add_stall(stall(a0, pending - a0, a1, hw.nvme_lane_write_beside_adam), -1);
    // The next group's read, issued as this Adam began.
    issue_read(j + 1, last);
    if (j + 1 < n && read_bpp > 0) {
      const int t = rd[static_cast<size_t>(j + 1)];
      const SimTask& rt = g.tasks()[static_cast<size_t>(t)];
      const double from = std::max(rt.start_s, a0);
      rd[static_cast<size_t>(j + 1)] = add_stall(stall(from, rt.end_s - from, a1, hw.nvme_lane_read_beside_adam), t);
    }
    if (const double cpu = NvmeCpuTime(hw, k, write_arrays, write_bpp * e); cpu > 0)
      g.Add(Res::kCompute, cpu, {{u, false}}, "optimizer", "optimizer states write cpu");
    if (pl.optimizer == Tier::kNvme) g.Add(Res::kNvmeWrite, write_s(e, sb.optimizer), {{u, false}}, "optimizer", "optimizer states write");
    if (pl.params == Tier::kDevice) g.Add(Res::kH2D, sb.param * e / r.h2d, {{u, false}}, "optimizer", "param write-back h2d");
    if (pl.params == Tier::kNvme) g.Add(Res::kNvmeWrite, write_s(e, sb.param), {{u, false}}, "optimizer", "param write nvme");
    last = u;
  }
  return last;
}

}  // namespace

SimResult SimulateStep(const ModelSpec& m, const HwProfile& hw, const PlanKnobs& k, const SimOptions& o) {
  Graph g(o.keep_tasks, hw.backend == "cpu");
  const std::vector<Op> ops = BuildForwardOps(m, hw, k, o.keep_tasks);
  const StateBytes sb = StateBytesFor(k.dtype, k.accounting);
  auto bw = [](double b) { return b > 0 ? b : 1e-30; };
  Rates r{DtypeBytes(k.dtype), static_cast<double>(k.dp()), bw(NvmeReadBwPerRank(hw, k)), bw(NvmeWriteBwPerRank(hw, k)), bw(hw.h2d_bw), bw(hw.d2h_bw),
          CouplingPerCollective(m, hw, k, ops), hw.backend == "cpu" ? hw.BusyReadLatency() : 0.0, FetchWakePerFetch(m, hw, k, ops), GradWakePerHandOff(m, hw, k, ops)};
  PassBuilder pb(g, hw, k, r);
  // Checkpointed layers: every segment but the last is saved in forward and recomputed in
  // backward (the last one's activations are still live), as the executor runs it.
  const int64_t recomputed = RecomputedLayers(m, k);
  const bool ckpt = recomputed > 0;
  const double ckpt_bytes = r.w * static_cast<double>(k.micro_batch * k.seq_len * m.hidden);
  const bool offload_ckpt = ckpt && k.ckpt_tier == Tier::kHost;
  const bool keep = o.keep_tasks;

  // Segments of ops by checkpoint interval (embedding and head stand alone).
  std::vector<std::vector<int>> segments;
  for (int i = 0; i < static_cast<int>(ops.size()); ++i) {
    const Op& op = ops[static_cast<size_t>(i)];
    bool new_seg = segments.empty() || !op.in_block || !ops[static_cast<size_t>(i - 1)].in_block ||
                   (ckpt && op.layer != ops[static_cast<size_t>(i - 1)].layer && op.layer % k.ckpt_interval == 0);
    if (new_seg) segments.emplace_back();
    segments.back().push_back(i);
  }
  std::vector<int> all(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) all[i] = static_cast<int>(i);

  int last = -1;
  double fwd_end = 0, bwd_end = 0;
  for (int64_t micro = 0; micro < k.grad_accum; ++micro) {
    // Forward: checkpoints written D2H at each segment start when offloaded.
    last = pb.Run(ops, all, last, "forward", keep, [](const Op& op) { return op.fwd_s; },
                  [&](const Op& op, int c) {
                    if (offload_ckpt && op.layer_start && op.layer < recomputed && op.layer % k.ckpt_interval == 0)
                      g.Add(Res::kD2H, ckpt_bytes / r.d2h, {{c, false}}, "forward", "checkpoint d2h");
                  });
    fwd_end = g.end(last);
    // Backward, segment by segment from the last: recompute the segment, then its backward.
    // Recompute tasks carry the phase "recompute", as zrun's measured trace labels them.
    for (auto s = segments.rbegin(); s != segments.rend(); ++s) {
      const Op& first = ops[static_cast<size_t>(s->front())];
      if (ckpt && first.in_block && first.layer < recomputed) {
        if (offload_ckpt) last = g.Add(Res::kH2D, ckpt_bytes / r.h2d, {{last, true}}, "recompute", "checkpoint h2d");
        last = pb.Run(ops, *s, last, "recompute", keep, [](const Op& op) { return op.fwd_s; }, [](const Op&, int) {});
      }
      std::vector<int> rev(s->rbegin(), s->rend());
      last = pb.Run(ops, rev, last, "backward", keep, [](const Op& op) { return op.bwd_s; },
                    [&](const Op& op, int c) {
                      if (op.params <= 0) return;
                      int t = c;
                      if (k.dp() > 1) {
                        t = g.Add(Res::kNetwork, CollectiveTime(hw, k, r.w * op.params, true) + r.coupling, {{t, false}}, "backward", "reduce-scatter");
                        g.tasks()[static_cast<size_t>(t)].cpu_s = CollectiveCpuTime(hw, k, r.w * op.params, true);
                      }
                      const double gshard = sb.grad * op.params / r.dp;
                      if (const double h = GradHandOffTime(hw, k, gshard) + r.grad_wake; h > 0)
                        t = g.Add(Res::kCompute, h, {{t, false}}, "backward", "grad hand-off");
                      if (k.placement.grads != Tier::kDevice) t = g.Add(Res::kD2H, gshard / r.d2h, {{t, false}}, "backward", "grad d2h");
                      if (k.placement.grads == Tier::kNvme) {
                        // Later micro-steps add to the shard written by the first: read it back.
                        if (micro > 0)
                          t = g.Add(Res::kNvmeRead, NvmeTransferSeconds(hw, k, r, gshard, false), {{t, false}}, "backward", "grad nvme read");
                        const double cpu = NvmeCpuTime(hw, k, micro > 0 ? 2 : 1, (micro > 0 ? 2 : 1) * gshard);
                        if (cpu > 0) t = g.Add(Res::kCompute, cpu, {{t, false}}, "backward", "grad nvme cpu");
                        g.Add(Res::kNvmeWrite, NvmeTransferSeconds(hw, k, r, gshard, true), {{t, false}}, "backward", "grad nvme write");
                      }
                    });
    }
    bwd_end = g.end(last);
  }
  // Wait for every outstanding transfer of the passes before the optimizer.
  double drained = 0;
  for (const SimTask& t : g.tasks()) drained = std::max(drained, t.end_s);
  // The barrier waits from when the compute queue frees (after the last op's hand-off, which
  // queues there on the CPU backend) to the last transfer's end.
  int barrier = g.Add(Res::kCompute, std::max(0.0, drained - std::max(g.end(last), g.free_at(Res::kCompute))), {{last, false}},
                      "backward", "drain");
  bwd_end = g.end(barrier);

  // Optimizer: sub-groups of the shard, pipelined read -> update -> write (+ write-back).
  const double P = CountParams(m).total, shard = P / r.dp;
  if (k.placement.optimizer != Tier::kDevice && hw.backend == "cpu") {
    last = CpuOptimizerSteps(g, m, hw, k, sb, r, barrier);
  } else if (k.placement.optimizer == Tier::kDevice) {
    const double dur = hw.backend == "cpu" ? shard * static_cast<double>(k.gpus_per_node) / bw(hw.cpu_adam_params_per_s)
                                           : (sb.optimizer * 2 + sb.param * 2 + sb.grad) * shard / bw(hw.memory_bw);
    last = g.Add(Res::kCompute, dur + AdamLaunchTime(m, hw, k), {{barrier, false}}, "optimizer", "adam (device)");
  } else {
    const double chunk = k.optimizer_chunk_params > 0 ? static_cast<double>(k.optimizer_chunk_params) : shard;
    const int chunks = static_cast<int>(std::max(1.0, std::ceil(shard / chunk)));
    const double per = shard / chunks;
    const double gpn = static_cast<double>(k.gpus_per_node);
    const double adam_launch = AdamLaunchTime(m, hw, k);  // spread over the sub-groups
    // CPU backend: each group's arrays are NVMe requests whose CPU runs on the cores.
    const double groups_per_chunk = static_cast<double>(ParamGroups(ops)) / chunks;
    const double read_bpp = OptimizerNvmeBytesPerParam(k, sb, true);
    const double write_bpp = OptimizerNvmeBytesPerParam(k, sb, false);
    const double read_requests = groups_per_chunk * OptimizerNvmeArrays(k, sb, true);
    const double read_cpu = NvmeCpuTime(hw, k, read_requests, read_bpp * per);
    const double write_cpu = NvmeCpuTime(hw, k, groups_per_chunk * OptimizerNvmeArrays(k, sb, false), write_bpp * per);
    // With the lane curves: each chunk's share of the step's lane time (groups' transfers).
    const bool lane = hw.HasNvmeLaneCurves();
    const double lane_read = lane ? ShardsLaneSeconds(m, hw, k, read_bpp, false) / chunks : 0.0;
    const double lane_write = lane ? ShardsLaneSeconds(m, hw, k, write_bpp, true) / chunks : 0.0;
    // With the lane curves the chunk's write time is split between its arrays by bytes.
    auto write_s = [&](double bpp) { return lane ? lane_write * bpp / write_bpp : bpp * per / r.nvme_w; };
    std::vector<int> upd(static_cast<size_t>(chunks), -1);
    last = barrier;
    for (int c = 0; c < chunks; ++c) {
      int rd = -1;
      if (read_bpp > 0) {
        int trig = c >= 2 ? upd[static_cast<size_t>(c - 2)] : barrier;  // two sub-groups of read-ahead
        rd = g.Add(Res::kNvmeRead, lane ? lane_read : read_requests * r.nvme_lat + read_bpp * per / r.nvme_r, {{trig, c >= 2}, {barrier, false}},
                   "optimizer", "optimizer states read");
        // Its CPU (completion, CRC) takes the cores, which are otherwise idle here (Adam waits for the read, not for it).
        if (read_cpu > 0) g.Add(Res::kCompute, read_cpu, {{rd, false}}, "optimizer", "optimizer states read cpu");
      }
      // The node's CPU Adam rate is shared by its GPUs' ranks.
      int u = g.Add(Res::kCpuOpt, per * gpn / bw(hw.cpu_adam_params_per_s) + adam_launch / chunks, {{rd, false}, {barrier, false}},
                    "optimizer", "cpu adam");
      upd[static_cast<size_t>(c)] = u;
      if (write_cpu > 0) g.Add(Res::kCompute, write_cpu, {{u, false}}, "optimizer", "optimizer states write cpu");
      if (k.placement.optimizer == Tier::kNvme) g.Add(Res::kNvmeWrite, write_s(sb.optimizer), {{u, false}}, "optimizer", "optimizer states write");
      if (k.placement.params == Tier::kDevice) g.Add(Res::kH2D, sb.param * per / r.h2d, {{u, false}}, "optimizer", "param write-back h2d");
      if (k.placement.params == Tier::kNvme) g.Add(Res::kNvmeWrite, write_s(sb.param), {{u, false}}, "optimizer", "param write nvme");
      last = u;
    }
  }

  SimResult res;
  std::vector<SimTask>& tasks = g.tasks();
  int final_task = 0;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (tasks[i].end_s >= res.step_s) {
      res.step_s = tasks[i].end_s;
      final_task = static_cast<int>(i);
    }
  }
  res.busy_s = g.busy();
  for (int i = 0; i < kNumRes; ++i) res.utilisation[static_cast<size_t>(i)] = res.step_s > 0 ? res.busy_s[static_cast<size_t>(i)] / res.step_s : 0;
  res.forward_s = fwd_end / static_cast<double>(k.grad_accum);
  res.backward_s = bwd_end - fwd_end;
  res.optimizer_s = res.step_s - bwd_end;
  if (k.grad_accum > 1) res.backward_s = bwd_end - res.forward_s * static_cast<double>(k.grad_accum);
  res.num_tasks = tasks.size();
  if (o.keep_tasks) {
    for (int t = final_task; t >= 0; t = tasks[static_cast<size_t>(t)].critical_pred) {
      res.critical_path.push_back(t);
      if (tasks[static_cast<size_t>(t)].critical_pred == t) break;
    }
    std::reverse(res.critical_path.begin(), res.critical_path.end());
    res.tasks = std::move(tasks);
  }
  return res;
}

}  // namespace zinf
