#include "planner/profile/lane_adam.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "executor/backend/cpu/kernels.h"
#include "executor/storage/lane_pair.h"
#include "planner/profile/timing.h"

namespace zinf {

namespace {
using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Adam's four arrays, staggered in one allocation as the Adam probe lays them out.
struct AdamArrays {
  explicit AdamArrays(size_t n) : n(n), stride(n + 272), buf(4 * stride, 0.f) {
    for (size_t i = 0; i < n; ++i) buf[stride + i] = static_cast<float>(((i * 7) % 101) * 1e-2 - 0.5);
  }
  void Pass(int threads) {
    hp.step += 1;
    float* p = buf.data();
    cpu::AdamStep(p, p + stride, p + 2 * stride, p + 3 * stride, n, hp, threads);
  }
  size_t n, stride;
  std::vector<float> buf;
  AdamParams hp;
};

struct LaneMeans {
  double read_s = 0, write_s = 0;
  int pairs = 0;
};
// At least `n` pairs, and on until `more` says no (at most 8n).
template <typename More>
Result<LaneMeans> LanePairs(Storage& store, void* rbuf, const void* wbuf, uint64_t bytes, uint64_t file_bytes, int n, uint64_t first,
                            More more) {
  LaneMeans m;
  double rs = 0, ws = 0;
  for (int j = 0; j < 8 * n && (j < n || more()); ++j) {
    ZINF_ASSIGN_OR_RETURN(LanePair p, TimeLanePair(store, rbuf, wbuf, bytes, file_bytes, first + static_cast<uint64_t>(j)));
    rs += p.read_s;
    ws += p.write_s;
    m.pairs = j + 1;
  }
  m.read_s = rs / m.pairs;
  m.write_s = ws / m.pairs;
  return m;
}
}  // namespace

Result<LaneAdamCoupling> MeasureLaneBesideAdam(Storage& store, void* rbuf, const void* wbuf, uint64_t bytes,
                                               uint64_t file_bytes, int threads, bool quick, ProfileContext& ctx) {
  LaneAdamCoupling c;
  c.bytes = bytes;
  c.threads = std::max(1, threads);
  c.adam_params = quick ? (1 << 20) : (4 << 20);
  AdamArrays arrays(static_cast<size_t>(c.adam_params));
  c.pairs = quick ? 6 : 16;
  const int pairs = c.pairs, passes = quick ? 6 : 12, rounds = quick ? 2 : 5;
  std::vector<double> rd, wr, ad;
  uint64_t slot = 0;
  for (int r = 0; r < rounds && !ctx.cancelled(); ++r) {
    ZINF_ASSIGN_OR_RETURN(LaneMeans alone, LanePairs(store, rbuf, wbuf, bytes, file_bytes, pairs, slot, [] { return false; }));
    slot += static_cast<uint64_t>(alone.pairs);
    // Both at once: Adam passes on their own thread (its team on every core) for as long as
    // the lane's pairs run, which go on until two passes have ended inside them (a slow
    // machine, or a sanitizer build, can take longer for a pass than for the pairs); the
    // passes that ended inside them.
    std::atomic<bool> stop{false};
    std::atomic<int> beside_passes{0};
    double beside_adam_s = 0;
    std::thread adam([&] {
      const auto t0 = Clock::now();
      while (!stop.load(std::memory_order_relaxed)) {
        arrays.Pass(c.threads);
        if (!stop.load(std::memory_order_relaxed)) {
          ++beside_passes;
          beside_adam_s = Since(t0);
        }
      }
    });
    Result<LaneMeans> beside = LanePairs(store, rbuf, wbuf, bytes, file_bytes, pairs, slot, [&] { return beside_passes.load() < 2; });
    stop = true;
    adam.join();
    ZINF_RETURN_IF_ERROR(beside.status());
    slot += static_cast<uint64_t>(beside->pairs);
    const auto t0 = Clock::now();
    for (int j = 0; j < passes; ++j) arrays.Pass(c.threads);
    const double adam_alone = Since(t0) / passes;
    if (alone.read_s > 0 && alone.write_s > 0) {
      rd.push_back(beside->read_s / alone.read_s);
      wr.push_back(beside->write_s / alone.write_s);
    }
    if (beside_passes > 0 && adam_alone > 0) ad.push_back(beside_adam_s / beside_passes.load() / adam_alone);
    ctx.Progress("nvme", fmt::format("lane beside Adam, round {}/{}", r + 1, rounds));
  }
  if (ctx.cancelled()) return Aborted("nvme probe interrupted");
  c.rounds = static_cast<int>(rd.size());
  if (!rd.empty()) {
    c.read = Median(rd);
    c.write = Median(wr);
  }
  if (!ad.empty()) c.adam = Median(ad);
  return c;
}

}  // namespace zinf
