#include "planner/cli/common.h"

#include <fmt/format.h>

#include <cstdio>

#include "core/units.h"
#include "planner/catalog.h"

namespace zinf {

int Fail(const Status& s) {
  std::fprintf(stderr, "zplan: error: %s\n", s.ToString().c_str());
  return ExitCodeFor(s);
}

void AddCommonOptions(CLI::App* app, CommonArgs& a, bool with_micro_batch) {
  app->add_option("--model,-m", a.model, "model: a shipped name (see `zplan models`), a zinf model YAML or an HF config.json")
      ->capture_default_str();
  app->add_option("--hw", a.hw, "hardware profile: a shipped name or a profile YAML")->capture_default_str();
  app->add_option("--nodes,-n", a.nodes, "number of nodes")->check(CLI::Range(int64_t{1}, int64_t{1} << 20))->capture_default_str();
  app->add_option("--gpus-per-node,-g", a.gpus_per_node, "GPUs per node (default: the profile's)")
      ->check(CLI::Range(int64_t{1}, int64_t{1024}));
  app->add_option("--seq-len", a.seq_len, "training sequence length (default: the model's)")->check(CLI::Range(int64_t{1}, int64_t{1} << 22));
  if (with_micro_batch)
    app->add_option("--micro-batch,-b", a.micro_batch, "sequences per GPU per micro-step (default: searched; estimate: 1)")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  app->add_option("--global-batch", a.global_batch, "sequences per optimizer step (sets grad accumulation)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  app->add_option("--dtype", a.dtype, "working precision (default: the profile's)")->check(CLI::IsMember({"fp16", "bf16", "fp32"}));
  app->add_option("--accounting", a.accounting, "model-state accounting: zero = 16 B/param (DeepSpeed), paper = 20 B/param (ZeRO-Infinity)")
      ->check(CLI::IsMember({"zero", "paper"}))->capture_default_str();
  app->add_option("--nvme-dir", a.nvme_dir, "directory for NVMe offload files (written into the plan)")->capture_default_str();
  app->add_option("--device-memory", a.device_memory, "device memory budget per GPU, e.g. 4GiB (default: the profile's less 5%)");
  app->add_option("--host-memory", a.host_memory, "host memory budget per node (default: the profile's less 10%)");
}

Result<Inputs> LoadInputs(const CommonArgs& a) {
  Inputs in;
  ZINF_ASSIGN_OR_RETURN(in.model_path, ResolveModelPath(a.model));
  ZINF_ASSIGN_OR_RETURN(in.hw_path, ResolveHwPath(a.hw));
  ZINF_ASSIGN_OR_RETURN(in.model, LoadModelSpec(in.model_path, a.seq_len));
  ZINF_ASSIGN_OR_RETURN(in.hw, LoadHwProfile(in.hw_path));
  SearchOptions& o = in.options;
  o.nodes = a.nodes;
  o.gpus_per_node = a.gpus_per_node;
  o.seq_len = a.seq_len;
  o.micro_batch = a.micro_batch;
  o.global_batch = a.global_batch;
  o.dtype = a.dtype;
  o.accounting = a.accounting;
  o.nvme_dir = a.nvme_dir;
  if (!a.device_memory.empty()) {
    Result<double> b = ParseBytes(a.device_memory);
    if (!b.ok()) return InvalidArgument("--device-memory: " + b.status().message());
    o.device_budget_bytes = *b;
  }
  if (!a.host_memory.empty()) {
    Result<double> b = ParseBytes(a.host_memory);
    if (!b.ok()) return InvalidArgument("--host-memory: " + b.status().message());
    o.host_budget_bytes = *b;
  }
  return in;
}

}  // namespace zinf
