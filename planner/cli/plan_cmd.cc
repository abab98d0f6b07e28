// zplan plan: search the schedule space, write plan.yaml, ds_config.json and report.html.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>

#include "core/file_util.h"
#include "core/plan.h"
#include "core/units.h"
#include "planner/cli/commands.h"
#include "planner/ds_config.h"
#include "planner/model/compute_speed.h"
#include "planner/profile/calibrate.h"
#include "planner/report/plan_report.h"
#include "planner/search/refine.h"

namespace zinf {
namespace {

struct PlanArgs {
  CommonArgs common;
  std::string out = "zplan-out";
  int top = 10;
  std::vector<std::string> strategies;
  bool no_tiling = false;
  bool no_prefetch = false;
  int64_t tile = 0;
  int64_t ckpt_interval = -1;
  std::string ckpt_tier;
  double calibrate_s = 0;  // > 0: time the plan's GEMMs this long and plan at the speed found
};

std::string Describe(const PlanKnobs& k) {
  return fmt::format("p:{} g:{} o:{} mb {} ga {} ci {}{} tile {} pf {}/{}/{}", TierName(k.placement.params),
                     TierName(k.placement.grads), TierName(k.placement.optimizer), k.micro_batch, k.grad_accum,
                     k.ckpt_interval, k.ckpt_interval > 0 && k.ckpt_tier == Tier::kHost ? "(host)" : "", k.tile_factor,
                     k.prefetch_nvme, k.prefetch_h2d, k.prefetch_allgather);
}

int RunPlan(const PlanArgs& a) {
  Result<Inputs> in = LoadInputs(a.common);
  if (!in.ok()) return Fail(in.status());
  SearchOptions o = in->options;
  o.strategies = a.strategies;
  o.top_k = a.top;
  o.search_tiling = !a.no_tiling;
  o.search_prefetch = !a.no_prefetch;
  o.tile_factor = a.tile;
  o.ckpt_interval = a.ckpt_interval;
  o.ckpt_tier = a.ckpt_tier;
  auto t0 = std::chrono::steady_clock::now();
  auto search = [&](const HwProfile& hw) -> Result<SearchResult> {
    ZINF_ASSIGN_OR_RETURN(SearchResult sr, SearchPlans(in->model, hw, o));
    RefineWithSimulator(in->model, hw, sr);
    return sr;
  };
  Result<SearchResult> r = search(in->hw);
  if (!r.ok()) return Fail(r.status());
  double search_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // --calibrate: the cores' speed now against the profile, on the winner's own linears; the
  // search runs again with the profile's compute scaled to it (the winner can change).
  HwProfile hw = in->hw;
  double speed = 1.0;
  if (a.calibrate_s > 0) {
    std::printf("zplan plan: calibrating: timing the plan's linear GEMMs for %s ...\n", FormatSeconds(a.calibrate_s).c_str());
    std::fflush(stdout);
    Result<Calibration> c = CalibrateComputeSpeed(MakePlan(in->model, in->hw, in->hw_path, r->top.front()), in->hw, a.calibrate_s);
    if (!c.ok()) return Fail(c.status().WithContext(in->hw_path));
    speed = c->speed();
    if (!(speed >= kMinSpeed && speed <= kMaxSpeed))
      return Fail(InvalidArgument(fmt::format(
          "{}: the cores ran at {:.3g}x this profile's speed, outside {:g}..{:g}: profile this machine and build "
          "(zplan profile) rather than calibrate against it", in->hw_path, speed, kMinSpeed, kMaxSpeed)));
    std::printf("zplan plan: compute at %.3fx the profile's speed (%d checks of %d thread(s), single checks %.3f..%.3f)\n",
                speed, c->totals.checks, c->threads, c->totals.min, c->totals.max);
    // The memory's speed is shown, not applied: scaling the memory-bound work by the 64 MiB
    // copies' speed (0.31-0.43x in a first matrix, vm1) over-predicted three of four plans
    // (docs/performance-model.md); zplan simulate --memory-speed applies it on request.
    if (c->memory_speed() > 0)
      std::printf("zplan plan: memory copies at %.3fx the profile's bandwidth (%d copies, single copies %.3f..%.3f; "
                  "not applied)\n", c->memory_speed(), c->memory.checks, c->memory.min, c->memory.max);
    hw = AtComputeSpeed(in->hw, speed);
    t0 = std::chrono::steady_clock::now();
    r = search(hw);
    if (!r.ok()) return Fail(r.status());
    search_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  std::printf("zplan plan: %s on %s, %lld node(s): %lld candidates in %s, %lld feasible (top %zu simulated)\n", in->model.name.c_str(),
              in->hw.name.c_str(), (long long)o.nodes, (long long)r->evaluated, FormatSeconds(search_s).c_str(),
              (long long)r->feasible, r->top.size());
  std::printf("%-3s %-60s %11s %12s %9s %12s  %s\n", "#", "schedule", "step", "tokens/s", "TFLOP/s", "device/GPU", "bottleneck");
  for (size_t i = 0; i < r->top.size(); ++i) {
    const Candidate& c = r->top[i];
    std::printf("%-3zu %-60s %11s %12.0f %9.3g %12s  %s\n", i + 1, Describe(c.knobs).c_str(),
                FormatSeconds(c.prediction.step_time_s).c_str(), c.prediction.tokens_per_s, c.prediction.tflops_per_gpu,
                FormatBytes(c.prediction.device_bytes).c_str(), c.prediction.bottleneck.c_str());
  }
  Plan best = MakePlan(in->model, hw, in->hw_path, r->top.front());
  best.prediction.compute_speed = speed;
  Status st = MakeDirs(a.out);
  if (!st.ok()) return Fail(st);
  const std::string plan_path = a.out + "/plan.yaml", ds_path = a.out + "/ds_config.json", html = a.out + "/report.html";
  st = SavePlan(best, plan_path);
  if (!st.ok()) return Fail(st);
  st = WriteFileAtomic(ds_path, DeepSpeedConfig(best).dump(2) + "\n");
  if (!st.ok()) return Fail(st);
  st = WritePlanReport(best, *r, hw, html);
  if (!st.ok()) return Fail(st);
  std::printf("wrote %s, %s, %s\n", plan_path.c_str(), ds_path.c_str(), html.c_str());
  return 0;
}

}  // namespace

void RegisterPlan(CLI::App& app, std::function<void(int)> set_rc) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* cmd = app.add_subcommand("plan", "search placement, micro-batch, checkpointing, tiling and prefetch; write the best plan");
  AddCommonOptions(cmd, args->common);
  cmd->add_option("--out,-o", args->out, "output directory (plan.yaml, ds_config.json, report.html)")->capture_default_str();
  cmd->add_option("--top", args->top, "how many analytic winners to simulate and print")->check(CLI::Range(1, 1000))->capture_default_str();
  cmd->add_option("--strategy", args->strategies, "restrict placements (repeatable): none, opt:host, opt:nvme, params+opt:host, params+opt:nvme, all:nvme");
  cmd->add_flag("--no-tiling", args->no_tiling, "do not search the tiling factor (1)");
  cmd->add_flag("--no-prefetch-search", args->no_prefetch, "do not search prefetch depths (3/2/1)");
  cmd->add_option("--tile", args->tile, "only this tiling factor of the big linears (default: searched)")
      ->check(CLI::Range(int64_t{1}, int64_t{64}));
  cmd->add_option("--ckpt-interval", args->ckpt_interval,
                  "only this activation-checkpoint interval in layers; 0: no checkpoints (default: searched)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20));
  cmd->add_option("--ckpt-tier", args->ckpt_tier, "only activation checkpoints on this tier (default: searched)")
      ->check(CLI::IsMember({"device", "host"}));
  cmd->add_option("--calibrate", args->calibrate_s,
                  "CPU-backend profiles: time the best plan's linear GEMMs for this many seconds now, scale the profile's "
                  "compute to the speed found and search again (a shared VM's cores drift from the profile within minutes); "
                  "the plan records it as prediction.compute_speed")
      ->check(CLI::Range(0.0, 600.0));
  cmd->callback([args, set_rc] { set_rc(RunPlan(*args)); });
}

}  // namespace zinf
