// The analytic memory model against the ZeRO-Infinity paper's closed forms and table values.
#include "planner/model/memory_model.h"
#include "planner/model/deepspeed_estimate.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/units.h"
#include "test_fixtures.h"

namespace zinf {
namespace {

using testing::PaperModel;

struct PaperRow {
  int64_t layers, hidden_k, heads;
  double model_states_tib;  // paper table, TB = TiB here (20 B/param)
  double ckpt_tib;          // bsz 32, seq 1024, ci 1
  double mswm_gib;          // model-state working memory per GPU
};

// The paper's table (Figure 2a). The 0.1T row's working memory (1.95 GB) does not follow its
// own 4*hd*4hd formula (1.5625 GiB for hd = 10K); we check the formula there.
const PaperRow kRows[] = {
    {80, 10, 128, 1.83, 0.05, 1.5625},
    {100, 20, 160, 9.16, 0.12, 6.25},
    {128, 25, 256, 18.31, 0.20, 9.77},
    {195, 64, 512, 182.81, 0.76, 64.0},
    {315, 160, 1024, 1845.70, 3.08, 400.0},
};

TEST(PaperFormulas, ModelStatesMatchTable) {
  for (const auto& r : kRows) {
    ModelSpec m = PaperModel(r.layers, r.hidden_k, r.heads);
    EXPECT_NEAR(PaperModelStateBytes(m) / kTiB, r.model_states_tib, r.model_states_tib * 0.003) << r.layers;
  }
}

TEST(PaperFormulas, CheckpointsMatchTable) {
  for (const auto& r : kRows) {
    ModelSpec m = PaperModel(r.layers, r.hidden_k, r.heads);
    // Table values are rounded to two decimals.
    EXPECT_NEAR(PaperCheckpointBytes(m, 32, 1) / kTiB, r.ckpt_tib, 0.006) << r.layers;
  }
}

TEST(PaperFormulas, ModelStateWorkingMemoryMatchesTable) {
  for (const auto& r : kRows) {
    ModelSpec m = PaperModel(r.layers, r.hidden_k, r.heads);
    EXPECT_NEAR(PaperModelStateWorkingBytes(m) / kGiB, r.mswm_gib, 0.01) << r.layers;
  }
}

TEST(PaperFormulas, HandComputedOneTrillion) {
  ModelSpec m = PaperModel(128, 25, 256);
  const double hd = 25600;
  EXPECT_DOUBLE_EQ(CountParams(m).paper_blocks, 12.0 * 128 * hd * hd);
  EXPECT_DOUBLE_EQ(PaperModelStateBytes(m), 20.0 * 12.0 * 128 * hd * hd);
  EXPECT_DOUBLE_EQ(PaperActivationWorkingBytes(m, 32, 1), 32.0 * 1024 * 1 * (16 * hd + 2 * 256 * 1024));
}

TEST(StateBytes, Accountings) {
  EXPECT_DOUBLE_EQ(StateBytesFor("fp16", "zero").total(), 16.0);
  EXPECT_DOUBLE_EQ(StateBytesFor("fp16", "paper").total(), 20.0);
  EXPECT_DOUBLE_EQ(StateBytesFor("bf16", "zero").total(), 16.0);
  // fp32 working precision: params are the master copy.
  EXPECT_DOUBLE_EQ(StateBytesFor("fp32", "zero").total(), 16.0);
  EXPECT_DOUBLE_EQ(StateBytesFor("fp32", "zero").param, 4.0);
}

PlanKnobs Knobs(int64_t nodes, int64_t gpus, Placement pl) {
  PlanKnobs k;
  k.nodes = nodes;
  k.gpus_per_node = gpus;
  k.micro_batch = 1;
  k.seq_len = 1024;
  k.placement = pl;
  k.ckpt_interval = 1;
  k.prefetch_allgather = 0;
  return k;
}

double ItemBytes(const MemoryEstimate& e, const std::string& prefix, const std::string& tier) {
  double sum = 0;
  for (const auto& it : e.items)
    if (it.name.rfind(prefix, 0) == 0 && it.tier == tier) sum += it.bytes;
  return sum;
}

TEST(EstimateMemory, ShardsFollowPlacementAndDp) {
  ModelSpec m = PaperModel(128, 25, 256);
  const double P = CountParams(m).total;
  using T = Tier;
  // Everything on NVMe, 32 nodes x 16 GPUs: per node NVMe holds 16/512 of the 16 B/param states.
  PlanKnobs k = Knobs(32, 16, {T::kNvme, T::kNvme, T::kNvme});
  MemoryEstimate e = EstimateMemory(m, testing::Dgx2(), k);
  EXPECT_NEAR(e.nvme_bytes, 16.0 * P / 512 * 16, 1.0);
  EXPECT_NEAR(ItemBytes(e, "parameter shards", "nvme"), 2.0 * P / 32, 1.0);
  // Nothing offloaded on 1 GPU: 16 B/param on the device.
  PlanKnobs k1 = Knobs(1, 1, {T::kDevice, T::kDevice, T::kDevice});
  MemoryEstimate e1 = EstimateMemory(m, testing::Dgx2(), k1);
  EXPECT_NEAR(ItemBytes(e1, "parameter shards", "device") + ItemBytes(e1, "gradient shards", "device") +
                  ItemBytes(e1, "optimizer states", "device"),
              16.0 * P, 1.0);
  EXPECT_EQ(e1.host_bytes, 0.0);
  EXPECT_EQ(e1.nvme_bytes, 0.0);
}

TEST(EstimateMemory, CheckpointsAndTiling) {
  ModelSpec m = PaperModel(128, 25, 256);
  PlanKnobs k = Knobs(1, 16, {Tier::kNvme, Tier::kNvme, Tier::kNvme});
  k.micro_batch = 32;
  k.dtype = "fp16";
  MemoryEstimate e = EstimateMemory(m, testing::Dgx2(), k);
  EXPECT_DOUBLE_EQ(ItemBytes(e, "activation checkpoints", "device"), PaperCheckpointBytes(m, 32, 1));
  EXPECT_DOUBLE_EQ(ItemBytes(e, "activation working memory", "device"), PaperActivationWorkingBytes(m, 32, 1));
  k.ckpt_tier = Tier::kHost;
  MemoryEstimate eh = EstimateMemory(m, testing::Dgx2(), k);
  EXPECT_EQ(ItemBytes(eh, "activation checkpoints", "device"), 0.0);
  EXPECT_DOUBLE_EQ(ItemBytes(eh, "activation checkpoints", "host"), 16 * PaperCheckpointBytes(m, 32, 1));
  // Tiling 4: the largest linear's working memory drops 4x, unless the embedding dominates.
  const OpSizes ops = ComputeOpSizes(m);
  PlanKnobs kt = k;
  kt.tile_factor = 4;
  MemoryEstimate et = EstimateMemory(m, testing::Dgx2(), kt);
  EXPECT_DOUBLE_EQ(ItemBytes(e, "model-state working", "device"), 2 * 2 * ops.largest_linear);
  EXPECT_DOUBLE_EQ(ItemBytes(et, "model-state working", "device"), 2 * 2 * std::max(ops.largest_linear / 4, ops.embedding));
}

}  // namespace
}  // namespace zinf

namespace zinf {
namespace {

// DeepSpeed's estimate_zero3 closed forms, and where zinf's accounting agrees with them.
// zinf's executor: fetch buffers of consecutive ops (the current one and its prefetched
// successors), sized by the groups they really are, not all as the largest.
TEST(EstimateMemory, ExecutorFetchBuffersFollowTheSchedule) {
  ModelSpec m = testing::Gpt(2, 512, 8, 256);
  m.vocab = 256;
  const double C = 512;
  auto pad = [](double n) { return std::ceil(n / 1024) * 1024; };
  const double fc = pad(4 * C * C + 4 * C), mproj = pad(4 * C * C + C), ln = pad(2 * C);
  EXPECT_DOUBLE_EQ(ExecutorFetchWindowElems(m, 256, 1, 1, 1), fc);
  EXPECT_DOUBLE_EQ(ExecutorFetchWindowElems(m, 256, 1, 1, 2), fc + mproj);
  EXPECT_DOUBLE_EQ(ExecutorFetchWindowElems(m, 256, 1, 1, 3), ln + fc + mproj);
  // Tiled in two: two tiles of fc then two of mproj.
  EXPECT_DOUBLE_EQ(ExecutorFetchWindowElems(m, 256, 2, 1, 2), 2 * pad(2 * C * C + 2 * C));
  // Four ranks: each group padded per rank, gathered whole.
  EXPECT_DOUBLE_EQ(ExecutorFetchWindowElems(m, 256, 1, 4, 1), 4 * pad((4 * C * C + 4 * C) / 4));

  HwProfile hw;
  hw.backend = "cpu";
  PlanKnobs k;
  k.micro_batch = 1;
  k.seq_len = 256;
  k.dtype = "fp32";
  k.prefetch_allgather = 1;
  k.prefetch_h2d = 1;
  auto item = [&](const char* name) {
    for (const MemoryItem& it : EstimateMemory(m, hw, k).items)
      if (it.name == name) return it.bytes;
    return 0.0;
  };
  // One rank, params on the device: used in place, nothing fetched.
  EXPECT_EQ(item("fetched parameter buffers (executor)"), 0.0);
  // Backward: while fc's gradient is written, mlp.proj's and ln_f's wait for their reduce (the
  // bucket, unset, holds the largest group: fc's release will wait for both).
  EXPECT_DOUBLE_EQ(item("gradient buffers (executor: the current op's and those in flight)"), 4 * (fc + mproj + ln));
  EXPECT_EQ(item("gradient reduce-scatter bucket"), 0.0);  // folded in: the bucket bounds those in flight
  // A bucket of every gradient: none waits, so at the last op all of backward's are held.
  const double ln_f_to_embed = [&] {
    const double embed = pad(256 * C + 256 * C), qkv = pad(3 * C * C + 3 * C), proj = pad(C * C + C);
    return 2 * embed + ln + 2 * (mproj + fc + ln + proj + qkv + ln);
  }();
  EXPECT_DOUBLE_EQ(ExecutorWorkingElems(m, 256, 1, 1, 0, 1e12).grad_elems, ln_f_to_embed);
  EXPECT_DOUBLE_EQ(ExecutorWorkingElems(m, 256, 1, 1, 0, 1e12).fetched_elems, 0.0);
  // One fetch buffer ahead, a bucket of the largest group: the most is at the first layer's
  // mlp.proj in backward (itself and fc fetched; its gradient, and the second layer's qkv and
  // ln1 still in flight).
  const ExecutorWorkingSet w2 = ExecutorWorkingElems(m, 256, 1, 1, 2, fc);
  EXPECT_DOUBLE_EQ(w2.fetched_elems, mproj + fc);
  EXPECT_DOUBLE_EQ(w2.grad_elems, mproj + pad(3 * C * C + 3 * C) + ln);
  // Params on the host: the current op and one ahead, copied into their own buffers.
  k.placement.params = Tier::kHost;
  EXPECT_DOUBLE_EQ(item("fetched parameter buffers (executor)"), 4 * (fc + mproj));
  EXPECT_EQ(item("H2D prefetch (param shards)"), 0.0);  // one rank: the copy lands in the fetch buffer

  // Several ranks with params off the device: each op's shard copied ahead waits in a device
  // buffer of its own until its op begins, so the h2d_depth ops after the peak op hold theirs,
  // sized as they are (not all as the largest).
  const auto at = [&](int64_t shards) { return ExecutorWorkingElems(m, 256, 1, 4, 2, 1e12, shards); };
  EXPECT_EQ(at(0).shard_elems, 0.0);
  const double largest = pad((4 * C * C + 4 * C) / 4);
  for (int64_t d : {1, 2, 3}) {
    const ExecutorWorkingSet w = at(d);
    EXPECT_GT(w.shard_elems, 0.0) << d;
    EXPECT_LE(w.shard_elems, static_cast<double>(d) * largest) << d;
    EXPECT_GE(w.fetched_elems + w.grad_elems + w.shard_elems, at(d - 1).fetched_elems + at(d - 1).grad_elems + at(d - 1).shard_elems) << d;
  }
  k.gpus_per_node = 4;
  k.prefetch_h2d = 2;
  ASSERT_EQ(k.reduce_bucket_bytes, 0);  // unset: the bucket holds the largest group, gathered
  const ExecutorWorkingSet w = ExecutorWorkingElems(m, 256, 1, 4, 2, 4 * largest, 2);
  EXPECT_DOUBLE_EQ(item("H2D prefetch (param shards)"), 4 * w.shard_elems);
  EXPECT_LT(item("H2D prefetch (param shards)"), 2 * 4 * largest);  // the largest shard then an LN's
}

TEST(DeepSpeedEstimate, ClosedFormsAndAgreement) {
  const double P = 1e9, L = 1e7;
  auto rows = DeepSpeedZero3Estimate(P, L, 8, 2);
  ASSERT_EQ(rows.size(), 6u);
  // zero_init = 1 rows first: both offloaded, optimizer only, nothing.
  EXPECT_DOUBLE_EQ(rows[0].gpu_bytes, 4 * L);
  EXPECT_DOUBLE_EQ(rows[0].cpu_bytes, 18 * P / 2 * 1.5);
  EXPECT_DOUBLE_EQ(rows[1].gpu_bytes, 4 * L + 2 * P / 16);
  EXPECT_DOUBLE_EQ(rows[2].gpu_bytes, 4 * L + 18 * P / 16);
  EXPECT_DOUBLE_EQ(rows[5].cpu_bytes, 4 * P * 8 * 1.5);
  // Where the assumptions agree (fp16, the largest layer's p+g gathered), zinf's
  // model-state working memory is DeepSpeed's 4L, and its device shards with the optimizer
  // offloaded are DeepSpeed's 2P/G fp16 params (grads go to the host with the optimizer).
  ModelSpec m = testing::PaperModel(80, 10, 128);
  const OpSizes ops = ComputeOpSizes(m);
  const double Lm = std::max(ops.largest_linear, ops.embedding);
  PlanKnobs k = Knobs(2, 8, {Tier::kDevice, Tier::kHost, Tier::kHost});
  MemoryEstimate e = EstimateMemory(m, testing::Dgx2(), k);
  auto ds = DeepSpeedZero3Estimate(CountParams(m).total, Lm, 8, 2);
  EXPECT_DOUBLE_EQ(ItemBytes(e, "model-state working", "device"), ds[0].gpu_bytes);
  EXPECT_DOUBLE_EQ(ItemBytes(e, "parameter shards", "device") + ItemBytes(e, "model-state working", "device"), ds[1].gpu_bytes);
}

}  // namespace
}  // namespace zinf
