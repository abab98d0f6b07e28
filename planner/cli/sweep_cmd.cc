// zplan sweep: model size or node count on one axis; best plan per strategy at each point.
// Prints a table, writes CSV and an HTML report with the curves.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>

#include "core/file_util.h"
#include "core/units.h"
#include "planner/catalog.h"
#include "planner/cli/commands.h"
#include "planner/report/sweep_report.h"

namespace zinf {
namespace {

struct SweepArgs {
  CommonArgs common;
  std::string axis = "model";
  std::vector<std::string> models = {"gpt3-1.3b", "gpt3-6.7b", "gpt3-13b", "gpt3-175b", "zi-0.5t", "zi-1t", "zi-10t", "zi-100t"};
  std::vector<int64_t> nodes = {1, 2, 4, 8, 16, 32, 64};
  std::string csv;
  std::string html;
};

int RunSweep(const SweepArgs& a) {
  std::vector<SweepPoint> points;
  const size_t n = a.axis == "model" ? a.models.size() : a.nodes.size();
  auto t0 = std::chrono::steady_clock::now();
  std::string hw_name;
  for (size_t i = 0; i < n; ++i) {
    CommonArgs c = a.common;
    if (a.axis == "model") c.model = a.models[i];
    else c.nodes = a.nodes[i];
    Result<Inputs> in = LoadInputs(c);
    if (!in.ok()) return Fail(in.status());
    hw_name = in->hw.name;
    std::fprintf(stderr, "\rzplan sweep: point %zu/%zu (%s, %lld nodes)   ", i + 1, n, in->model.name.c_str(), (long long)c.nodes);
    for (const Strategy& st : Strategies()) {
      SearchOptions o = in->options;
      o.strategies = {st.name};
      o.top_k = 1;
      SweepPoint p;
      p.model = in->model.name;
      p.params = CountParams(in->model).total;
      p.nodes = c.nodes;
      p.gpus = c.nodes * (o.gpus_per_node > 0 ? o.gpus_per_node : in->hw.gpus_per_node);
      p.strategy = st.name;
      Result<SearchResult> r = SearchPlans(in->model, in->hw, o);
      if (r.ok()) {
        const Candidate& best = r->top.front();
        p.fits = true;
        p.step_time_s = best.prediction.step_time_s;
        p.tokens_per_s = best.prediction.tokens_per_s;
        p.tflops_per_gpu = best.prediction.tflops_per_gpu;
        p.device_bytes = best.prediction.device_bytes;
        p.bottleneck = best.prediction.bottleneck;
        p.micro_batch = best.knobs.micro_batch;
      } else if (r.status().code() != Code::kInfeasible) {
        return Fail(r.status());
      }
      points.push_back(p);
    }
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "\rzplan sweep: %zu points x %zu strategies in %s\n", n, Strategies().size(), FormatSeconds(secs).c_str());
  std::printf("%-14s %9s %6s %-16s %5s %10s %12s %9s %12s\n", "model", "params", "GPUs", "strategy", "fits", "step",
              "tokens/s", "TFLOP/s", "bottleneck");
  for (const SweepPoint& p : points) {
    std::printf("%-14s %9s %6lld %-16s %5s %10s %12.0f %9.2f %12s\n", p.model.c_str(), FormatCount(p.params).c_str(),
                (long long)p.gpus, p.strategy.c_str(), p.fits ? "yes" : "no", p.fits ? FormatSeconds(p.step_time_s).c_str() : "-",
                p.tokens_per_s, p.tflops_per_gpu, p.fits ? p.bottleneck.c_str() : "-");
  }
  if (a.axis == "model") {
    std::printf("\nlargest model that fits, per strategy:\n");
    for (const Strategy& st : Strategies()) {
      const SweepPoint* best = nullptr;
      for (const SweepPoint& p : points)
        if (p.strategy == st.name && p.fits && (!best || p.params > best->params)) best = &p;
      std::printf("  %-16s %s\n", st.name.c_str(), best ? fmt::format("{} ({})", best->model, FormatCount(best->params)).c_str() : "none");
    }
  } else {
    // Scaling: tokens/s per GPU against the smallest node count where the strategy fits.
    std::printf("\nscaling efficiency (tokens/s per GPU relative to the first point that fits):\n");
    for (const Strategy& st : Strategies()) {
      const SweepPoint* first = nullptr;
      std::string line;
      for (const SweepPoint& p : points) {
        if (p.strategy != st.name || !p.fits) continue;
        if (!first) first = &p;
        double eff = (p.tokens_per_s / static_cast<double>(p.gpus)) / (first->tokens_per_s / static_cast<double>(first->gpus));
        line += fmt::format("  {} nodes {:.0f}%", p.nodes, 100 * eff);
      }
      std::printf("  %-16s%s\n", st.name.c_str(), line.empty() ? "  does not fit" : line.c_str());
    }
  }
  if (!a.csv.empty()) {
    Status s = WriteFileAtomic(a.csv, SweepCsv(points));
    if (!s.ok()) return Fail(s);
    std::printf("wrote %s\n", a.csv.c_str());
  }
  if (!a.html.empty()) {
    Status s = WriteSweepReport(points, a.axis, hw_name, a.html);
    if (!s.ok()) return Fail(s);
    std::printf("wrote %s\n", a.html.c_str());
  }
  return 0;
}

}  // namespace

void RegisterSweep(CLI::App& app, std::function<void(int)> set_rc) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand("sweep", "best plan per strategy over model sizes or node counts: table, CSV and HTML charts");
  AddCommonOptions(cmd, args->common);
  cmd->add_option("--axis", args->axis, "what varies")->check(CLI::IsMember({"model", "nodes"}))->capture_default_str();
  cmd->add_option("--models", args->models, "models for --axis model (names or files)")->delimiter(',')->capture_default_str();
  cmd->add_option("--nodes-list", args->nodes, "node counts for --axis nodes")->delimiter(',')->capture_default_str();
  cmd->add_option("--csv", args->csv, "write the table as CSV");
  cmd->add_option("--html", args->html, "write an HTML report with the curves");
  cmd->callback([args, set_rc] { set_rc(RunSweep(*args)); });
}

void RegisterCatalog(CLI::App& app, std::function<void(int)> set_rc) {
  CLI::App* models = app.add_subcommand("models", "list the shipped models");
  models->callback([set_rc] {
    for (const auto& n : ListCatalog("models")) std::printf("%s\n", n.c_str());
    set_rc(0);
  });
  CLI::App* hws = app.add_subcommand("hwprofiles", "list the shipped hardware profiles");
  hws->callback([set_rc] {
    for (const auto& n : ListCatalog("hwprofiles")) std::printf("%s\n", n.c_str());
    set_rc(0);
  });
}

}  // namespace zinf
