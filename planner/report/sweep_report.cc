#include "planner/report/sweep_report.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "reports/html.h"
#include "reports/svg.h"

namespace zinf {

using namespace reports;

std::string SweepCsv(const std::vector<SweepPoint>& points) {
  std::string out = "model,params,nodes,gpus,strategy,fits,step_time_s,tokens_per_s,tflops_per_gpu,device_bytes,micro_batch,bottleneck\n";
  for (const SweepPoint& p : points)
    out += fmt::format("{},{:.0f},{},{},{},{},{:.6g},{:.6g},{:.4g},{:.0f},{},{}\n", p.model, p.params, p.nodes, p.gpus, p.strategy,
                       p.fits ? 1 : 0, p.step_time_s, p.tokens_per_s, p.tflops_per_gpu, p.device_bytes, p.micro_batch, p.bottleneck);
  return out;
}

Status WriteSweepReport(const std::vector<SweepPoint>& points, const std::string& axis, const std::string& hw_name,
                        const std::string& path) {
  const bool by_model = axis == "model";
  Page page(fmt::format("zplan sweep over {} on {}", by_model ? "model size" : "node count", hw_name));
  std::map<std::string, LineSeries> tflops, tokens;
  for (const SweepPoint& p : points) {
    if (!p.fits) continue;
    const double x = by_model ? p.params : static_cast<double>(p.nodes);
    tflops[p.strategy].name = p.strategy;
    tflops[p.strategy].points.push_back({x, p.tflops_per_gpu, p.model});
    tokens[p.strategy].name = p.strategy;
    tokens[p.strategy].points.push_back({x, p.tokens_per_s, p.model});
  }
  LineChart a;
  a.title = "TFLOP/s per GPU";
  a.x.label = by_model ? "parameters" : "nodes";
  a.x.scale = Scale::kLog10;
  a.y.label = "TFLOP/s per GPU";
  for (auto& [n, s] : tflops) a.series.push_back(s);
  page.Section("Throughput per GPU").AddSvg(RenderLineChart(a));
  LineChart b = a;
  b.title = by_model ? "Tokens/s of the whole job" : "Scaling with nodes (tokens/s)";
  b.y.label = "tokens/s";
  b.y.scale = Scale::kLog10;
  b.series.clear();
  for (auto& [n, s] : tokens) b.series.push_back(s);
  page.Section(by_model ? "Tokens/s" : "Scaling with nodes").AddSvg(RenderLineChart(b));
  if (by_model) {
    // Largest model that fits, per strategy.
    BarChart m;
    m.title = "Largest model that fits, per strategy";
    m.orientation = Orientation::kHorizontal;
    m.value_axis.label = "parameters";
    BarSeries s{"max parameters", {}};
    std::map<std::string, double> best;
    std::vector<std::string> order;
    for (const SweepPoint& p : points) {
      if (!best.count(p.strategy)) order.push_back(p.strategy);
      double& v = best[p.strategy];
      if (p.fits) v = std::max(v, p.params);
    }
    for (const std::string& st : order) {
      m.categories.push_back(st);
      s.values.push_back(best[st]);
    }
    m.series.push_back(s);
    page.Section("Max model size per strategy").AddSvg(RenderBarChart(m));
  }
  Table t;
  t.header = {"model", "parameters", "GPUs", "strategy", "fits", "step s", "tokens/s", "TFLOP/s/GPU", "bottleneck"};
  for (const SweepPoint& p : points)
    t.rows.push_back({p.model, fmt::format("{:.3g}", p.params), std::to_string(p.gpus), p.strategy, p.fits ? "yes" : "no",
                      p.fits ? fmt::format("{:.4g}", p.step_time_s) : "-", p.fits ? fmt::format("{:.0f}", p.tokens_per_s) : "-",
                      p.fits ? fmt::format("{:.2f}", p.tflops_per_gpu) : "-", p.fits ? p.bottleneck : "-"});
  page.Section("All points").AddTable(t);
  return page.Write(path);
}

}  // namespace zinf
