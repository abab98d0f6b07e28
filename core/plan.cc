#include "core/plan.h"

#include <fmt/format.h>

#include "core/field_reader.h"
#include "core/file_util.h"
#include "core/yaml_emit.h"

namespace zinf {

const char* TierName(Tier t) {
  switch (t) {
    case Tier::kDevice: return "device";
    case Tier::kHost: return "host";
    case Tier::kNvme: return "nvme";
  }
  return "?";
}

Result<Tier> ParseTier(const std::string& s) {
  if (s == "device") return Tier::kDevice;
  if (s == "host") return Tier::kHost;
  if (s == "nvme") return Tier::kNvme;
  return InvalidArgument(fmt::format("'{}' is not a tier; allowed: device, host, nvme", s));
}

namespace {

constexpr double kMaxBytes = 1e18;
const std::vector<std::string> kTiers = {"device", "host", "nvme"};

Tier ReadTier(FieldReader& r, const std::string& key, const std::vector<std::string>& allowed,
              const std::string& def) {
  return *ParseTier(r.Enum(key, allowed, def));
}

}  // namespace

Result<Plan> LoadPlan(const std::string& path) {
  ZINF_ASSIGN_OR_RETURN(YAML::Node node, LoadYamlFile(path));
  FieldReader r(node, path);
  Plan p;
  r.Enum("format", {"zinf.plan/v1"});
  FieldReader mr = r.Map("model");
  Result<ModelSpec> m = ReadModelSpec(mr);
  if (!m.ok()) return m.status();
  p.model = *m;
  ZINF_RETURN_IF_ERROR(ValidateModelSpec(p.model, path, "model."));
  FieldReader hw = r.Map("hardware");
  p.hw_name = hw.String("name");
  p.hw_path = hw.String("path", std::string(""));
  p.backend = hw.Enum("backend", {"cuda", "cpu"}, std::string("cuda"));

  PlanKnobs& k = p.knobs;
  FieldReader c = r.Map("cluster");
  k.nodes = c.Int("nodes", 1, 1 << 20);
  k.gpus_per_node = c.Int("gpus_per_node", 1, 1024);
  FieldReader t = r.Map("training");
  k.micro_batch = t.Int("micro_batch", 1, 1 << 20);
  k.grad_accum = t.Int("grad_accum", 1, 1 << 20, 1);
  k.seq_len = t.Int("seq_len", 1, 1 << 22, p.model.seq_len);
  if (p.model.position == "learned" && k.seq_len > p.model.seq_len)
    t.Fail("seq_len", fmt::format("{} exceeds the model's learned position table (model.seq_len {}); allowed: 1 .. {}",
                                  k.seq_len, p.model.seq_len, p.model.seq_len));
  k.dtype = t.Enum("dtype", {"fp16", "bf16", "fp32"}, std::string("fp16"));
  k.accounting = t.Enum("accounting", {"zero", "paper"}, std::string("zero"));
  FieldReader pl = r.Map("placement");
  k.placement.params = ReadTier(pl, "params", kTiers, "device");
  k.placement.grads = ReadTier(pl, "grads", kTiers, "device");
  k.placement.optimizer = ReadTier(pl, "optimizer", kTiers, "device");
  FieldReader ck = r.Map("checkpointing");
  k.ckpt_interval = ck.Int("interval", 0, 1 << 20, 1);
  k.ckpt_tier = ReadTier(ck, "tier", {"device", "host"}, "device");
  FieldReader tl = r.Map("tiling", true);
  k.tile_factor = tl.Int("factor", 1, 1024, 1);
  FieldReader pf = r.Map("prefetch", true);
  k.prefetch_nvme = pf.Int("nvme_depth", 0, 64, 3);
  k.prefetch_h2d = pf.Int("h2d_depth", 0, 64, 2);
  k.prefetch_allgather = pf.Int("allgather_depth", 0, 64, 1);
  FieldReader bf = r.Map("buffers", true);
  k.prefetch_buffer_bytes = bf.Bytes("prefetch", 0, kMaxBytes, 0.0);
  k.staging_bytes = bf.Bytes("staging", 0, kMaxBytes, 0.0);
  k.nvme_swap_buffer_bytes = bf.Bytes("nvme_swap_buffer", 0, kMaxBytes, 0.0);
  k.nvme_swap_buffers = bf.Int("nvme_swap_buffers", 0, 1 << 20, 0);
  k.reduce_bucket_bytes = bf.Bytes("reduce_bucket", 0, kMaxBytes, 0.0);
  k.optimizer_chunk_params = bf.Int("optimizer_chunk_params", 0, int64_t{1} << 50, 0);
  FieldReader nv = r.Map("nvme", true);
  k.nvme_dir = nv.String("dir", std::string("/tmp/zinf-nvme"));
  if (k.nvme_dir.empty()) nv.Fail("dir", "must be a non-empty directory path");
  k.nvme_block_size = nv.Int("block_size", 4096, int64_t{1} << 30, int64_t{1} << 20);
  k.nvme_queue_depth = nv.Int("queue_depth", 1, 4096, 8);
  if (k.nvme_block_size % 4096 != 0) nv.Fail("block_size", "must be a multiple of 4096");
  FieldReader bu = r.Map("budgets");
  k.device_budget_bytes = bu.Bytes("device", 1 << 20, kMaxBytes);
  k.host_budget_bytes = bu.Bytes("host", 0, kMaxBytes, 0.0);
  k.nvme_budget_bytes = bu.Bytes("nvme", 0, kMaxBytes, 0.0);
  if (k.ckpt_interval > p.model.n_layer) ck.Fail("interval", fmt::format("must be <= n_layer ({})", p.model.n_layer));

  // The prediction is informative: read what is there, never required.
  FieldReader pr = r.Map("prediction", true);
  Prediction& q = p.prediction;
  q.step_time_s = pr.Number("step_time_s", 0, 1e9, 0.0);
  q.tokens_per_s = pr.Number("tokens_per_s", 0, 1e15, 0.0);
  q.tflops_per_gpu = pr.Number("tflops_per_gpu", 0, 1e6, 0.0);
  q.efficiency = pr.Number("efficiency", 0, 1.0, 0.0);
  q.bottleneck = pr.String("bottleneck", std::string(""));
  q.model = pr.String("model", std::string(""));
  q.compute_speed = pr.Number("compute_speed", kMinSpeed, kMaxSpeed, 1.0);
  q.device_bytes = pr.Bytes("device_bytes", 0, kMaxBytes, 0.0);
  q.host_bytes = pr.Bytes("host_bytes", 0, kMaxBytes, 0.0);
  q.nvme_bytes = pr.Bytes("nvme_bytes", 0, kMaxBytes, 0.0);
  for (const char* section : {"busy_s", "phase_s"}) {
    if (!pr.Has(section)) {
      pr.Ignore(section);
      continue;
    }
    FieldReader s = pr.Map(section);
    auto& dst = std::string(section) == "busy_s" ? q.busy_s : q.phase_s;
    YAML::Node sn = node["prediction"][section];
    if (!sn.IsMap()) continue;  // s.Map() has recorded "must be a mapping"
    for (auto it = sn.begin(); it != sn.end(); ++it) {
      if (!it->first.IsScalar()) continue;  // Finish() reports it as an unknown key
      std::string key = it->first.Scalar();
      dst[key] = s.Number(key, 0, 1e9);
    }
  }
  for (FieldReader& mi : pr.MapList("memory", true)) {
    MemoryItem item;
    item.tier = mi.Enum("tier", kTiers);
    item.name = mi.String("name");
    item.bytes = mi.Bytes("bytes", 0, kMaxBytes);
    item.formula = mi.String("formula", std::string(""));
    q.memory.push_back(item);
  }
  ZINF_RETURN_IF_ERROR(r.Finish());
  return p;
}

std::string PlanToYaml(const Plan& p) {
  const PlanKnobs& k = p.knobs;
  YamlOut y;
  y.Comment("zinf plan: the schedule zrun executes and the planner's prediction for it.");
  y.Key("format", "zinf.plan/v1");
  y.Begin("model");
  WriteModelSpec(y, p.model);
  y.End();
  y.Begin("hardware");
  y.Key("name", p.hw_name);
  if (!p.hw_path.empty()) y.Key("path", p.hw_path);
  y.Key("backend", p.backend);
  y.End();
  y.Begin("cluster");
  y.Key("nodes", k.nodes);
  y.Key("gpus_per_node", k.gpus_per_node);
  y.End();
  y.Begin("training");
  y.Key("micro_batch", k.micro_batch);
  y.Key("grad_accum", k.grad_accum);
  y.Key("seq_len", k.seq_len);
  y.Key("dtype", k.dtype);
  y.Key("accounting", k.accounting);
  y.End();
  y.Begin("placement");
  y.Key("params", TierName(k.placement.params));
  y.Key("grads", TierName(k.placement.grads));
  y.Key("optimizer", TierName(k.placement.optimizer));
  y.End();
  y.Begin("checkpointing");
  y.Key("interval", k.ckpt_interval);
  y.Key("tier", TierName(k.ckpt_tier));
  y.End();
  y.Begin("tiling");
  y.Key("factor", k.tile_factor);
  y.End();
  y.Begin("prefetch");
  y.Key("nvme_depth", k.prefetch_nvme);
  y.Key("h2d_depth", k.prefetch_h2d);
  y.Key("allgather_depth", k.prefetch_allgather);
  y.End();
  y.Begin("buffers");
  y.Key("prefetch", k.prefetch_buffer_bytes);
  y.Key("staging", k.staging_bytes);
  y.Key("nvme_swap_buffer", k.nvme_swap_buffer_bytes);
  y.Key("nvme_swap_buffers", k.nvme_swap_buffers);
  y.Key("reduce_bucket", k.reduce_bucket_bytes);
  y.Key("optimizer_chunk_params", k.optimizer_chunk_params);
  y.End();
  y.Begin("nvme");
  y.Key("dir", k.nvme_dir);
  y.Key("block_size", k.nvme_block_size);
  y.Key("queue_depth", k.nvme_queue_depth);
  y.End();
  y.Begin("budgets");
  y.Key("device", k.device_budget_bytes);
  y.Key("host", k.host_budget_bytes);
  y.Key("nvme", k.nvme_budget_bytes);
  y.End();
  const Prediction& q = p.prediction;
  y.Begin("prediction");
  y.Key("model", q.model);
  y.Key("step_time_s", q.step_time_s);
  if (q.compute_speed != 1.0) y.Key("compute_speed", q.compute_speed);
  y.Key("tokens_per_s", q.tokens_per_s);
  y.Key("tflops_per_gpu", q.tflops_per_gpu);
  y.Key("efficiency", q.efficiency);
  y.Key("bottleneck", q.bottleneck);
  y.Key("device_bytes", q.device_bytes);
  y.Key("host_bytes", q.host_bytes);
  y.Key("nvme_bytes", q.nvme_bytes);
  if (!q.busy_s.empty()) {
    y.Begin("busy_s");
    for (const auto& [n, v] : q.busy_s) y.Key(n, v);
    y.End();
  }
  if (!q.phase_s.empty()) {
    y.Begin("phase_s");
    for (const auto& [n, v] : q.phase_s) y.Key(n, v);
    y.End();
  }
  if (!q.memory.empty()) {
    y.BeginList("memory");
    for (const auto& m : q.memory) {
      y.Item();
      y.Key("tier", m.tier);
      y.Key("name", m.name);
      y.Key("bytes", m.bytes);
      if (!m.formula.empty()) y.Key("formula", m.formula);
    }
    y.EndList();
  }
  y.End();
  return y.str();
}

Status SavePlan(const Plan& p, const std::string& path) { return WriteFileAtomic(path, PlanToYaml(p)); }

}  // namespace zinf
