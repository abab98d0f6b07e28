// DsConfig: the strict ds_config.json reader. Round trip against the plans zplan wrote (the
// fixtures in tests/core/data/ds_config/<strategy>/ are zplan plan outputs), "auto" values,
// warnings for unknown keys in known sections, and bad values naming file + key path.
#include "core/ds_config.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "core/plan.h"
#include "tests/core/test_util.h"

namespace zinf {
namespace {

using testing::ScratchDir;

std::string Fixture(const std::string& strategy, const std::string& file) {
  return testing::DataFile("ds_config/" + strategy + "/" + file);
}

TEST(DsConfig, ZplanOutputReadsBackToThePlansPlacementAndBatch) {
  for (const char* s : {"none", "opt-host", "opt-nvme", "params_opt-host", "params_opt-nvme", "all-nvme"}) {
    SCOPED_TRACE(s);
    Result<Plan> plan = LoadPlan(Fixture(s, "plan.yaml"));
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    Result<DsConfig> c = LoadDsConfig(Fixture(s, "ds_config.json"));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_TRUE(c->warnings.empty()) << c->warnings.front();
    Result<Placement> p = DsPlacementFor(*c, Fixture(s, "ds_config.json"));
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    const Placement& want = plan->knobs.placement;
    EXPECT_EQ(p->params, want.params);
    EXPECT_EQ(p->optimizer, want.optimizer);
    // DeepSpeed has no NVMe gradient offload: all:nvme reads back with grads on the host.
    EXPECT_EQ(p->grads, std::string(s) == "all-nvme" ? Tier::kHost : want.grads);
    EXPECT_EQ(DsStrategyName(*p), std::string(s) == "all-nvme" ? "params+opt:nvme" : [&] {
      std::string n = s;
      for (char& ch : n) ch = ch == '-' ? ':' : ch == '_' ? '+' : ch;
      return n;
    }());
    ASSERT_TRUE(c->micro_batch.known());
    EXPECT_EQ(c->micro_batch.value, plan->knobs.micro_batch);
    ASSERT_TRUE(c->grad_accum.known());
    EXPECT_EQ(c->grad_accum.value, plan->knobs.grad_accum);
    EXPECT_EQ(c->train_batch_size.value, plan->knobs.micro_batch * plan->knobs.grad_accum * plan->knobs.dp());
    EXPECT_EQ(c->aio_block_size, plan->knobs.nvme_block_size);
    EXPECT_EQ(c->aio_queue_depth, plan->knobs.nvme_queue_depth);
    if (want.params == Tier::kNvme) {
      EXPECT_EQ(c->offload_param.nvme_path, plan->knobs.nvme_dir);
    }
    if (want.optimizer == Tier::kNvme) {
      EXPECT_EQ(c->offload_optimizer.nvme_path, plan->knobs.nvme_dir);
    }
  }
}

TEST(DsConfig, AutoValuesAndUnknownKeys) {
  ScratchDir dir;
  std::string p = dir.Write("ds.json", R"({
    "train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto",
    "fp16": {"enabled": "auto", "loss_scale": 0}, "bf16": {"enabled": false},
    "optimizer": {"type": "AdamW", "params": {"lr": "auto"}}, "scheduler": {"type": "WarmupLR"},
    "steps_per_print": 10,
    "zero_optimization": {"stage": 3, "offload_param": {"device": "cpu", "pin_memory": true},
      "offload_optimizer": {"device": "nvme", "nvme_path": "/local_nvme", "fancy_new_knob": 1},
      "stage3_prefetch_bucket_size": "auto", "stage3_param_persistence_threshold": "auto",
      "reduce_bucket_size": 5e8, "stage3_max_live_parameters": 1e9, "sub_group_size": 1e9,
      "stage3_gather_16bit_weights_on_model_save": true, "overlap_comm": true, "stage3_magic": 7}
  })");
  Result<DsConfig> c = LoadDsConfig(p);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->micro_batch.is_auto);
  EXPECT_TRUE(c->train_batch_size.is_auto);
  EXPECT_EQ(c->fp16_enabled, -1);
  EXPECT_TRUE(c->stage3["stage3_prefetch_bucket_size"].is_auto);
  EXPECT_EQ(c->stage3["reduce_bucket_size"].value, 500000000);
  // Unknown keys inside zero_optimization are warnings; unknown top-level keys are DeepSpeed's.
  ASSERT_EQ(c->warnings.size(), 2u);
  EXPECT_NE(c->warnings[0].find("key 'zero_optimization.offload_optimizer.fancy_new_knob'"), std::string::npos);
  EXPECT_NE(c->warnings[0].find(p), std::string::npos);
  EXPECT_NE(c->warnings[1].find("key 'zero_optimization.stage3_magic'"), std::string::npos);
  Result<Placement> pl = DsPlacementFor(*c, p);
  ASSERT_TRUE(pl.ok());
  EXPECT_EQ(pl->params, Tier::kHost);
  EXPECT_EQ(pl->grads, Tier::kHost);
  EXPECT_EQ(pl->optimizer, Tier::kNvme);
  EXPECT_EQ(DsStrategyName(*pl), "custom");
}

TEST(DsConfig, StageBelowThreeIsNotAZinfPlan) {
  ScratchDir dir;
  for (const char* text : {R"({"zero_optimization": {"stage": 2}})", R"({"train_micro_batch_size_per_gpu": 1})"}) {
    std::string p = dir.Write("ds.json", text);
    Result<DsConfig> c = LoadDsConfig(p);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    Result<Placement> pl = DsPlacementFor(*c, p);
    ASSERT_FALSE(pl.ok());
    EXPECT_EQ(pl.status().code(), Code::kInvalidArgument);
    EXPECT_NE(pl.status().message().find(p + ": key 'zero_optimization.stage'"), std::string::npos) << pl.status().ToString();
    EXPECT_NE(pl.status().message().find("allowed: 3"), std::string::npos);
  }
}

struct BadDs {
  const char* name;
  const char* text;
  std::vector<std::string> expect;
};

class BadDsConfig : public ::testing::TestWithParam<BadDs> {};

TEST_P(BadDsConfig, NamesFileKeyAndAllowed) {
  const BadDs& c = GetParam();
  ScratchDir dir;
  std::string p = dir.Write("ds_config.json", c.text);
  std::optional<Result<DsConfig>> r;
  ASSERT_NO_THROW(r.emplace(LoadDsConfig(p)));
  ASSERT_FALSE(r->ok()) << "accepted: " << c.text;
  EXPECT_EQ(r->status().code(), Code::kInvalidArgument);
  EXPECT_NE(r->status().message().find(p), std::string::npos) << r->status().message();
  for (const auto& e : c.expect) EXPECT_NE(r->status().message().find(e), std::string::npos) << "missing '" << e << "' in: " << r->status().message();
}

const BadDs kBad[] = {
    {"Empty", "", {"file is empty"}},
    {"Syntax", "{\n  \"zero_optimization\": {\"stage\": 3,}\n}", {"JSON syntax error", "line 2"}},
    {"Truncated", "{\"zero_optimization\": {\"stage\": 3", {"JSON syntax error"}},
    {"TopLevelList", "[1, 2]", {"top level must be a JSON object"}},
    {"Duplicate", R"({"train_micro_batch_size_per_gpu": 1, "train_micro_batch_size_per_gpu": 2})", {"'train_micro_batch_size_per_gpu' appears more than once"}},
    {"StageString", R"({"zero_optimization": {"stage": "3"}})", {"key 'zero_optimization.stage'", "allowed: an integer 0 .. 3"}},
    {"StageFour", R"({"zero_optimization": {"stage": 4}})", {"key 'zero_optimization.stage'", "out of range", "allowed: an integer 0 .. 3"}},
    {"StageFloat", R"({"zero_optimization": {"stage": 2.5}})", {"key 'zero_optimization.stage'", "not an integer"}},
    {"ZeroNotObject", R"({"zero_optimization": [3]})", {"key 'zero_optimization'", "must be an object, not a list"}},
    {"OffloadNotObject", R"({"zero_optimization": {"stage": 3, "offload_param": "nvme"}})", {"key 'zero_optimization.offload_param'", "must be an object"}},
    {"DeviceUnknown", R"({"zero_optimization": {"stage": 3, "offload_param": {"device": "gpu"}}})", {"key 'zero_optimization.offload_param.device'", "allowed: none, cpu, nvme"}},
    {"DeviceNumber", R"({"zero_optimization": {"stage": 3, "offload_optimizer": {"device": 1}}})", {"key 'zero_optimization.offload_optimizer.device'", "must be a string"}},
    {"NvmeWithoutPath", R"({"zero_optimization": {"stage": 3, "offload_param": {"device": "nvme"}}})", {"key 'zero_optimization.offload_param.nvme_path'", "missing (required"}},
    {"NvmePathNumber", R"({"zero_optimization": {"stage": 3, "offload_param": {"device": "nvme", "nvme_path": 7}}})", {"key 'zero_optimization.offload_param.nvme_path'", "must be a string"}},
    {"PinMemoryString", R"({"zero_optimization": {"stage": 3, "offload_param": {"device": "cpu", "pin_memory": "yes"}}})", {"key 'zero_optimization.offload_param.pin_memory'", "must be true or false"}},
    {"BufferCountNegative", R"({"zero_optimization": {"stage": 3, "offload_param": {"device": "cpu", "buffer_count": -1}}})", {"key 'zero_optimization.offload_param.buffer_count'", "allowed: an integer 1 .. "}},
    {"BufferSizeFraction", R"({"zero_optimization": {"stage": 3, "offload_param": {"device": "cpu", "buffer_size": 1.5}}})", {"key 'zero_optimization.offload_param.buffer_size'", "not an integer"}},
    {"ParamOffloadStage2", R"({"zero_optimization": {"stage": 2, "offload_param": {"device": "cpu"}}})", {"key 'zero_optimization.offload_param'", "needs stage 3"}},
    {"AioBlockTiny", R"({"aio": {"block_size": 100}})", {"key 'aio.block_size'", "allowed: an integer 4096 .. "}},
    {"AioQueueZero", R"({"aio": {"queue_depth": 0}})", {"key 'aio.queue_depth'", "allowed: an integer 1 .. "}},
    {"AioNotObject", R"({"aio": true})", {"key 'aio'", "must be an object, not a boolean"}},
    {"MicroBatchZero", R"({"train_micro_batch_size_per_gpu": 0})", {"key 'train_micro_batch_size_per_gpu'", "allowed: an integer 1 .. 1048576 or \"auto\""}},
    {"MicroBatchWord", R"({"train_micro_batch_size_per_gpu": "big"})", {"key 'train_micro_batch_size_per_gpu'", "'big' is a string", "or \"auto\""}},
    {"MicroBatchBool", R"({"train_micro_batch_size_per_gpu": true})", {"key 'train_micro_batch_size_per_gpu'", "not a boolean"}},
    {"MicroBatchHuge", R"({"train_micro_batch_size_per_gpu": 1e300})", {"key 'train_micro_batch_size_per_gpu'", "out of range"}},
    {"AccumNull", R"({"gradient_accumulation_steps": [null]})", {"key 'gradient_accumulation_steps'", "not a list"}},
    {"BatchNotMultiple", R"({"train_batch_size": 10, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1})", {"key 'train_batch_size'", "not a multiple"}},
    {"BothPrecisions", R"({"fp16": {"enabled": true}, "bf16": {"enabled": true}})", {"key 'bf16.enabled'", "allowed: at most one"}},
    {"Fp16EnabledString", R"({"fp16": {"enabled": "yes"}})", {"key 'fp16.enabled'", "must be true or false (or \"auto\")"}},
    {"CheckpointsZero", R"({"activation_checkpointing": {"number_checkpoints": 0}})", {"key 'activation_checkpointing.number_checkpoints'", "allowed: an integer 1 .. "}},
    {"PartitionString", R"({"activation_checkpointing": {"partition_activations": "true"}})", {"key 'activation_checkpointing.partition_activations'", "must be true or false"}},
    {"Stage3KnobWord", R"({"zero_optimization": {"stage": 3, "stage3_max_live_parameters": "lots"}})", {"key 'zero_optimization.stage3_max_live_parameters'", "or \"auto\""}},
    {"SubGroupAuto", R"({"zero_optimization": {"stage": 3, "sub_group_size": "auto"}})", {"key 'zero_optimization.sub_group_size'", "allowed: an integer 0 .. "}},
};

INSTANTIATE_TEST_SUITE_P(All, BadDsConfig, ::testing::ValuesIn(kBad),
                         [](const ::testing::TestParamInfo<BadDs>& i) { return std::string(i.param.name); });

TEST(DsConfig, MissingFileAndDirectory) {
  Result<DsConfig> c = LoadDsConfig("/nonexistent/ds_config.json");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::kNotFound);
  EXPECT_NE(c.status().message().find("/nonexistent/ds_config.json"), std::string::npos);
  ScratchDir dir;
  c = LoadDsConfig(dir.path());
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace zinf
