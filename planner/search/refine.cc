#include "planner/search/refine.h"

#include <algorithm>

#include "planner/model/time_model.h"
#include "planner/search/evaluate.h"

namespace zinf {

Prediction SimulatedPrediction(const ModelSpec& m, const HwProfile& hw, const PlanKnobs& k, SimResult* out) {
  Prediction p = Evaluate(m, hw, k);  // memory items and the analytic figures
  SimResult s = SimulateStep(m, hw, k);
  p.model = "simulated";
  p.step_time_s = s.step_s;
  const double tokens = static_cast<double>(k.micro_batch * k.seq_len * k.grad_accum * k.dp());
  p.tokens_per_s = s.step_s > 0 ? tokens / s.step_s : 0;
  p.tflops_per_gpu = s.step_s > 0 ? ComputeStepFlops(m, k).model / s.step_s / 1e12 : 0;
  p.busy_s.clear();
  double best = -1;
  for (int i = 0; i < kNumRes; ++i) {
    double b = s.busy_s[static_cast<size_t>(i)];
    if (b <= 0) continue;
    p.busy_s[ResName(static_cast<Res>(i))] = b;
    if (b > best) {
      best = b;
      p.bottleneck = ResName(static_cast<Res>(i));
    }
  }
  p.phase_s.clear();
  p.phase_s["forward"] = s.forward_s;
  p.phase_s["backward"] = s.backward_s;
  p.phase_s["optimizer"] = s.optimizer_s;
  if (out) *out = std::move(s);
  return p;
}

void RefineWithSimulator(const ModelSpec& m, const HwProfile& hw, SearchResult& r) {
  for (Candidate& c : r.top) c.prediction = SimulatedPrediction(m, hw, c.knobs);
  std::stable_sort(r.top.begin(), r.top.end(), BetterCandidate);
  for (auto& [name, c] : r.best_per_strategy) c.prediction = SimulatedPrediction(m, hw, c.knobs);
}

}  // namespace zinf
