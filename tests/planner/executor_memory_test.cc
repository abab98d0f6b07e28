// The planner's CPU-backend activation accounting against what zinf's GPT really allocates
// (the planner mirrors executor/model/gpt.cc's layout; this keeps the two in step).
#include <gtest/gtest.h>

#include "executor/backend/cpu/cpu_backend.h"
#include "executor/model/activation_store.h"
#include "executor/model/gpt.h"
#include "executor/model/param_groups.h"
#include "executor/zero3/shard_layout.h"
#include "planner/model/memory_model.h"

namespace zinf {
namespace {

double Executor(const MemoryEstimate& e) {
  double sum = 0;
  for (const MemoryItem& it : e.items)
    if (it.tier == "device" && (it.name.rfind("activations (executor", 0) == 0 || it.name.rfind("segment input", 0) == 0 ||
                                it.name.rfind("gradient scratch", 0) == 0 || it.name.rfind("activation checkpoints", 0) == 0))
      sum += it.bytes;
  return sum;
}

TEST(ExecutorMemory, PlannerMatchesGptAllocation) {
  for (int ci : {0, 1, 2}) {
    for (int batch : {2, 8}) {
      GptConfig cfg{256, 64, 4, 64, 4, 1};
      auto be = MakeCpuBackend(256u << 20, 1).value();
      DeviceActivationStore store(be.get());
      auto gpt = Gpt::Create(cfg, be.get(), &store, ci).value();
      ASSERT_TRUE(gpt->Prepare(batch).ok());
      // Checkpoints are saved during a forward pass; count their size from the layout.
      const double segs = ci > 0 && ci < cfg.n_layer ? (cfg.n_layer + ci - 1) / ci : 1;
      const double real = static_cast<double>(gpt->activation_bytes() + gpt->workspace_bytes()) +
                          4.0 * batch * cfg.seq_len * cfg.n_embd * (segs - 1);
      ModelSpec m;
      m.name = "t";
      m.n_layer = cfg.n_layer;
      m.hidden = cfg.n_embd;
      m.n_head = m.n_kv_head = cfg.n_head;
      m.ffn_hidden = 4 * cfg.n_embd;
      m.vocab = cfg.vocab;
      m.seq_len = cfg.seq_len;
      HwProfile hw;
      hw.backend = "cpu";
      PlanKnobs k;
      k.micro_batch = batch;
      k.seq_len = cfg.seq_len;
      k.dtype = "fp32";
      k.ckpt_interval = ci;
      double predicted = Executor(EstimateMemory(m, hw, k));
      EXPECT_NEAR(predicted, real, 0.02 * real) << "ci " << ci << " batch " << batch;
    }
  }
}

TEST(ExecutorMemory, PlannerMirrorsTheShardLayout) {
  for (int tile : {1, 2, 4}) {
    for (int dp : {1, 3, 4}) {
      GptConfig cfg{256, 32, 3, 64, 4, tile};
      auto layout = BuildGptParamLayout(cfg).value();
      double total = 0, largest = 0;
      for (const ParamGroup& g : layout.groups) {
        const GroupShard s = MakeGroupShard(g.numel, dp);
        total += static_cast<double>(s.shard);
        largest = std::max(largest, static_cast<double>(s.shard));
      }
      ModelSpec m;
      m.n_layer = cfg.n_layer;
      m.hidden = cfg.n_embd;
      m.n_head = cfg.n_head;
      m.vocab = cfg.vocab;
      const ExecutorShards x = ExecutorShardElems(m, cfg.seq_len, tile, dp);
      EXPECT_EQ(x.total_elems, total) << "tile " << tile << " dp " << dp;
      EXPECT_EQ(x.max_elems, largest) << "tile " << tile << " dp " << dp;
    }
  }
}

}  // namespace
}  // namespace zinf
