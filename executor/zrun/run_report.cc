#include "executor/zrun/run_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/units.h"
#include "core/yaml_emit.h"
#include "reports/html.h"
#include "reports/svg.h"

namespace zinf {

void Summarise(RunSummary& s) {
  const size_t first = s.steps.size() > 1 ? 1 : 0;
  double n = 0;
  s.measured_step_s = s.measured_fwd_bwd_s = s.measured_drain_s = s.measured_optimizer_s = 0;
  for (size_t i = first; i < s.steps.size(); ++i, ++n) {
    s.measured_step_s += s.steps[i].step_s;
    s.measured_fwd_bwd_s += s.steps[i].fwd_bwd_s;
    s.measured_drain_s += s.steps[i].drain_s;
    s.measured_optimizer_s += s.steps[i].optimizer_s;
  }
  if (n > 0) {
    s.measured_step_s /= n;
    s.measured_fwd_bwd_s /= n;
    s.measured_drain_s /= n;
    s.measured_optimizer_s /= n;
  }
}

void AddCpuBetween(CpuSnapshot* acc, const CpuSnapshot& from, const CpuSnapshot& to) {
  acc->process += to.process - from.process;
  acc->compute += to.compute - from.compute;
  acc->nvme_read += to.nvme_read - from.nvme_read;
  acc->h2d += to.h2d - from.h2d;
  acc->network += to.network - from.network;
  acc->node.busy_s += to.node.busy_s - from.node.busy_s;
  acc->node.total_s += to.node.total_s - from.node.total_s;
}

CpuPerStep CpuBetween(const CpuSnapshot& a, const CpuSnapshot& b, double steps, const CpuSnapshot& x) {
  CpuPerStep c;
  if (steps <= 0) return c;
  c.measured = true;
  c.compute = (b.compute - a.compute - x.compute) / steps;
  c.nvme_read = (b.nvme_read - a.nvme_read - x.nvme_read) / steps;
  c.h2d = (b.h2d - a.h2d - x.h2d) / steps;
  c.network = (b.network - a.network - x.network) / steps;
  c.other = std::max(0.0, (b.process - a.process - x.process) / steps - c.compute - c.nvme_read - c.h2d - c.network);
  const double total = b.node.total_s - a.node.total_s - x.node.total_s;
  if (total > 0) c.node_busy_fraction = std::clamp((b.node.busy_s - a.node.busy_s - x.node.busy_s) / total, 0.0, 1.0);
  return c;
}

NvmeBound NvmeBoundPerStep(const RunSummary& s) {
  NvmeBound b;
  if (s.steps.empty()) return b;
  // The same steps as measured_step_s: after the first (whose optimizer reads no m and v).
  const size_t first = s.steps.size() > 1 ? 1 : 0;
  for (size_t i = first; i < s.steps.size(); ++i) {
    b.read_bytes += s.steps[i].nvme_read_bytes;
    b.write_bytes += s.steps[i].nvme_write_bytes;
  }
  const double n = static_cast<double>(s.steps.size() - first);
  b.read_bytes /= n;
  b.write_bytes /= n;
  if (s.nvme_read_bw > 0 && s.nvme_write_bw > 0) b.bound_s = b.read_bytes / s.nvme_read_bw + b.write_bytes / s.nvme_write_bw;
  return b;
}

std::string MetricsCsv(const RunSummary& s) {
  std::string out = "step,loss,step_s,fwd_bwd_s,drain_s,optimizer_s,tokens_per_s\n";
  for (const StepResult& r : s.steps)
    out += fmt::format("{},{:.9g},{:.6f},{:.6f},{:.6f},{:.6f},{:.1f}\n", r.step, r.loss, r.step_s, r.fwd_bwd_s, r.drain_s,
                       r.optimizer_s, r.tokens_per_s);
  return out;
}

namespace {

double ErrorPct(double measured, double predicted) {
  return predicted > 0 ? 100.0 * (measured - predicted) / predicted : 0.0;
}

}  // namespace

std::string SummaryYaml(const RunSummary& s, const Plan& plan) {
  const Prediction& p = plan.prediction;
  YamlOut y;
  y.Comment("zrun: measured against the plan's prediction");
  y.Key("format", "zinf.run/v1");
  y.Key("plan", s.plan_path);
  y.Key("data", s.data_path);
  y.Key("ranks", static_cast<int64_t>(s.ranks));
  y.Key("steps", static_cast<int64_t>(s.steps.size()));
  if (!s.steps.empty()) {
    y.Key("first_loss", s.steps.front().loss);
    y.Key("last_loss", s.steps.back().loss);
  }
  y.Begin("step_time_s");
  y.Key("measured", s.measured_step_s);
  y.Key("predicted", p.step_time_s);
  y.Key("error_pct", ErrorPct(s.measured_step_s, p.step_time_s));
  y.End();
  if (s.speed.checks > 0) {
    y.Begin("compute_speed");
    y.Comment("the plan's linear GEMMs timed between steps (rank 0, the others waiting) against the profile's rates");
    y.Comment("for them: 1 = as fast as profiled (zplan simulate --compute-speed predicts the plan at this speed)");
    y.Key("vs_profile", s.speed.Ratio());
    // zplan plan --calibrate: the speed the plan's prediction was made at (measured at plan time).
    if (p.compute_speed != 1.0) y.Key("planned_at", p.compute_speed);
    y.Key("checks", static_cast<int64_t>(s.speed.checks));
    y.Key("min", s.speed.min);
    y.Key("max", s.speed.max);
    y.End();
  }
  if (s.memory_speed.checks > 0) {
    y.Begin("memory_speed");
    y.Comment("64 MiB copies timed after each compute check against the profile's bandwidth.host_memory: 1 = as");
    y.Comment("fast as profiled (zplan simulate --memory-speed: what streams through memory at this speed)");
    y.Key("vs_profile", s.memory_speed.Ratio());
    y.Key("checks", static_cast<int64_t>(s.memory_speed.checks));
    y.Key("min", s.memory_speed.min);
    y.Key("max", s.memory_speed.max);
    y.End();
  }
  if (s.drive_read.checks > 0) {
    y.Begin("drive_speed");
    y.Comment("4 MiB NVMe reads and writes alternating between steps (rank 0, the others waiting) against the profile's");
    y.Comment("lane curves: 1 = as fast as profiled (zplan simulate --nvme-read-speed/--nvme-write-speed)");
    y.Key("read", s.drive_read.Ratio());
    y.Key("write", s.drive_write.Ratio());
    y.Key("checks", static_cast<int64_t>(s.drive_read.checks));
    y.Key("read_min", s.drive_read.min);
    y.Key("read_max", s.drive_read.max);
    y.Key("write_min", s.drive_write.min);
    y.Key("write_max", s.drive_write.max);
    y.End();
  }
  y.Begin("phases_s");
  y.Key("forward_backward", s.measured_fwd_bwd_s);
  y.Key("drain", s.measured_drain_s);
  y.Key("optimizer", s.measured_optimizer_s);
  y.End();
  y.Begin("memory_bytes");
  y.Key("device_peak", s.device_peak_bytes);
  y.Key("device_predicted", p.device_bytes);
  y.Key("host", s.host_bytes);
  y.Key("nvme", s.nvme_bytes);
  y.End();
  y.Begin("io_bytes");
  y.Key("nvme_read", s.io.nvme_read_bytes);
  y.Key("nvme_write", s.io.nvme_write_bytes);
  y.Key("h2d", s.io.h2d_bytes);
  y.Key("d2h", s.io.d2h_bytes);
  y.Key("network", s.io.network_bytes);
  y.End();
  const NvmeBound nb = NvmeBoundPerStep(s);
  if (nb.bound_s > 0) {
    y.Begin("nvme_bound");
    y.Comment("one step's NVMe bytes at the profile's measured read and write bandwidths");
    y.Key("read_bytes_per_step", nb.read_bytes);
    y.Key("write_bytes_per_step", nb.write_bytes);
    y.Key("bound_s", nb.bound_s);
    y.Key("step_over_bound", s.measured_step_s / nb.bound_s);
    y.End();
  }
  y.Begin("lane_busy_s");
  y.Key("nvme_read", s.io.nvme_busy_s);
  y.Key("h2d", s.io.h2d_busy_s);
  y.Key("network", s.io.comm_busy_s);
  y.Key("cpu_optimizer", s.io.optimizer_s);
  y.Key("compute_wait", s.io.wait_s);
  y.End();
  if (s.cpu.measured) {
    y.Begin("cpu_s_per_step");
    y.Comment("this rank's threads' CPU time a step (after the first); other: the rest of the process (thread team, optimizer, MPI)");
    y.Key("compute", s.cpu.compute);
    y.Key("nvme_read", s.cpu.nvme_read);
    y.Key("h2d", s.cpu.h2d);
    y.Key("network", s.cpu.network);
    y.Key("other", s.cpu.other);
    y.Key("node_busy_fraction", s.cpu.node_busy_fraction);
    y.End();
  }
  return y.str();
}

Status WriteRunReport(const RunSummary& s, const Plan& plan, const std::string& path) {
  using namespace reports;
  const Prediction& p = plan.prediction;
  Page page(fmt::format("zrun: {} ({} rank{})", plan.model.name, s.ranks, s.ranks > 1 ? "s" : ""));
  page.Subtitle(fmt::format("plan {} | data {} | {} steps", s.plan_path, s.data_path, s.steps.size()));
  page.Section("Measured vs predicted");
  page.KeyValueTable({
      {"step time, measured (mean after warm-up)", FormatSeconds(s.measured_step_s)},
      {"step time, predicted (" + p.model + ")", FormatSeconds(p.step_time_s)},
      {"error", fmt::format("{:+.1f}%", ErrorPct(s.measured_step_s, p.step_time_s))},
      {"tokens/s, measured", fmt::format("{:.0f}", s.steps.empty() ? 0.0 : s.steps.back().tokens_per_s)},
      {"tokens/s, predicted", fmt::format("{:.0f}", p.tokens_per_s)},
      {"predicted bottleneck", p.bottleneck},
  });
  BarChart phases;
  phases.title = "Step phases: measured vs predicted";
  phases.categories = {"forward+backward", "optimizer"};
  phases.value_axis = SecondsAxis("seconds");
  auto phase = [&](const char* a, const char* b) {
    double v = 0;
    if (p.phase_s.count(a)) v += p.phase_s.at(a);
    if (b && p.phase_s.count(b)) v += p.phase_s.at(b);
    return v;
  };
  phases.series.push_back({"measured", {s.measured_fwd_bwd_s + s.measured_drain_s, s.measured_optimizer_s}});
  phases.series.push_back({"predicted", {phase("forward_backward", nullptr) + phase("forward", "backward"), phase("optimizer", nullptr)}});
  page.AddSvg(RenderBarChart(phases));
  page.Section("Memory per tier (per rank)");
  // Tiers differ by orders of magnitude: each tier's use as a share of its budget.
  const double g = static_cast<double>(plan.knobs.gpus_per_node);
  const double cap[3] = {plan.knobs.device_budget_bytes, plan.knobs.host_budget_bytes / g, plan.knobs.nvme_budget_bytes / g};
  const double measured[3] = {s.device_peak_bytes, s.host_bytes, s.nvme_bytes};
  const double predicted[3] = {p.device_bytes, p.host_bytes / g, p.nvme_bytes / g};
  BarChart mem;
  mem.title = "Measured against the plan, share of each tier's budget";
  mem.subtitle = fmt::format("device {} measured / {} predicted; host {} / {}; NVMe {} / {}", FormatBytes(measured[0]),
                             FormatBytes(predicted[0]), FormatBytes(measured[1]), FormatBytes(predicted[1]),
                             FormatBytes(measured[2]), FormatBytes(predicted[2]));
  mem.categories = {"device", "host", "nvme"};
  mem.value_axis.unit = Unit::kPercent;
  mem.value_axis.label = "% of budget";
  BarSeries ms{"measured", {}}, ps{"predicted", {}};
  for (int i = 0; i < 3; ++i) {
    ms.values.push_back(cap[i] > 0 ? measured[i] / cap[i] : std::nan(""));
    ps.values.push_back(cap[i] > 0 ? predicted[i] / cap[i] : std::nan(""));
  }
  mem.series = {ms, ps};
  mem.capacity = {1.0, 1.0, 1.0};
  page.AddSvg(RenderBarChart(mem));
  page.Section("Loss");
  LineChart loss;
  loss.title = "Training loss";
  loss.x.label = "step";
  loss.y.label = "loss";
  LineSeries ls{"loss", {}};
  for (const StepResult& r : s.steps) ls.points.push_back({static_cast<double>(r.step), r.loss});
  loss.series.push_back(ls);
  page.AddSvg(RenderLineChart(loss));
  page.Section("I/O and lanes");
  page.KeyValueTable({
      {"NVMe read", FormatBytes(s.io.nvme_read_bytes)},
      {"NVMe write", FormatBytes(s.io.nvme_write_bytes)},
      {"host to device", FormatBytes(s.io.h2d_bytes)},
      {"device to host", FormatBytes(s.io.d2h_bytes)},
      {"network", FormatBytes(s.io.network_bytes)},
      {"compute blocked waiting for params", FormatSeconds(s.io.wait_s)},
  });
  const NvmeBound nb = NvmeBoundPerStep(s);
  if (nb.bound_s > 0)
    page.Paragraph(fmt::format("NVMe bound: {} read + {} written per step at the profile's {} read / {} write is {}; "
                               "the measured step is {:.2f}x that.", FormatBytes(nb.read_bytes), FormatBytes(nb.write_bytes),
                               FormatBandwidth(s.nvme_read_bw), FormatBandwidth(s.nvme_write_bw), FormatSeconds(nb.bound_s),
                               s.measured_step_s / nb.bound_s));
  if (s.cpu.measured) {
    page.Section("CPU time per step (this rank)");
    page.KeyValueTable({
        {"compute thread (kernels)", FormatSeconds(s.cpu.compute)},
        {"NVMe lane", FormatSeconds(s.cpu.nvme_read)},
        {"host to device lane", FormatSeconds(s.cpu.h2d)},
        {"network lane", FormatSeconds(s.cpu.network)},
        {"other threads (thread team, optimizer, MPI)", FormatSeconds(s.cpu.other)},
        {"node's cores busy", s.cpu.node_busy_fraction > 0 ? fmt::format("{:.0f}%", 100 * s.cpu.node_busy_fraction) : "unknown"},
    });
  }
  page.Link("measured trace (trace.json)", "trace.json");
  return page.Write(path);
}

}  // namespace zinf
