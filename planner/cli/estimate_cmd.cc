// zplan estimate: memory per tier for every placement, the accounting spelled out, and the
// paper's and DeepSpeed's closed forms beside zinf's.
#include <fmt/format.h>

#include <cstdio>
#include <optional>
#include <vector>

#include "core/ds_config.h"
#include "core/units.h"
#include "planner/cli/commands.h"
#include "planner/model/deepspeed_estimate.h"
#include "planner/model/memory_model.h"
#include "planner/search/evaluate.h"

namespace zinf {
namespace {

struct EstimateArgs {
  CommonArgs common;
  int64_t ckpt_interval = 1;
  std::string ckpt_tier = "device";
  int64_t tile = 1;
  bool details = false;
  std::string ds_config;  // DeepSpeed ds_config.json: strategy, micro-batch, dtype, checkpoints from it
};

int RunEstimate(const EstimateArgs& a) {
  Result<Inputs> in = LoadInputs(a.common);
  if (!in.ok()) return Fail(in.status());
  const ModelSpec& m = in->model;
  const HwProfile& hw = in->hw;
  if (a.ckpt_interval > m.n_layer)
    return Fail(InvalidArgument(fmt::format("--ckpt-interval {} exceeds the model's {} layers", a.ckpt_interval, m.n_layer)));
  SearchOptions o = in->options;
  // --ds-config: what a DeepSpeed config asks for (ZeRO-3 placement, micro-batch, precision,
  // activation checkpoints) replaces the corresponding options; "auto" keeps zinf's default.
  std::optional<Placement> ds_placement;
  std::optional<DsConfig> ds;
  if (!a.ds_config.empty()) {
    Result<DsConfig> c = LoadDsConfig(a.ds_config);
    if (!c.ok()) return Fail(c.status());
    for (const std::string& w : c->warnings) std::fprintf(stderr, "zplan: warning: %s\n", w.c_str());
    Result<Placement> pl = DsPlacementFor(*c, a.ds_config);
    if (!pl.ok()) return Fail(pl.status());
    ds_placement = *pl;
    if (c->micro_batch.known()) o.micro_batch = c->micro_batch.value;
    if (c->fp16_enabled == 1) o.dtype = "fp16";
    else if (c->bf16_enabled == 1) o.dtype = "bf16";
    else if (c->fp16_enabled == 0 && c->bf16_enabled == 0 && o.dtype.empty()) o.dtype = "fp32";
    ds = *c;
  }
  PlanKnobs base = BaseKnobs(m, hw, o);
  base.micro_batch = o.micro_batch > 0 ? o.micro_batch : 1;
  base.grad_accum = o.global_batch > 0 ? std::max<int64_t>(1, o.global_batch / (base.micro_batch * base.dp())) : 1;
  base.ckpt_interval = a.ckpt_interval;
  base.ckpt_tier = *ParseTier(a.ckpt_tier);
  base.tile_factor = a.tile;
  if (ds) {
    if (ds->grad_accum.known()) base.grad_accum = ds->grad_accum.value;
    if (ds->has_aio) {
      base.nvme_block_size = ds->aio_block_size;
      base.nvme_queue_depth = ds->aio_queue_depth;
    }
    if (ds->has_activation_checkpointing && ds->number_checkpoints.known()) {
      const int64_t nc = std::min<int64_t>(ds->number_checkpoints.value, m.n_layer);
      base.ckpt_interval = (m.n_layer + nc - 1) / nc;
    }
    if (ds->has_activation_checkpointing) base.ckpt_tier = ds->cpu_checkpointing ? Tier::kHost : Tier::kDevice;
    const Placement& pl = *ds_placement;
    std::printf("DeepSpeed config %s: ZeRO stage 3, offload_param %s, offload_optimizer %s -> zinf strategy %s "
                "(params %s, grads %s, optimizer %s), micro_batch %lld%s, grad_accum %lld, %s\n",
                a.ds_config.c_str(), ds->offload_param.device.c_str(), ds->offload_optimizer.device.c_str(),
                DsStrategyName(pl).c_str(), TierName(pl.params), TierName(pl.grads), TierName(pl.optimizer),
                (long long)base.micro_batch, ds->micro_batch.is_auto ? " (\"auto\": zinf's default)" : "",
                (long long)base.grad_accum, o.dtype.empty() ? hw.dtype.c_str() : o.dtype.c_str());
  }
  const ParamCounts pc = CountParams(m);
  const StateBytes sb = StateBytesFor(base.dtype, base.accounting);

  std::printf("zplan estimate: %s on %s: %lld node(s) x %lld GPU(s) (dp %lld), micro_batch %lld, seq %lld, %s\n",
              m.name.c_str(), hw.name.c_str(), (long long)base.nodes, (long long)base.gpus_per_node, (long long)base.dp(),
              (long long)base.micro_batch, (long long)base.seq_len, base.dtype.c_str());
  std::printf("  activation checkpoints every %lld layer(s) on %s, tiling %lld\n", (long long)base.ckpt_interval,
              TierName(base.ckpt_tier), (long long)base.tile_factor);
  std::printf("parameters: %s total = blocks %s (+ embeddings %s, head %s); paper 12*nl*hd^2 = %s\n",
              FormatCount(pc.total).c_str(), FormatCount(pc.blocks).c_str(), FormatCount(pc.embeddings).c_str(),
              FormatCount(pc.lm_head).c_str(), FormatCount(pc.paper_blocks).c_str());
  std::printf("accounting: %s = %.0f B/param (params %.0f + grads %.0f + optimizer %.0f)%s\n\n", base.accounting.c_str(),
              sb.total(), sb.param, sb.grad, sb.optimizer,
              base.accounting == "zero" ? "; --accounting paper adds fp32 grads (20 B/param)" : "");

  const Capacity cap = CapacityFor(hw, base);
  std::printf("%-17s %14s %14s %14s  %s\n", "strategy", "device/GPU", "host/node", "nvme/node", "fits");
  std::printf("%-17s %14s %14s %14s\n", "(capacity)", FormatBytes(cap.device).c_str(), FormatBytes(cap.host).c_str(),
              FormatBytes(cap.nvme).c_str());
  std::vector<Strategy> rows = Strategies();
  const bool custom = ds_placement && DsStrategyName(*ds_placement) == "custom";
  if (custom) rows.push_back({"ds_config", *ds_placement});
  for (const Strategy& st : rows) {
    const bool mine = ds_placement && st.placement.params == ds_placement->params &&
                      st.placement.grads == ds_placement->grads && st.placement.optimizer == ds_placement->optimizer;
    PlanKnobs k = base;
    k.placement = st.placement;
    DeriveBuffers(m, k);
    MemoryEstimate mem = EstimateMemory(m, hw, k);
    std::string over = OverflowTier(mem, cap);
    std::printf("%-17s %14s %14s %14s  %s\n", st.name.c_str(), FormatBytes(mem.device_bytes).c_str(),
                FormatBytes(mem.host_bytes).c_str(), FormatBytes(mem.nvme_bytes).c_str(),
                (std::string(over.empty() ? "yes" : ("no: " + over + " over capacity").c_str()) + (mine ? "  <- ds_config" : "")).c_str());
    if (a.details) {
      for (const MemoryItem& it : mem.items)
        std::printf("    %-6s %12s  %s = %s\n", it.tier.c_str(), FormatBytes(it.bytes).c_str(), it.name.c_str(), it.formula.c_str());
    }
  }
  const double bsz = static_cast<double>(base.micro_batch);
  const double ci = static_cast<double>(std::max<int64_t>(base.ckpt_interval, 1));
  std::printf("\npaper closed forms (ZeRO-Infinity sec. 3, fp16, whole model, bsz %.0f, ci %.0f):\n", bsz, ci);
  std::printf("  model states 20*12*nl*hd^2           %s\n", FormatBytes(PaperModelStateBytes(m)).c_str());
  std::printf("  activation checkpoints 2*bsz*seq*hd*nl/ci  %s\n", FormatBytes(PaperCheckpointBytes(m, bsz, ci)).c_str());
  std::printf("  model-state working memory 4*hd*4hd  %s\n", FormatBytes(PaperModelStateWorkingBytes(m)).c_str());
  std::printf("  activation working memory bsz*seq*ci*(16hd+2*heads*seq)  %s\n",
              FormatBytes(PaperActivationWorkingBytes(m, bsz, ci)).c_str());
  const OpSizes ops = ComputeOpSizes(m);
  std::printf("\nDeepSpeed estimate_zero3_model_states_mem_needs (model states only, buffer factor 1.5, largest layer %s params):\n",
              FormatCount(std::max(ops.largest_linear, ops.embedding)).c_str());
  std::printf("  %-18s %-14s %-9s %14s %14s\n", "offload_optimizer", "offload_param", "zero_init", "GPU/GPU", "CPU/node");
  for (const auto& r : DeepSpeedZero3Estimate(pc.total, std::max(ops.largest_linear, ops.embedding), base.gpus_per_node, base.nodes)) {
    std::printf("  %-18s %-14s %-9d %14s %14s\n", r.offload_optimizer.c_str(), r.offload_param.c_str(), r.zero_init ? 1 : 0,
                FormatBytes(r.gpu_bytes).c_str(), FormatBytes(r.cpu_bytes).c_str());
  }
  std::printf("  (DeepSpeed counts 18 B/param for model states incl. fp16 params and ignores activations, buffers and NVMe)\n");
  return 0;
}

}  // namespace

void RegisterEstimate(CLI::App& app, std::function<void(int)> set_rc) {
  auto args = std::make_shared<EstimateArgs>();
  CLI::App* cmd = app.add_subcommand("estimate", "memory per tier for every placement, with the accounting spelled out");
  AddCommonOptions(cmd, args->common);
  cmd->add_option("--ckpt-interval", args->ckpt_interval, "layers per activation checkpoint (0 = no checkpointing)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20))->capture_default_str();
  cmd->add_option("--ckpt-tier", args->ckpt_tier, "where checkpoints live")->check(CLI::IsMember({"device", "host"}))->capture_default_str();
  cmd->add_option("--tile", args->tile, "tiling factor of the big linears")->check(CLI::Range(int64_t{1}, int64_t{1024}))->capture_default_str();
  cmd->add_flag("--details", args->details, "print every memory item with its formula");
  cmd->add_option("--ds-config", args->ds_config,
                  "a DeepSpeed ds_config.json: take the ZeRO-3 offload placement, micro-batch, precision and "
                  "activation checkpoints from it (marks its row)")
      ->excludes("--micro-batch");
  cmd->callback([args, set_rc] { set_rc(RunEstimate(*args)); });
}

}  // namespace zinf
