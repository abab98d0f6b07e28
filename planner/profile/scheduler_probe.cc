// The scheduler's time slice under oversubscription: 2 x cores threads that never block,
// each watching its own clock; a jump of more than kGapS between two readings is a switch-
// out. The slice is the mean time a thread ran between switch-outs: how the machine shares
// its cores among more busy threads than it has. Recorded for the reader; the time model no
// longer costs collectives by it (docs/performance-model.md, several ranks per node).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "planner/profile/probes.h"

namespace zinf {

namespace {
constexpr double kGapS = 30e-6;  // far above a clock read, far below a slice

struct Runs {
  double run_s = 0, gap_s = 0;
  int64_t switches = 0;
};

Runs WatchClock(std::chrono::steady_clock::time_point end) {
  using Clock = std::chrono::steady_clock;
  Runs r;
  Clock::time_point last = Clock::now(), run_start = last;
  for (;;) {
    const Clock::time_point now = Clock::now();
    const double gap = std::chrono::duration<double>(now - last).count();
    if (gap > kGapS) {
      r.run_s += std::chrono::duration<double>(last - run_start).count();
      r.gap_s += gap;
      ++r.switches;
      run_start = now;
    }
    last = now;
    if (now >= end) break;
  }
  return r;
}
}  // namespace

Status ProbeScheduler(ProfileContext& ctx, HwProfile& hw) {
  const int cores = static_cast<int>(std::max<int64_t>(1, hw.cpu_cores));
  const int threads = 2 * cores;
  const double secs = ctx.options().quick ? 0.3 : 1.0;
  ctx.Progress("scheduler", fmt::format("{} busy threads on {} cores for {} s", threads, cores, secs));
  std::vector<Runs> runs(static_cast<size_t>(threads));
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                          std::chrono::duration<double>(secs));
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) pool.emplace_back([&, i] { runs[static_cast<size_t>(i)] = WatchClock(end); });
  for (std::thread& t : pool) t.join();
  Runs all;
  for (const Runs& r : runs) {
    all.run_s += r.run_s;
    all.gap_s += r.gap_s;
    all.switches += r.switches;
  }
  if (all.switches < threads) {
    hw.cpu_sched_slice_s = 0;
    hw.provenance["node.cpu_sched_slice_s"] =
        fmt::format("not measured: {} busy threads on {} cores were switched out only {} times in {} s", threads, cores,
                    all.switches, secs);
    return Status::Ok();
  }
  hw.cpu_sched_slice_s = all.run_s / static_cast<double>(all.switches);
  hw.provenance["node.cpu_sched_slice_s"] = fmt::format(
      "measured: {}, {} busy threads on {} cores for {} s: mean run between switch-outs (clock jumps > {} us), "
      "{} switch-outs, mean time switched out {:.3f} ms",
      ctx.Today(), threads, cores, secs, kGapS * 1e6, all.switches, 1e3 * all.gap_s / static_cast<double>(all.switches));
  ctx.Progress("scheduler", fmt::format("slice {:.2f} ms", 1e3 * hw.cpu_sched_slice_s));
  return Status::Ok();
}

}  // namespace zinf
