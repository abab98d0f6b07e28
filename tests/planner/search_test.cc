// The schedule search: never returns an infeasible plan, ranks by predicted throughput,
// reports infeasibility clearly, and scales to the paper's largest configs.
#include "planner/search/search.h"

#include <gtest/gtest.h>

#include "planner/model/compute_speed.h"
#include "planner/model/memory_model.h"
#include "planner/model/op_graph.h"
#include "planner/model/time_model.h"
#include "planner/search/evaluate.h"
#include "planner/sim/simulator.h"
#include "test_fixtures.h"

namespace zinf {
namespace {

using testing::Dgx2;
using testing::Gpt;
using testing::PaperModel;

void ExpectAllFeasible(const ModelSpec& m, const HwProfile& hw, const SearchResult& r) {
  ASSERT_FALSE(r.top.empty());
  for (size_t i = 0; i < r.top.size(); ++i) {
    const Candidate& c = r.top[i];
    MemoryEstimate mem = EstimateMemory(m, hw, c.knobs);
    Capacity cap{c.knobs.device_budget_bytes, c.knobs.host_budget_bytes, c.knobs.nvme_budget_bytes};
    EXPECT_EQ(OverflowTier(mem, cap), "") << "candidate " << i;
    EXPECT_LE(mem.device_bytes, hw.device_memory_bytes);
    EXPECT_LE(mem.host_bytes, hw.host_memory_bytes);
    EXPECT_LE(mem.nvme_bytes, hw.nvme_capacity_bytes);
    EXPECT_GT(c.prediction.step_time_s, 0);
    if (i > 0) {
      EXPECT_GE(r.top[i - 1].prediction.tokens_per_s * (1 + 1e-3), c.prediction.tokens_per_s);  // ties: simpler first
    }
  }
}

TEST(Search, NeverInfeasibleAcrossModelsAndNodes) {
  const HwProfile hw = Dgx2();
  const ModelSpec models[] = {Gpt(24, 2048, 16), Gpt(96, 12288, 96), PaperModel(128, 25, 256), PaperModel(195, 64, 512)};
  for (const ModelSpec& m : models) {
    for (int64_t nodes : {1, 4, 32}) {
      SearchOptions o;
      o.nodes = nodes;
      o.top_k = 20;
      Result<SearchResult> r = SearchPlans(m, hw, o);
      if (!r.ok()) {
        EXPECT_EQ(r.status().code(), Code::kInfeasible) << r.status().ToString();
        continue;
      }
      ExpectAllFeasible(m, hw, *r);
      EXPECT_EQ(r->feasible + [&] {
        int64_t n = 0;
        for (const auto& [t, c] : r->rejected) n += c;
        return n;
      }(), r->evaluated);
    }
  }
}

TEST(Search, TinyDeviceForcesOffloadOrFails) {
  HwProfile hw = Dgx2();
  ModelSpec m = Gpt(96, 12288, 96);  // 175B
  SearchOptions o;
  o.strategies = {"none"};
  Result<SearchResult> r = SearchPlans(m, hw, o);  // 175B x 16 B/param on 16 x 32 GB cannot fit
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInfeasible);
  EXPECT_NE(r.status().message().find("device"), std::string::npos) << r.status().message();
  o.strategies = {"params+opt:nvme"};
  Result<SearchResult> r2 = SearchPlans(m, hw, o);
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  ExpectAllFeasible(m, hw, *r2);
  EXPECT_EQ(r2->top.front().knobs.placement.params, Tier::kNvme);
}

TEST(Search, GlobalBatchSetsAccumulation) {
  SearchOptions o;
  o.global_batch = 512;
  o.nodes = 2;
  Result<SearchResult> r = SearchPlans(Gpt(24, 2048, 16), Dgx2(), o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (const Candidate& c : r->top) EXPECT_EQ(c.knobs.micro_batch * c.knobs.grad_accum * c.knobs.dp(), 512);
  o.global_batch = 33;  // not a multiple of dp 32
  EXPECT_EQ(SearchPlans(Gpt(24, 2048, 16), Dgx2(), o).status().code(), Code::kInvalidArgument);
}

TEST(Search, UnknownStrategyRejected) {
  SearchOptions o;
  o.strategies = {"gpu-only"};
  Result<SearchResult> r = SearchPlans(Gpt(2, 64, 4, 64), Dgx2(), o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("allowed"), std::string::npos);
}

TEST(TimeModel, SlowerTiersAreNotFaster) {
  const HwProfile hw = Dgx2();
  ModelSpec m = Gpt(24, 2048, 16);
  SearchOptions o;
  PlanKnobs k = BaseKnobs(m, hw, o);
  k.micro_batch = 4;
  // Each chain moves a state to a slower tier; params on host may beat params on device
  // (fetches hide under compute while the post-step write-back goes away), so no chain mixes them.
  for (auto chain : {std::vector<const char*>{"none", "opt:host", "opt:nvme"},
                     std::vector<const char*>{"params+opt:host", "params+opt:nvme", "all:nvme"}}) {
    double prev = 0;
    for (const char* name : chain) {
      k.placement = FindStrategy(name)->placement;
      DeriveBuffers(m, k);
      double t = EstimateTime(m, hw, k).step_s;
      EXPECT_GE(t, prev * 0.999) << name;
      prev = t;
    }
  }
}

TEST(TimeModel, NvmeBoundStepScalesWithBandwidth) {
  HwProfile hw = Dgx2();
  ModelSpec m = PaperModel(128, 25, 256);
  SearchOptions o;
  PlanKnobs k = BaseKnobs(m, hw, o);
  k.placement = FindStrategy("all:nvme")->placement;
  DeriveBuffers(m, k);
  TimeEstimate a = EstimateTime(m, hw, k);
  // Faster links per GPU do not help while the node's drives stay as they are: the ranks of a
  // node share them.
  HwProfile links = hw;
  links.nvme_read_bw *= 2;
  links.nvme_write_bw *= 2;
  EXPECT_DOUBLE_EQ(EstimateTime(m, links, k).step_s, a.step_s);
  hw.nvme_read_bw *= 2;
  hw.nvme_write_bw *= 2;
  hw.nvme_read_bw_node *= 2;
  hw.nvme_write_bw_node *= 2;
  TimeEstimate b = EstimateTime(m, hw, k);
  EXPECT_LT(b.step_s, a.step_s);
  EXPECT_TRUE(a.bottleneck == "nvme_read" || a.bottleneck == "nvme_write") << a.bottleneck;
}

// A CPU profile measures one device with the node's drive; 4 ranks on it get a quarter each.
TEST(TimeModel, RanksOfANodeShareItsNvme) {
  HwProfile hw;
  hw.gpus_per_node = 1;
  hw.nvme_read_bw = hw.nvme_read_bw_node = 1e9;
  hw.nvme_write_bw = hw.nvme_write_bw_node = 8e8;
  PlanKnobs k;
  k.gpus_per_node = 1;
  EXPECT_DOUBLE_EQ(NvmeReadBwPerRank(hw, k), 1e9);
  k.gpus_per_node = 4;
  EXPECT_DOUBLE_EQ(NvmeReadBwPerRank(hw, k), 2.5e8);
  EXPECT_DOUBLE_EQ(NvmeWriteBwPerRank(hw, k), 2e8);
  hw.nvme_read_bw_node = 0;  // unknown node figure: the per-GPU one
  EXPECT_DOUBLE_EQ(NvmeReadBwPerRank(hw, k), 1e9);
}

// CPU backend: a collective is memcpy by the ranks' own threads on the cores they share,
// so it runs at the rank's share of them; on GPUs the share does not apply.
TEST(TimeModel, CpuCollectivesRunAtTheRanksShareOfTheCores) {
  HwProfile hw;
  hw.backend = "cpu";
  hw.gpus_per_node = 2;  // a --threads 1 profile of 2 cores
  hw.cpu_cores = 2;
  hw.cpu_sched_slice_s = 3e-3;  // measured, but not a cost any more
  hw.collective_latency_s = 1e-5;
  hw.allgather_curve = {{1e3, 1e9}, {1e9, 1e9}};
  PlanKnobs k;
  k.gpus_per_node = 2;  // one rank per profiled device: its whole share
  EXPECT_NEAR(CollectiveTime(hw, k, 1e6), 1e6 * 0.5 / 1e9 + 1e-5, 1e-15);
  k.gpus_per_node = 4;  // four ranks on two devices' cores: half each
  EXPECT_NEAR(CollectiveTime(hw, k, 1e6), (1e6 * 0.75 / 1e9 + 1e-5) / 0.5, 1e-15);
  hw.backend = "cuda";
  EXPECT_NEAR(CollectiveTime(hw, k, 1e6), 1e6 * 0.75 / 1e9 + 1e-5, 1e-15);
}

// CPU backend, more ranks than cores, with the shm curves (measured among that many rank
// processes): each kind at its own curve, the node's time (no share); in proportion below
// the first point. Without them, or with no more ranks than cores, the allgather curve.
TEST(TimeModel, CpuOversubscribedCollectivesAtTheShmCurves) {
  HwProfile hw;
  hw.backend = "cpu";
  hw.gpus_per_node = 2;
  hw.cpu_cores = 2;
  hw.collective_latency_s = 1e-5;
  hw.allgather_curve = {{1e3, 1e9}, {1e9, 1e9}};
  hw.shm_allgather_curve = {{1e5, 4e9}, {1e9, 4e9}};
  hw.shm_reduce_scatter_curve = {{1e5, 2e9}, {1e9, 2e9}};
  PlanKnobs k;
  k.gpus_per_node = 4;
  EXPECT_NEAR(CollectiveTime(hw, k, 1e6), 1e6 * 0.75 / 4e9 + 1e-5, 1e-15);
  EXPECT_NEAR(CollectiveTime(hw, k, 1e6, true), 1e6 * 0.75 / 2e9 + 1e-5, 1e-15);
  EXPECT_NEAR(CollectiveTime(hw, k, 1e4, true), 1e4 * 0.75 / (2e9 * 0.1) + 1e-5, 1e-15);
  k.gpus_per_node = 2;  // as many ranks as cores: the allgather curve, whole share
  EXPECT_NEAR(CollectiveTime(hw, k, 1e6, true), 1e6 * 0.5 / 1e9 + 1e-5, 1e-15);
  k.gpus_per_node = 4;
  // The ranks' extra CPU beside their GEMMs: each of the 4 ranks' on the node's 2 cores.
  hw.shm_allgather_cpu_beside_curve = {{1e6, 2e-5}};
  EXPECT_NEAR(CollectiveTime(hw, k, 1e6), 1e6 * 0.75 / 4e9 + 1e-5 + 4.0 / 2.0 * 2e-5, 1e-15);
  EXPECT_NEAR(CollectiveTime(hw, k, 1e6, true), 1e6 * 0.75 / 2e9 + 1e-5, 1e-15);  // its own curve: none
  k.gpus_per_node = 2;  // not where ranks and cores are even: the allgather curve alone
  EXPECT_NEAR(CollectiveTime(hw, k, 1e6), 1e6 * 0.5 / 1e9 + 1e-5, 1e-15);
  k.gpus_per_node = 4;
  hw.shm_reduce_scatter_curve.clear();  // not measured: the allgather curve at the rank's share
  EXPECT_NEAR(CollectiveTime(hw, k, 1e6, true), (1e6 * 0.75 / 1e9 + 1e-5) / 0.5, 1e-15);
}

// A 2-layer GPT of hidden 256 with a 1000-token vocabulary, and fp32 knobs of 4 x 128 tokens
// on every GPU of `hw`: the CPU op-graph tests' model.
ModelSpec SmallVocabGpt() {
  ModelSpec m = Gpt(2, 256, 4, 128);
  m.vocab = 1000;
  return m;
}

PlanKnobs CpuKnobs(const HwProfile& hw) {
  PlanKnobs k;
  k.micro_batch = 4;
  k.seq_len = 128;
  k.dtype = "fp32";
  k.gpus_per_node = hw.gpus_per_node;
  return k;
}

// Measured cross-entropy kernel rates replace the memory-pass formulas for the head's loss,
// forward and backward; without them the memory passes stay, and nothing else moves.
TEST(TimeModel, LossAtMeasuredKernelRates) {
  HwProfile hw = Dgx2();
  hw.backend = "cpu";
  const ModelSpec m = SmallVocabGpt();
  PlanKnobs k = CpuKnobs(hw);
  const std::vector<Op> base = BuildForwardOps(m, hw, k, true);
  hw.cross_entropy_elems_per_s = 5e8;
  hw.cross_entropy_bwd_elems_per_s = 2.5e8;
  const std::vector<Op> meas = BuildForwardOps(m, hw, k, true);
  ASSERT_EQ(base.size(), meas.size());
  const double logits = 4.0 * 128 * 1000;
  for (size_t i = 0; i < base.size(); ++i) {
    if (base[i].name != "head") {
      EXPECT_EQ(base[i].fwd_s, meas[i].fwd_s) << base[i].name;
      EXPECT_EQ(base[i].bwd_s, meas[i].bwd_s) << base[i].name;
      continue;
    }
    EXPECT_NEAR(meas[i].fwd_s - base[i].fwd_s, logits / 5e8 - 4 * logits * 4 / hw.memory_bw, 1e-12);
    EXPECT_NEAR(meas[i].bwd_s - base[i].bwd_s, logits / 2.5e8 - 2 * logits * 4 / hw.memory_bw, 1e-12);
  }
  // A CUDA profile measured on top of the CPU probes drops the CPU kernels' figures.
  hw.op_overhead_s = 1e-5;
  hw.kernel_launch_s = 1e-5;
  hw.gelu_elems_per_s = 1e9;
  hw.provenance["device.cross_entropy_elems_per_s"] = "measured";
  hw.provenance["device.memory_bw"] = "measured";
  ClearCpuKernelFigures(hw);
  EXPECT_EQ(hw.cross_entropy_elems_per_s, 0);
  EXPECT_EQ(hw.cross_entropy_bwd_elems_per_s, 0);
  EXPECT_EQ(hw.gelu_elems_per_s, 0);
  EXPECT_EQ(hw.op_overhead_s, 0);
  EXPECT_EQ(hw.kernel_launch_s, 0);
  EXPECT_FALSE(hw.provenance.count("device.cross_entropy_elems_per_s"));
  EXPECT_TRUE(hw.provenance.count("device.memory_bw"));
}

TEST(TimeModel, CpuParallelKernelsPayTheirLaunch) {
  // 512 tokens of hidden 256: every memory-pass kernel of the executor runs in parallel
  // (ParallelChunks thresholds), so each pays one launch: a linear's bias init (forward) and
  // bias gradient (backward), a LayerNorm's one pass forward and two backward, GELU one each
  // way, the embedding one each way, the head's final norm and cross-entropy.
  HwProfile hw = Dgx2();
  hw.backend = "cpu";
  const ModelSpec m = SmallVocabGpt();
  PlanKnobs k = CpuKnobs(hw);
  const std::vector<Op> base = BuildForwardOps(m, hw, k, true);
  hw.kernel_launch_s = 1e-5;
  const std::vector<Op> with = BuildForwardOps(m, hw, k, true);
  ASSERT_EQ(base.size(), with.size());
  auto launches = [&](size_t i, bool fwd) {
    return ((fwd ? with[i].fwd_s - base[i].fwd_s : with[i].bwd_s - base[i].bwd_s)) / 1e-5;
  };
  for (size_t i = 0; i < base.size(); ++i) {
    const std::string& n = base[i].name;
    const bool ln = n.find(".ln") != std::string::npos || n.find("ln1") != std::string::npos || n.find("ln2") != std::string::npos;
    const double fwd = n == "head" ? 2 : n.find("attn.core") != std::string::npos ? 0 : 1;
    const double bwd = n == "head" ? 3 : ln ? 2 : n.find("attn.core") != std::string::npos ? 0 : 1;
    EXPECT_NEAR(launches(i, true), fwd, 1e-9) << n;
    EXPECT_NEAR(launches(i, false), bwd, 1e-9) << n;
  }
  // One token row of hidden 256: below every threshold, the kernels run serially.
  k.micro_batch = 1;
  k.seq_len = 1;
  hw.kernel_launch_s = 0;
  const std::vector<Op> small = BuildForwardOps(m, hw, k, true);
  hw.kernel_launch_s = 1e-5;
  const std::vector<Op> small_with = BuildForwardOps(m, hw, k, true);
  for (size_t i = 0; i < small.size(); ++i) {
    EXPECT_EQ(small_with[i].fwd_s, small[i].fwd_s) << small[i].name;
    EXPECT_EQ(small_with[i].bwd_s, small[i].bwd_s) << small[i].name;
  }
  // The optimizer: one launch per group whose shard reaches AdamStep's parallel threshold
  // (32768): one rank, every group but the norms (embed + 4 linears x 2 layers); eight ranks,
  // only the embedding's and the MLP's (qkv's shard is 25600, proj's 9216).
  EXPECT_EQ(ExecutorGroupsOfAtLeast(m, 128, 1, 1, 32768), 9);
  EXPECT_EQ(ExecutorGroupsOfAtLeast(m, 128, 1, 8, 32768), 5);
  HwProfile one = hw;
  one.gpus_per_node = 1;
  one.cpu_adam_params_per_s = 1e9;
  const PlanKnobs k1 = CpuKnobs(one);
  EXPECT_DOUBLE_EQ(AdamLaunchTime(m, one, k1), 9e-5);
  const double opt_with = SimulateStep(m, one, k1, {}).optimizer_s;
  one.kernel_launch_s = 0;
  EXPECT_NEAR(opt_with - SimulateStep(m, one, k1, {}).optimizer_s, 9e-5, 1e-12);
  EXPECT_EQ(AdamLaunchTime(m, one, k1), 0.0);
  one.kernel_launch_s = 1e-5;
  // A CUDA profile: kernel launches of the CPU backend do not apply.
  hw.backend = "cuda";
  const std::vector<Op> cuda = BuildForwardOps(m, hw, k, true);
  hw.kernel_launch_s = 0;
  const std::vector<Op> cuda0 = BuildForwardOps(m, hw, k, true);
  for (size_t i = 0; i < cuda.size(); ++i) EXPECT_EQ(cuda[i].fwd_s, cuda0[i].fwd_s);
}

TEST(TimeModel, PassesOverJustWrittenTensorsAtTheHotRate) {
  // With device.hot_pass_curve, the memory passes over what the op before wrote (a norm's
  // forward, a linear's bias/residual initialisation and its bias gradient) run at the curve's
  // rate for their working set; a norm's backward (it reads the x saved a pass earlier) and
  // the embedding stay at memory_bw.
  HwProfile hw = Dgx2();
  hw.backend = "cpu";
  hw.kernel_launch_s = 0;
  const ModelSpec m = SmallVocabGpt();
  PlanKnobs k = CpuKnobs(hw);
  const std::vector<Op> base = BuildForwardOps(m, hw, k, true);
  // Four times memory_bw for working sets to 1 MiB, memory_bw's rate from 64 MiB.
  hw.hot_pass_curve = {{1 << 20, 4 * hw.memory_bw}, {64 << 20, hw.memory_bw}};
  const std::vector<Op> hot = BuildForwardOps(m, hw, k, true);
  ASSERT_EQ(base.size(), hot.size());
  const double bs = static_cast<double>(k.micro_batch * k.seq_len), h = static_cast<double>(m.hidden);
  const double tensor = bs * h * 4;  // fp32 activations of one token row each
  ASSERT_LE(2 * tensor, 1 << 20);     // the norms' working set sits on the curve's first point
  for (size_t i = 0; i < base.size(); ++i) {
    const std::string& n = base[i].name;
    SCOPED_TRACE(n);
    if (n.find("ln") != std::string::npos && n != "head") {
      // Four passes of the tensor forward, at a quarter of the time; the backward unchanged.
      EXPECT_NEAR(base[i].fwd_s - hot[i].fwd_s, 4 * tensor / hw.memory_bw * 0.75, 1e-12);
      EXPECT_EQ(hot[i].bwd_s, base[i].bwd_s);
    } else if (n.find("attn.proj") != std::string::npos) {
      // Output (hidden wide) written over the residual read: two tensors forward, one backward.
      EXPECT_NEAR(base[i].fwd_s - hot[i].fwd_s, 2 * tensor / hw.memory_bw * 0.75, 1e-12);
      EXPECT_NEAR(base[i].bwd_s - hot[i].bwd_s, tensor / hw.memory_bw * 0.75, 1e-12);
    } else if (n == "embed" || n.find("attn.core") != std::string::npos || n.find("gelu") != std::string::npos) {
      EXPECT_EQ(hot[i].fwd_s, base[i].fwd_s);
      EXPECT_EQ(hot[i].bwd_s, base[i].bwd_s);
    } else {
      EXPECT_LT(hot[i].fwd_s, base[i].fwd_s);
    }
  }
  // Beyond the last-level cache the curve's rate is memory_bw's: no change at all.
  hw.hot_pass_curve = {{1e3, hw.memory_bw}, {2e3, hw.memory_bw}};
  const std::vector<Op> flat = BuildForwardOps(m, hw, k, true);
  for (size_t i = 0; i < base.size(); ++i) EXPECT_NEAR(flat[i].fwd_s, base[i].fwd_s, 1e-15) << base[i].name;
  // The curve follows the memory speed (zplan simulate --memory-speed), and a CUDA profile
  // measured over the CPU probes drops it.
  hw.hot_pass_curve = {{1 << 20, 4e11}, {64 << 20, 1e11}};
  EXPECT_DOUBLE_EQ(AtComputeSpeed(hw, 0.5, 0.8).HotPassBw(1 << 20), 3.2e11);
  EXPECT_DOUBLE_EQ(AtComputeSpeed(hw, 0.5).HotPassBw(64 << 20), 5e10);
  EXPECT_DOUBLE_EQ(hw.HotPassBw(8 << 20), 4e11 - 3e11 * 0.5);  // log-interpolated: 8 MiB halfway
  hw.provenance["device.hot_pass_curve"] = "measured";
  ClearCpuKernelFigures(hw);
  EXPECT_TRUE(hw.hot_pass_curve.empty());
  EXPECT_FALSE(hw.provenance.count("device.hot_pass_curve"));
  EXPECT_EQ(hw.HotPassBw(1 << 20), hw.memory_bw);
}

TEST(TimeModel, MoreRanksThanCoresRunGemmsAtTheSharedCoreSpeed) {
  // A --threads 1 profile of a 2-core node timed each GEMM on one thread alone; with more
  // ranks than cores (two taking turns on each) a GEMM runs at device.shared_core_curve's
  // ratio for its working set, besides each rank's share of the cores. The other kernels,
  // and plans of up to one rank a core, do not change.
  HwProfile hw = Dgx2();
  hw.backend = "cpu";
  hw.cpu_cores = 2;
  hw.gpus_per_node = 2;
  hw.op_overhead_s = 0;
  hw.kernel_launch_s = 0;
  const ModelSpec m = SmallVocabGpt();
  PlanKnobs k = CpuKnobs(hw);
  const std::vector<int> ranks = {1, 2, 4};
  std::vector<std::vector<Op>> alone;
  for (int r : ranks) {
    k.gpus_per_node = r;
    alone.push_back(BuildForwardOps(m, hw, k, true));
  }
  // A flat 0.8: every GEMM takes 1/0.8 of its time alone; the rest of the op is unchanged.
  hw.shared_core_curve = {{1e3, 0.8}, {1e10, 0.8}};
  const double bs = static_cast<double>(k.micro_batch * k.seq_len), h = static_cast<double>(m.hidden);
  for (size_t i = 0; i < ranks.size(); ++i) {
    k.gpus_per_node = ranks[i];
    const std::vector<Op> shared = BuildForwardOps(m, hw, k, true);
    ASSERT_EQ(shared.size(), alone[i].size());
    const double share = ranks[i] > 2 ? 0.5 : 1.0;
    for (size_t j = 0; j < shared.size(); ++j) {
      const std::string& n = shared[j].name;
      SCOPED_TRACE(std::to_string(ranks[i]) + " ranks, " + n);
      const bool qkv = n.find("qkv") != std::string::npos;
      const bool gemm = qkv || n.find("proj") != std::string::npos || n.find("fc") != std::string::npos || n == "head";
      if (ranks[i] <= 2 || !gemm) {  // up to one rank a core, or no GEMM: unchanged
        EXPECT_EQ(shared[j].fwd_s, alone[i][j].fwd_s);
        EXPECT_EQ(shared[j].bwd_s, alone[i][j].bwd_s);
        continue;
      }
      if (!qkv) {
        EXPECT_GT(shared[j].fwd_s, alone[i][j].fwd_s);
        continue;
      }
      // qkv (no bias in the GEMM): the forward GEMM's time alone grows by 1/0.8 - 1.
      const double flop = 2.0 * bs * h * 3 * h;
      EXPECT_NEAR(shared[j].fwd_s - alone[i][j].fwd_s, flop / hw.GemmRate(flop, bs) * 0.25 / share, 1e-12);
      EXPECT_NEAR(shared[j].bwd_s - alone[i][j].bwd_s, 2 * flop / hw.GemmBwdRate(flop, bs) * 0.25 / share, 1e-12);
    }
  }
  // The ratio is read at the GEMM's working set: a curve falling with size slows the larger
  // GEMM (the MLP's 4h wide fc) more than the smaller (qkv, 3h wide).
  k.gpus_per_node = 4;
  hw.shared_core_curve = {{1e3, 1.0}, {1e9, 0.1}};
  const std::vector<Op> falling = BuildForwardOps(m, hw, k, true);
  auto slowdown = [&](const char* what) {
    for (size_t j = 0; j < falling.size(); ++j)
      if (falling[j].name == what) return falling[j].fwd_s / alone[2][j].fwd_s;
    return 0.0;
  };
  EXPECT_GT(slowdown("h0.mlp.fc"), slowdown("h0.attn.qkv"));
  EXPECT_GT(slowdown("h0.attn.qkv"), 1.0);
  // A CUDA profile's devices are GPUs: no shared cores; ClearCpuKernelFigures drops the
  // curve with the other kernel rates.
  HwProfile gpu = Dgx2();
  PlanKnobs g = CpuKnobs(gpu);
  g.gpus_per_node = 16;
  const std::vector<Op> gpu_ops = BuildForwardOps(m, gpu, g, true);
  gpu.shared_core_curve = {{1e3, 0.5}, {1e9, 0.5}};
  EXPECT_EQ(BuildForwardOps(m, gpu, g, true)[2].fwd_s, gpu_ops[2].fwd_s);
  hw.provenance["device.shared_core_curve"] = "measured";
  ClearCpuKernelFigures(hw);
  EXPECT_EQ(hw.SharedCoreSpeed(1e6), 1.0);
  EXPECT_FALSE(hw.provenance.count("device.shared_core_curve"));
}

TEST(TimeModel, AggregateBandwidthGrowsWithGpus) {
  // Bandwidth-centric partitioning: each GPU moves 1/dp, so the NVMe-bound time shrinks with dp.
  HwProfile hw = Dgx2();
  ModelSpec m = PaperModel(128, 25, 256);
  SearchOptions o;
  o.nodes = 1;
  PlanKnobs k1 = BaseKnobs(m, hw, o);
  k1.placement = FindStrategy("all:nvme")->placement;
  o.nodes = 8;
  PlanKnobs k8 = BaseKnobs(m, hw, o);
  k8.placement = k1.placement;
  EXPECT_LT(EstimateTime(m, hw, k8).busy_s["nvme_read"], EstimateTime(m, hw, k1).busy_s["nvme_read"] / 7.9);
}

TEST(Flops, SixTimesParamsPerToken) {
  ModelSpec m = Gpt(96, 12288, 96);
  PlanKnobs k;
  k.micro_batch = 1;
  k.seq_len = 2048;
  k.ckpt_interval = 0;
  StepFlops f = ComputeStepFlops(m, k);
  const double P = CountParams(m).blocks + 50257.0 * 12288;
  const double attn = 3.0 * 4.0 * 2048 * 2048 * 12288 * 96;
  EXPECT_NEAR(f.model, 6.0 * P * 2048 + attn, 1e6);
  EXPECT_EQ(f.recompute, 0.0);
}

}  // namespace
}  // namespace zinf
