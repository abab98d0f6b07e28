#include "planner/report/plan_report.h"

#include <fmt/format.h>

#include "core/units.h"
#include "planner/ds_config.h"
#include "reports/html.h"
#include "reports/svg.h"

namespace zinf {

using namespace reports;

namespace {

std::string Schedule(const PlanKnobs& k) {
  const std::string ckpt = k.ckpt_interval > 0 ? fmt::format("checkpoint every {} layer(s) on {}", k.ckpt_interval, TierName(k.ckpt_tier))
                                               : std::string("no activation checkpointing");
  return fmt::format("params {} / grads {} / optimizer {}; micro-batch {} x {} accum; {}; tile {}; prefetch nvme/h2d/allgather {}/{}/{}",
                     TierName(k.placement.params), TierName(k.placement.grads), TierName(k.placement.optimizer), k.micro_batch,
                     k.grad_accum, ckpt, k.tile_factor, k.prefetch_nvme, k.prefetch_h2d, k.prefetch_allgather);
}

}  // namespace

Status WritePlanReport(const Plan& best, const SearchResult& search, const HwProfile& hw, const std::string& path) {
  const Prediction& p = best.prediction;
  const PlanKnobs& k = best.knobs;
  Page page(fmt::format("zplan: {} on {}", best.model.name, hw.name));
  page.Subtitle(fmt::format("{} node(s) x {} GPU(s), {} candidates evaluated, {} feasible", k.nodes, k.gpus_per_node,
                            search.evaluated, search.feasible));
  page.Section("The plan");
  page.KeyValueTable({
      {"schedule", Schedule(k)},
      {"step time (" + p.model + ")", FormatSeconds(p.step_time_s)},
      {"tokens/s", fmt::format("{:.0f}", p.tokens_per_s)},
      {"TFLOP/s per GPU", fmt::format("{:.2f}", p.tflops_per_gpu)},
      {"bottleneck", p.bottleneck},
      {"no-overlap efficiency bound", fmt::format("{:.1f}%", 100 * p.efficiency)},
      {"accounting", k.accounting + (k.accounting == "paper" ? " (20 B/param)" : " (16 B/param)")},
  });
  page.Section("Memory per tier against capacity");
  // Tiers differ by orders of magnitude (GiB of HBM, TiB of NVMe): plot each tier's use as a
  // share of its capacity, with the bytes in the labels and the table below.
  BarChart mem;
  mem.title = "Peak memory per tier, share of capacity";
  mem.subtitle = fmt::format("device {} of {} per GPU; host {} of {} and NVMe {} of {} per node", FormatBytes(p.device_bytes),
                             FormatBytes(k.device_budget_bytes), FormatBytes(p.host_bytes), FormatBytes(k.host_budget_bytes),
                             FormatBytes(p.nvme_bytes), FormatBytes(k.nvme_budget_bytes));
  mem.categories = {"device", "host", "nvme"};
  mem.value_axis.unit = Unit::kPercent;
  mem.value_axis.label = "% of capacity";
  mem.value_axis.max = 1.0;
  auto share = [](double used, double cap) { return cap > 0 ? used / cap : 0.0; };  // a fraction (kPercent)
  mem.series.push_back({"planned", {share(p.device_bytes, k.device_budget_bytes), share(p.host_bytes, k.host_budget_bytes),
                                    share(p.nvme_bytes, k.nvme_budget_bytes)}});
  mem.capacity = {1.0, 1.0, 1.0};
  page.AddSvg(RenderBarChart(mem));
  Table items;
  items.caption = "Memory accounting (every item with its formula)";
  items.header = {"tier", "item", "bytes", "formula"};
  for (const MemoryItem& it : p.memory) items.rows.push_back({it.tier, it.name, FormatBytes(it.bytes), it.formula});
  page.AddTable(items);
  page.Section("Step time by resource");
  BarChart busy;
  busy.title = "Busy time per resource within one step";
  busy.value_axis = SecondsAxis("seconds");
  busy.orientation = Orientation::kHorizontal;
  BarSeries bs{"busy", {}};
  for (const auto& [r, v] : p.busy_s) {
    busy.categories.push_back(r);
    bs.values.push_back(v);
  }
  busy.series.push_back(bs);
  page.AddSvg(RenderBarChart(busy));
  page.Section("Best plan per strategy");
  Table strat;
  strat.header = {"strategy", "step", "tokens/s", "TFLOP/s/GPU", "device/GPU", "bottleneck"};
  BarChart cmp;
  cmp.title = "Step time breakdown per strategy";
  cmp.layout = BarLayout::kStacked;
  cmp.value_axis = SecondsAxis("seconds");
  std::vector<std::string> resources = {"compute", "h2d", "d2h", "nvme_read", "nvme_write", "network", "cpu_optimizer"};
  for (const std::string& r : resources) cmp.series.push_back({r, {}});
  for (const auto& [name, c] : search.best_per_strategy) {
    strat.rows.push_back({name, FormatSeconds(c.prediction.step_time_s), fmt::format("{:.0f}", c.prediction.tokens_per_s),
                          fmt::format("{:.2f}", c.prediction.tflops_per_gpu), FormatBytes(c.prediction.device_bytes),
                          c.prediction.bottleneck});
    cmp.categories.push_back(name);
    for (size_t i = 0; i < resources.size(); ++i) {
      auto it = c.prediction.busy_s.find(resources[i]);
      cmp.series[i].values.push_back(it == c.prediction.busy_s.end() ? 0.0 : it->second);
    }
  }
  page.AddTable(strat);
  page.AddSvg(RenderBarChart(cmp), "busy time per resource (resources overlap: the step is not their sum)");
  page.Section("Ranked candidates");
  Table top;
  top.header = {"#", "schedule", "step", "tokens/s", "device/GPU", "bottleneck"};
  for (size_t i = 0; i < search.top.size(); ++i) {
    const Candidate& c = search.top[i];
    top.rows.push_back({std::to_string(i + 1), Schedule(c.knobs), FormatSeconds(c.prediction.step_time_s),
                        fmt::format("{:.0f}", c.prediction.tokens_per_s), FormatBytes(c.prediction.device_bytes),
                        c.prediction.bottleneck});
  }
  top.highlight_rows = {0};
  page.AddTable(top);
  page.Section("DeepSpeed equivalent (ds_config.json)");
  page.Pre(DeepSpeedConfig(best).dump(2));
  page.Footer("zinf zplan: analytic memory model, step-time model and discrete-event simulation");
  return page.Write(path);
}

}  // namespace zinf
