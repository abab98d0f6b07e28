// Timing helpers shared by the compute probes.
//
// A VM's speed drifts over seconds (another tenant, frequency changes), so a probe that
// times each shape once, shape after shape, bakes one moment's speed into each point. The
// probes instead sweep their shapes in kProbeRounds interleaved rounds. Each round after the
// first visits the shapes in its own shuffled order (RoundOrder): with one order, a slow
// spell that recurs about once a round lands on the same shapes every round (a GEMM profile
// of this VM had all its 1024-row shapes at 140 GFLOP/s against 220 for its neighbours, and
// planned a step 1.44 s that the next profile planned at 0.97 s). Within a round a shape's
// runs give their median (RoundMedian: an interrupt costs one run, not the round); across
// rounds the GEMM and attention probes average those medians (RoundsMean), as zrun averages
// its steps: a machine slow a third of the time is slow in a third of a step's time, which a
// median over the rounds would leave out. A round stalled far beyond any drift is left out.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <numeric>
#include <random>
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

// The mean; 0 for none.
inline double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

// A round more than kStalledRound x slower than the median of its shape's rounds was
// stalled, not the machine's speed drifting (+-20% over minutes on this VM): the first
// profile of run v31 (2026-12-06) had a 256 x 64 x 64 GEMM at 1.4 GFLOP/s forward and 0.8
// backward against 129-131 and 96 in the profiles before and after it, and eight more points
// at 2-78% of those profiles' rates, so one of their three rounds ran about 1.5-300x slower.
// The planner then gave small-none-r1 a micro-batch of 8 (1024-row GEMMs, one of them hit)
// and the calibration before each run read 1.46x. RoundsMean leaves such rounds out.
inline constexpr double kStalledRound = 1.5;

// The mean of a shape's round medians, leaving out stalled rounds (above); 0 for none.
inline double RoundsMean(const std::vector<double>& rounds) {
  const double med = Median(rounds);
  double s = 0;
  int n = 0;
  for (double x : rounds)
    if (x <= kStalledRound * med) {
      s += x;
      ++n;
    }
  return n ? s / n : 0.0;
}

// How many rounds RoundsMean leaves out over all shapes.
inline int StalledRounds(const std::vector<std::vector<double>>& round_medians) {
  int n = 0;
  for (const std::vector<double>& r : round_medians) {
    const double med = Median(r);
    for (double x : r) n += x > kStalledRound * med ? 1 : 0;
  }
  return n;
}

// One round of a shape: times fn as TimeRuns does and returns the median of those runs.
template <typename Fn>
double RoundMedian(double budget, Fn&& fn) {
  std::vector<double> t;
  TimeRuns(budget, 1, fn, &t);
  return Median(t);
}

// One pass over `buf` touching (and dirtying) each 64-byte line: what a kernel's inputs were
// in the caches is then gone, as a step's other work leaves them before a backward kernel reads
// what its forward saved.
inline void EvictCaches(std::vector<char>& buf) {
  for (size_t i = 0; i < buf.size(); i += 64) buf[i] = static_cast<char>(buf[i] + 1);
}

// The order in which round `round` visits n shapes: in order for the first, then a shuffle
// seeded by the round (the same for every profile, so a profile can be reproduced).
inline std::vector<size_t> RoundOrder(size_t n, int round) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  if (round > 0) {
    std::mt19937 rng(static_cast<unsigned>(1000 + round));
    std::shuffle(order.begin(), order.end(), rng);
  }
  return order;
}

// How far the rounds of a probe disagreed: for every shape the ratio of its slowest round's
// median time to its fastest's, and the median of that over the shapes (1 on a quiet
// machine). round_medians[shape] holds one median per round.
inline double RoundSpread(const std::vector<std::vector<double>>& round_medians) {
  std::vector<double> ratios;
  for (const std::vector<double>& r : round_medians) {
    if (r.size() < 2) continue;
    const auto [lo, hi] = std::minmax_element(r.begin(), r.end());
    if (*lo > 0) ratios.push_back(*hi / *lo);
  }
  return ratios.empty() ? 1.0 : Median(ratios);
}

}  // namespace zinf
