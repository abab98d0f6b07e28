// Timing helpers shared by the compute probes.
//
// A VM's speed drifts over seconds (another tenant, frequency changes), so a probe that
// times each shape once, shape after shape, bakes one moment's speed into each point. The
// probes instead sweep their shapes in kProbeRounds interleaved rounds and keep the median
// of every run of a shape across all rounds: a slow moment costs one round's sample of a
// few shapes, not a whole point.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <utility>
#include <vector>

namespace zinf {

inline constexpr int kProbeRounds = 3;

// Runs fn until `budget` seconds have been timed and at least `min_runs` runs made (at most
// 2000); appends each run's time in seconds to *times.
template <typename Fn>
void TimeRuns(double budget, int min_runs, Fn&& fn, std::vector<double>* times) {
  double total = 0;
  for (int r = 0; (total < budget || r < min_runs) && r < 2000; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    times->push_back(dt);
    total += dt;
  }
}

// The median (upper middle element for an even count); 0 for none.
inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

}  // namespace zinf
