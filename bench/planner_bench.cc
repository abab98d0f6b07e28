// Planner speed: a full search for a 1T model on 512 GPUs (target < 1 s), a sweep of 100
// configurations (target < 10 s), and one simulated 1T / 512-GPU step (target < 100 ms).
// Run: build/bench/planner_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include "planner/search/refine.h"
#include "planner/search/search.h"
#include "planner/sim/simulator.h"
#include "../tests/planner/test_fixtures.h"

namespace zinf {
namespace {

void BM_Plan1T512(benchmark::State& state) {
  ModelSpec m = testing::PaperModel(128, 25, 256);
  HwProfile hw = testing::Dgx2();
  SearchOptions o;
  o.nodes = 32;  // 32 x 16 = 512 GPUs
  for (auto _ : state) {
    Result<SearchResult> r = SearchPlans(m, hw, o);
    if (!r.ok()) state.SkipWithError(r.status().ToString().c_str());
    RefineWithSimulator(m, hw, *r);
    benchmark::DoNotOptimize(r->top.front().prediction.step_time_s);
    state.counters["candidates"] = static_cast<double>(r->evaluated);
  }
}
BENCHMARK(BM_Plan1T512)->Unit(benchmark::kMillisecond);

void BM_Sweep100(benchmark::State& state) {
  HwProfile hw = testing::Dgx2();
  const int64_t layers[] = {24, 32, 40, 48, 64, 80, 96, 128, 160, 195};
  const int64_t nodes[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512};
  for (auto _ : state) {
    int ok = 0;
    for (int64_t l : layers) {
      for (int64_t n : nodes) {  // 10 x 10 = 100 configurations, every strategy each
        ModelSpec m = testing::Gpt(l, 128 * l, 32);
        SearchOptions o;
        o.nodes = n;
        o.top_k = 1;
        ok += SearchPlans(m, hw, o).ok();
      }
    }
    benchmark::DoNotOptimize(ok);
  }
}
BENCHMARK(BM_Sweep100)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_Simulate1T512(benchmark::State& state) {
  ModelSpec m = testing::PaperModel(128, 25, 256);
  HwProfile hw = testing::Dgx2();
  SearchOptions o;
  o.nodes = 32;
  PlanKnobs k = BaseKnobs(m, hw, o);
  k.placement = FindStrategy("all:nvme")->placement;
  k.tile_factor = static_cast<int64_t>(state.range(0));
  for (auto _ : state) {
    SimResult r = SimulateStep(m, hw, k);
    benchmark::DoNotOptimize(r.step_s);
    state.counters["tasks"] = static_cast<double>(r.num_tasks);
  }
}
BENCHMARK(BM_Simulate1T512)->Arg(1)->Arg(16)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace zinf

BENCHMARK_MAIN();
