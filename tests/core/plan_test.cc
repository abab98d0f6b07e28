// Plan (zinf.plan/v1): round trip of every field and rejection of bad plans.
#include "core/plan.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "tests/core/test_util.h"

namespace zinf {
namespace {

using testing::ReplaceOnce;
using testing::ScratchDir;

// A plan with every field away from its default.
Plan FullPlan() {
  Plan p;
  Result<ModelSpec> m = LoadModelSpec(testing::SourceDir() + "/models/llama2-70b.yaml");
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  if (m.ok()) p.model = *m;
  p.model.seq_len = 2048;
  p.hw_name = "dgx-a100-80g";
  p.hw_path = "hwprofiles/dgx-a100-80g.yaml";
  p.backend = "cpu";
  PlanKnobs& k = p.knobs;
  k.nodes = 4;
  k.gpus_per_node = 8;
  k.micro_batch = 3;
  k.grad_accum = 5;
  k.seq_len = 1536;
  k.dtype = "bf16";
  k.accounting = "paper";
  k.placement.params = Tier::kNvme;
  k.placement.grads = Tier::kHost;
  k.placement.optimizer = Tier::kNvme;
  k.ckpt_interval = 2;
  k.ckpt_tier = Tier::kHost;
  k.tile_factor = 4;
  k.prefetch_nvme = 5;
  k.prefetch_h2d = 3;
  k.prefetch_allgather = 2;
  k.prefetch_buffer_bytes = 1.5 * (1 << 30);
  k.staging_bytes = 256.0 * (1 << 20);
  k.nvme_swap_buffer_bytes = 64.0 * (1 << 20) + 0.5;
  k.nvme_swap_buffers = 6;
  k.reduce_bucket_bytes = 5e8;
  k.optimizer_chunk_params = 200000000;
  k.nvme_dir = "/mnt/nvme 0/zinf";
  k.nvme_block_size = 4 << 20;
  k.nvme_queue_depth = 32;
  k.device_budget_bytes = 79.5 * (1 << 30);
  k.host_budget_bytes = 1.9e12;
  k.nvme_budget_bytes = 28e12;
  Prediction& q = p.prediction;
  q.model = "simulated";
  q.step_time_s = 12.345678901234;
  q.tokens_per_s = 1.0 / 3.0 * 1e5;
  q.tflops_per_gpu = 153.25;
  q.efficiency = 0.8125;
  q.compute_speed = 0.8437;
  q.bottleneck = "nvme_read";
  q.device_bytes = 7.7e10;
  q.host_bytes = 1.2e12;
  q.nvme_bytes = 2.2e12;
  q.busy_s = {{"compute", 10.5}, {"h2d", 3.25}, {"nvme_read", 11.0}, {"network", 0.1}};
  q.phase_s = {{"forward", 3.0}, {"backward", 7.0}, {"optimizer", 2.345678901234}};
  q.memory = {{"device", "params working set", 1.5e9, "4*hd*4hd*2"},
              {"host", "pinned staging", 2.68435456e8, ""},
              {"nvme", "optimizer states: \"m, v\"", 1.1e12, "16*params/dp"}};
  return p;
}

void ExpectSamePlan(const Plan& a, const Plan& b) {
  EXPECT_EQ(PlanToYaml(a), PlanToYaml(b));
  EXPECT_EQ(ModelSpecToYaml(a.model), ModelSpecToYaml(b.model));
  EXPECT_EQ(a.hw_name, b.hw_name);
  EXPECT_EQ(a.hw_path, b.hw_path);
  EXPECT_EQ(a.backend, b.backend);
  const PlanKnobs &x = a.knobs, &y = b.knobs;
  EXPECT_EQ(x.nodes, y.nodes);
  EXPECT_EQ(x.gpus_per_node, y.gpus_per_node);
  EXPECT_EQ(x.micro_batch, y.micro_batch);
  EXPECT_EQ(x.grad_accum, y.grad_accum);
  EXPECT_EQ(x.seq_len, y.seq_len);
  EXPECT_EQ(x.dtype, y.dtype);
  EXPECT_EQ(x.accounting, y.accounting);
  EXPECT_EQ(x.placement.params, y.placement.params);
  EXPECT_EQ(x.placement.grads, y.placement.grads);
  EXPECT_EQ(x.placement.optimizer, y.placement.optimizer);
  EXPECT_EQ(x.ckpt_interval, y.ckpt_interval);
  EXPECT_EQ(x.ckpt_tier, y.ckpt_tier);
  EXPECT_EQ(x.tile_factor, y.tile_factor);
  EXPECT_EQ(x.prefetch_nvme, y.prefetch_nvme);
  EXPECT_EQ(x.prefetch_h2d, y.prefetch_h2d);
  EXPECT_EQ(x.prefetch_allgather, y.prefetch_allgather);
  EXPECT_EQ(x.prefetch_buffer_bytes, y.prefetch_buffer_bytes);
  EXPECT_EQ(x.staging_bytes, y.staging_bytes);
  EXPECT_EQ(x.nvme_swap_buffer_bytes, y.nvme_swap_buffer_bytes);
  EXPECT_EQ(x.nvme_swap_buffers, y.nvme_swap_buffers);
  EXPECT_EQ(x.reduce_bucket_bytes, y.reduce_bucket_bytes);
  EXPECT_EQ(x.optimizer_chunk_params, y.optimizer_chunk_params);
  EXPECT_EQ(x.nvme_dir, y.nvme_dir);
  EXPECT_EQ(x.nvme_block_size, y.nvme_block_size);
  EXPECT_EQ(x.nvme_queue_depth, y.nvme_queue_depth);
  EXPECT_EQ(x.device_budget_bytes, y.device_budget_bytes);
  EXPECT_EQ(x.host_budget_bytes, y.host_budget_bytes);
  EXPECT_EQ(x.nvme_budget_bytes, y.nvme_budget_bytes);
  const Prediction &p = a.prediction, &q = b.prediction;
  EXPECT_EQ(p.model, q.model);
  EXPECT_EQ(p.step_time_s, q.step_time_s);
  EXPECT_EQ(p.tokens_per_s, q.tokens_per_s);
  EXPECT_EQ(p.tflops_per_gpu, q.tflops_per_gpu);
  EXPECT_EQ(p.efficiency, q.efficiency);
  EXPECT_EQ(p.compute_speed, q.compute_speed);
  EXPECT_EQ(p.bottleneck, q.bottleneck);
  EXPECT_EQ(p.device_bytes, q.device_bytes);
  EXPECT_EQ(p.host_bytes, q.host_bytes);
  EXPECT_EQ(p.nvme_bytes, q.nvme_bytes);
  EXPECT_EQ(p.busy_s, q.busy_s);
  EXPECT_EQ(p.phase_s, q.phase_s);
  ASSERT_EQ(p.memory.size(), q.memory.size());
  for (size_t i = 0; i < p.memory.size(); ++i) {
    EXPECT_EQ(p.memory[i].tier, q.memory[i].tier);
    EXPECT_EQ(p.memory[i].name, q.memory[i].name);
    EXPECT_EQ(p.memory[i].bytes, q.memory[i].bytes);
    EXPECT_EQ(p.memory[i].formula, q.memory[i].formula);
  }
}

TEST(Plan, RoundTripsEveryField) {
  ScratchDir dir;
  Plan a = FullPlan();
  ASSERT_TRUE(SavePlan(a, dir.File("plan.yaml")).ok());
  Result<Plan> b = LoadPlan(dir.File("plan.yaml"));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ExpectSamePlan(a, *b);
  EXPECT_EQ(b->knobs.dp(), 32);
  EXPECT_EQ(dir.List(), std::vector<std::string>{"plan.yaml"});
}

// A sanitizer build calibrates at ~0.01x a release build's profile (CI, stop 40: 0.0094);
// every speed zplan may write must read back, at both ends of the range.
TEST(Plan, ExtremeComputeSpeedsRoundTrip) {
  for (double speed : {kMinSpeed, 0.0094, kMaxSpeed}) {
    ScratchDir dir;
    Plan a = FullPlan();
    a.prediction.compute_speed = speed;
    ASSERT_TRUE(SavePlan(a, dir.File("plan.yaml")).ok());
    Result<Plan> b = LoadPlan(dir.File("plan.yaml"));
    ASSERT_TRUE(b.ok()) << speed << ": " << b.status().ToString();
    EXPECT_EQ(b->prediction.compute_speed, speed);
  }
}

TEST(Plan, DefaultPlanRoundTrips) {
  Plan a;
  Result<ModelSpec> m = LoadModelSpec(testing::SourceDir() + "/models/tiny.yaml");
  ASSERT_TRUE(m.ok());
  a.model = *m;
  a.hw_name = "cpu";
  a.knobs.seq_len = a.model.seq_len;
  a.knobs.device_budget_bytes = 64.0 * (1 << 20);
  ScratchDir dir;
  ASSERT_TRUE(SavePlan(a, dir.File("p.yaml")).ok());
  Result<Plan> b = LoadPlan(dir.File("p.yaml"));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ExpectSamePlan(a, *b);
}

TEST(Plan, OptionalSectionsTakeDefaults) {
  ScratchDir dir;
  std::string p = dir.Write("min.yaml", R"(format: zinf.plan/v1
model: {name: m, n_layer: 4, hidden: 128, n_head: 4, vocab: 256, seq_len: 128}
hardware: {name: box}
cluster: {nodes: 1, gpus_per_node: 2}
training: {micro_batch: 8}
placement: {}
checkpointing: {}
budgets: {device: 1GiB}
)");
  Result<Plan> r = LoadPlan(p);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const PlanKnobs& k = r->knobs;
  EXPECT_EQ(r->backend, "cuda");
  EXPECT_EQ(r->hw_path, "");
  EXPECT_EQ(k.grad_accum, 1);
  EXPECT_EQ(k.seq_len, 128);  // from the model
  EXPECT_EQ(k.dtype, "fp16");
  EXPECT_EQ(k.accounting, "zero");
  EXPECT_EQ(k.placement.params, Tier::kDevice);
  EXPECT_EQ(k.ckpt_interval, 1);
  EXPECT_EQ(k.ckpt_tier, Tier::kDevice);
  EXPECT_EQ(k.tile_factor, 1);
  EXPECT_EQ(k.prefetch_nvme, 3);
  EXPECT_EQ(k.prefetch_h2d, 2);
  EXPECT_EQ(k.prefetch_allgather, 1);
  EXPECT_EQ(k.nvme_dir, "/tmp/zinf-nvme");
  EXPECT_EQ(k.nvme_block_size, 1 << 20);
  EXPECT_EQ(k.nvme_queue_depth, 8);
  EXPECT_EQ(k.device_budget_bytes, double(1 << 30));
  EXPECT_EQ(k.host_budget_bytes, 0);
  EXPECT_EQ(r->prediction.model, "");
  EXPECT_TRUE(r->prediction.memory.empty());
}

TEST(Tier, NamesAndParsing) {
  for (Tier t : {Tier::kDevice, Tier::kHost, Tier::kNvme}) {
    Result<Tier> r = ParseTier(TierName(t));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(*r, t);
  }
  Result<Tier> bad = ParseTier("gpu");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("allowed: device, host, nvme"), std::string::npos);
}

struct BadCase {
  std::string from, to, expect;
};

class BadPlan : public ::testing::Test {
 protected:
  void SetUp() override { good_ = PlanToYaml(FullPlan()); }
  void Expect(const BadCase& c) {
    SCOPED_TRACE(c.to);
    std::string p = dir_.Write("bad-plan.yaml", ReplaceOnce(good_, c.from, c.to));
    std::optional<Result<Plan>> r;
    ASSERT_NO_THROW(r.emplace(LoadPlan(p)));
    ASSERT_FALSE(r->ok());
    EXPECT_EQ(r->status().code(), Code::kInvalidArgument);
    EXPECT_NE(r->status().message().find(p), std::string::npos) << r->status().message();
    EXPECT_NE(r->status().message().find(c.expect), std::string::npos) << r->status().message();
  }
  ScratchDir dir_;
  std::string good_;
};

TEST_F(BadPlan, NegativeMicroBatch) {
  Expect({"micro_batch: 3", "micro_batch: -1", "key 'training.micro_batch': value -1 is out of range"});
}

TEST_F(BadPlan, UnknownTier) {
  Expect({"params: nvme", "params: gpu", "key 'placement.params': 'gpu' is not allowed; allowed: device, host, nvme"});
  Expect({"tier: host", "tier: nvme", "key 'checkpointing.tier': 'nvme' is not allowed; allowed: device, host"});
  Expect({"  - tier: device", "  - tier: disk", "key 'prediction.memory[0].tier': 'disk' is not allowed"});
}

TEST_F(BadPlan, UnknownTierAfterAnEarlierErrorDoesNotCrash) {
  std::string text = ReplaceOnce(good_, "micro_batch: 3", "micro_batch: -1");
  text = ReplaceOnce(text, "params: nvme", "params: gpu");
  text = ReplaceOnce(text, "tier: host", "tier: tape");
  std::string p = dir_.Write("bad.yaml", text);
  std::optional<Result<Plan>> r;
  ASSERT_NO_THROW(r.emplace(LoadPlan(p)));
  ASSERT_FALSE(r->ok());
  EXPECT_NE(r->status().message().find("training.micro_batch"), std::string::npos) << r->status().message();
}

TEST_F(BadPlan, CheckpointIntervalAboveLayers) {
  Expect({"interval: 2", "interval: 81", "key 'checkpointing.interval': must be <= n_layer (80)"});
}

TEST_F(BadPlan, UnknownKeys) {
  Expect({"grad_accum: 5", "grad_accum: 5\n  grad_acum: 5", "unknown key 'training.grad_acum'"});
  Expect({"format: zinf.plan/v1", "format: zinf.plan/v1\nextra: 1", "unknown key 'extra'; allowed here:"});
  Expect({"  n_layer: 80", "  n_layer: 80\n  n_layers: 80", "unknown key 'model.n_layers'"});
  Expect({"    compute: 10.5", "    compute: 10.5\n    bogus: {a: 1}", "key 'prediction.busy_s.bogus': must be a number"});
}

TEST_F(BadPlan, WrongFormatVersion) {
  Expect({"format: zinf.plan/v1", "format: zinf.plan/v2", "key 'format': 'zinf.plan/v2' is not allowed; allowed: zinf.plan/v1"});
  Expect({"format: zinf.plan/v1\n", "", "key 'format': missing (required)"});
  Expect({"  format: zinf.model/v1", "  format: zinf.model/v0", "key 'model.format'"});
}

TEST_F(BadPlan, OtherBadValues) {
  Expect({"nodes: 4", "nodes: 0", "key 'cluster.nodes'"});
  Expect({"dtype: bf16", "dtype: fp8", "key 'training.dtype'"});
  Expect({"accounting: paper", "accounting: deepspeed", "key 'training.accounting'"});
  Expect({"block_size: 4194304", "block_size: 5000", "key 'nvme.block_size': must be a multiple of 4096"});
  Expect({"factor: 4", "factor: 0", "key 'tiling.factor'"});
  Expect({"nvme_depth: 5", "nvme_depth: 100", "key 'prefetch.nvme_depth'"});
  Expect({"efficiency: 0.8125", "efficiency: 1.5", "key 'prediction.efficiency'"});
  Expect({"compute_speed: 0.8437", "compute_speed: 0", "key 'prediction.compute_speed'"});
  Expect({"compute_speed: 0.8437", "compute_speed: 1e-7", "key 'prediction.compute_speed'"});
  Expect({"compute_speed: 0.8437", "compute_speed: 2e6", "key 'prediction.compute_speed'"});
  Expect({"hidden: 8192", "hidden: 8190", "key 'model.hidden': 8190 is not divisible by n_head 64"});
  Expect({"budgets:\n  device: ", "budgets:\n  device: 12 parsecs\n  old: ", "key 'budgets.device': '12 parsecs'"});
  Expect({"  compute: 10.5\n", "  compute: [1]\n", "key 'prediction.busy_s.compute': must be a number"});
  Expect({"busy_s:\n", "busy_s: [1, 2]\n  old_busy:\n", "key 'prediction.busy_s': must be a mapping"});
  Expect({"phase_s:\n", "phase_s: 5\n  old_phase:\n", "key 'prediction.phase_s': must be a mapping"});
}

TEST_F(BadPlan, MissingSections) {
  Expect({"cluster:", "clusters:", "key 'cluster': missing (required)"});
  Expect({"budgets:", "budget:", "key 'budgets': missing (required)"});
}

TEST_F(BadPlan, TruncatedFiles) {
  // Cut anywhere before the last required value: always rejected, never a crash. (Cutting inside
  // the optional prediction section can leave a valid plan: the format has no end marker; files
  // are written atomically instead.)
  size_t end = good_.find("\nbudgets:");
  ASSERT_NE(end, std::string::npos);
  for (size_t cut = 0; cut <= end; cut += 37) {
    SCOPED_TRACE(good_.substr(0, cut));
    std::string p = dir_.Write("cut.yaml", good_.substr(0, cut));
    std::optional<Result<Plan>> r;
    ASSERT_NO_THROW(r.emplace(LoadPlan(p)));
    ASSERT_FALSE(r->ok());
    EXPECT_NE(r->status().message().find(p), std::string::npos) << r->status().message();
  }
  // A cut in the middle of a quoted string is a syntax error with line:col.
  size_t q = good_.find("\"/mnt/nvme 0");
  ASSERT_NE(q, std::string::npos);
  std::string p = dir_.Write("cut.yaml", good_.substr(0, q + 6));
  Result<Plan> r = LoadPlan(p);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("syntax error"), std::string::npos) << r.status().message();
}

TEST(Plan, MissingFile) {
  Result<Plan> r = LoadPlan("/nonexistent/zinf/plan.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kNotFound);
  EXPECT_NE(r.status().message().find("/nonexistent/zinf/plan.yaml"), std::string::npos);
}

}  // namespace
}  // namespace zinf
