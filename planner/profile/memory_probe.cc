// Host memory bandwidth: copy, read and write over buffers much larger than the caches, each
// pass verified (copy: checksum of the destination; read: sum against the known pattern).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#include "core/units.h"
#include "executor/backend/speed_check.h"
#include "planner/profile/probes.h"
#include "planner/profile/timing.h"

namespace zinf {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a) { return std::chrono::duration<double>(Clock::now() - a).count(); }

// Runs fn(thread, begin, end) on `threads` threads over [0, n).
template <typename Fn>
void ParallelFor(int threads, size_t n, Fn fn) {
  std::vector<std::thread> ts;
  size_t chunk = (n + static_cast<size_t>(threads) - 1) / static_cast<size_t>(threads);
  for (int t = 0; t < threads; ++t) {
    size_t b = std::min(n, static_cast<size_t>(t) * chunk), e = std::min(n, b + chunk);
    ts.emplace_back([=] { fn(t, b, e); });
  }
  for (auto& t : ts) t.join();
}

}  // namespace

Status ProbeHostMemory(ProfileContext& ctx, HwProfile& hw) {
  const bool quick = ctx.options().quick;
  const size_t n = (quick ? 64 : 256) * (1u << 20) / sizeof(uint64_t);  // 64 / 256 MiB per buffer
  const int reps = quick ? 3 : 6;
  const int threads = ctx.options().threads > 0 ? ctx.options().threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<uint64_t> a(n), b(n);
  ParallelFor(threads, n, [&](int, size_t s, size_t e) {
    for (size_t i = s; i < e; ++i) a[i] = i * 0x9e3779b97f4a7c15ull;
  });
  const uint64_t expect = [&] {
    uint64_t x = 0;
    for (size_t i = 0; i < n; ++i) x += a[i];
    return x;
  }();
  double best_copy = 0, best_read = 0, best_write = 0;
  for (int r = 0; r < reps && !ctx.cancelled(); ++r) {
    ctx.Progress("memory", fmt::format("pass {}/{}", r + 1, reps));
    // The copy zrun's memory checks time (split over the threads, memcpy each).
    const double tc = SpeedCheck::MemoryCopyPass(b.data(), a.data(), n * sizeof(uint64_t), threads);
    std::vector<uint64_t> partial(static_cast<size_t>(threads));
    auto t0 = Clock::now();
    ParallelFor(threads, n, [&](int t, size_t s, size_t e) {
      uint64_t x = 0;
      for (size_t i = s; i < e; ++i) x += b[i];
      partial[static_cast<size_t>(t)] = x;
    });
    double tr = Seconds(t0);
    uint64_t got = std::accumulate(partial.begin(), partial.end(), uint64_t{0});
    if (got != expect) return Internal(fmt::format("memory probe: copy verification failed (sum {} != {})", got, expect));
    t0 = Clock::now();
    ParallelFor(threads, n, [&](int, size_t s, size_t e) { std::memset(&b[s], r + 1, (e - s) * sizeof(uint64_t)); });
    double tw = Seconds(t0);
    const double bytes = static_cast<double>(n * sizeof(uint64_t));
    best_copy = std::max(best_copy, 2 * bytes / tc);  // read + write
    best_read = std::max(best_read, bytes / tr);
    best_write = std::max(best_write, bytes / tw);
  }
  // The figure the model and zrun's memory checks use: the check's own copy
  // (SpeedCheck::MemoryCopyPass over its buffer size, beyond the caches), the median of its
  // passes, so that a check at the profile's state reads 1 (a best-of would put every check
  // below it).
  std::vector<char> src(SpeedCheck::kMemoryCheckBytes, 1), dst(SpeedCheck::kMemoryCheckBytes, 0);
  std::vector<double> pass_s;
  const int check_reps = quick ? 5 : 15;
  for (int r = 0; r < check_reps && !ctx.cancelled(); ++r)
    pass_s.push_back(SpeedCheck::MemoryCopyPass(dst.data(), src.data(), src.size(), threads));
  if (pass_s.empty()) return Aborted("memory probe: cancelled");
  hw.host_mem_bw = 2.0 * static_cast<double>(src.size()) / Median(pass_s);  // read + write
  const std::string params = fmt::format("{} threads, {} buffers, best of {}", threads, FormatBytes(static_cast<double>(n * 8)), reps);
  hw.provenance["bandwidth.host_memory"] = fmt::format(
      "measured: {}, memcpy bandwidth counting read+write, SpeedCheck::MemoryCopyPass over {} on {} threads, median of {} "
      "passes (zrun's memory checks copy the same); over {}: copy {}, read {}, write {}",
      ctx.Today(), FormatBytes(static_cast<double>(src.size())), threads, pass_s.size(), params, FormatBandwidth(best_copy),
      FormatBandwidth(best_read), FormatBandwidth(best_write));
  ctx.Progress("memory", fmt::format("copy {}, read {}, write {}; check copy {} (median)", FormatBandwidth(best_copy),
                                     FormatBandwidth(best_read), FormatBandwidth(best_write), FormatBandwidth(hw.host_mem_bw)));
  return Status::Ok();
}

}  // namespace zinf
