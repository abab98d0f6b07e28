// What a core's GEMMs lose when two ranks take turns on it (CPU backend, more ranks than
// cores: 4 zrun ranks of one thread on a 2-core VM, two bound to each core). The compute
// probes time one thread alone on its core; time-sliced, each rank gets half of the core, and
// every switch (the scheduler's slice, node.cpu_sched_slice_s) hands the core's caches to the
// other rank's working set. On the 2-core AMD EPYC VM of 2026-12-07 four one-thread GEMM
// processes ran at 0.89-0.98x, together, what one alone did per core (1024 x 512 x 2048 and
// 1024 x 128 x 512, three pairs each), and the 4-rank runs of bench/validate.py took 4-12%
// more CPU in their compute than the model's kernels at one core (rank 0's checks, run alone
// between steps, read the speed the runs were compared at).
//
// Times the executor's forward GEMM on one one-thread backend alone and on 2 x cores of them
// at once (thread i bound to core i % cores where the affinity is unrestricted, as zrun binds
// oversubscribed ranks), in alternating rounds, for three shapes whose matrices take 0.9, 6.8
// and 14.7 MB (each thread its own), and records per shape the cores' summed rate over the
// cores' rate alone (all threads' GEMMs per second / cores, over the lone thread's), by the
// working set, as device.shared_core_curve: ranks whose working sets together outgrow the
// last-level cache lose more than ranks that fit. The time model divides the GEMMs of a plan
// with more ranks than cores by it at each GEMM's working set.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iterator>
#include <thread>
#include <vector>

#include "core/units.h"
#include "executor/backend/cpu/cpu_backend.h"
#include "executor/train/compute_priority.h"
#include "planner/profile/probes.h"
#include "planner/profile/timing.h"

namespace zinf {
namespace {

using Clock = std::chrono::steady_clock;

struct Operands {
  int m, k, n;
  std::vector<float> x, w, y;
};

// Runs GEMMs on `be` from `go` until `stop`; returns GEMMs per second over that time.
double GemmLoop(Backend& be, Operands& o, const std::atomic<bool>& go, const std::atomic<bool>& stop) {
  while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
  const Clock::time_point t0 = Clock::now();
  int64_t n = 0;
  do {
    be.Gemm(false, true, o.m, o.n, o.k, 1.f, o.x.data(), o.k, o.w.data(), o.k, 1.f, o.y.data(), o.n);
    ++n;
  } while (!stop.load(std::memory_order_acquire));
  return static_cast<double>(n) / std::chrono::duration<double>(Clock::now() - t0).count();
}

// GEMMs per second summed over `running` threads (thread i on backend i) for `seconds`.
double RunThreads(std::vector<std::unique_ptr<Backend>>& be, std::vector<Operands>& ops, int running, int cores,
                  bool bind, double seconds) {
  std::atomic<bool> go{false}, stop{false};
  std::vector<double> rate(static_cast<size_t>(running));
  std::vector<std::thread> workers;
  for (int i = 0; i < running; ++i)
    workers.emplace_back([&, i] {
      if (bind) (void)BindThreadToCpu(i % cores);  // unbound where it fails: the scheduler spreads them
      rate[static_cast<size_t>(i)] = GemmLoop(*be[static_cast<size_t>(i)], ops[static_cast<size_t>(i)], go, stop);
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the threads started (and bound)
  go.store(true, std::memory_order_release);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop.store(true, std::memory_order_release);
  for (std::thread& t : workers) t.join();
  double sum = 0;
  for (double r : rate) sum += r;
  return sum;
}

}  // namespace

Status ProbeSharedCore(ProfileContext& ctx, HwProfile& hw) {
  // One-thread devices only: the profile zrun's oversubscribed ranks are planned from.
  if (hw.backend != "cpu" || ctx.options().threads != 1) return Status::Ok();
  const bool quick = ctx.options().quick;
  const int cores = static_cast<int>(std::max<int64_t>(1, hw.cpu_cores));
  const int threads = 2 * cores;
  const bool bind = ThreadAffinityIsUnrestricted();
  // Layers' forward GEMMs (tokens x in -> out): working sets from within a core's L2 to four
  // of them (one a thread) beyond a 2-core VM's 32 MiB L3.
  const int shapes[][3] = {{256, 128, 512}, {256, 512, 2048}, {1024, 512, 2048}};
  const int rounds = quick ? 2 : 6;
  const double seconds = quick ? 0.05 : 0.2;
  std::vector<std::unique_ptr<Backend>> be;
  for (int i = 0; i < threads; ++i) {
    ZINF_ASSIGN_OR_RETURN(auto b, MakeCpuBackend(size_t{1} << 20, 1));
    be.push_back(std::move(b));
  }
  std::vector<CurvePoint> curve;
  for (const auto& s : shapes) {
    std::vector<Operands> ops;
    for (int i = 0; i < threads; ++i) {
      Operands o{s[0], s[1], s[2], {}, {}, {}};
      o.x.assign(static_cast<size_t>(o.m) * o.k, 1e-3f);
      o.w.assign(static_cast<size_t>(o.n) * o.k, 1e-3f);
      o.y.assign(static_cast<size_t>(o.m) * o.n, 0.f);
      ops.push_back(std::move(o));
    }
    RunThreads(be, ops, threads, cores, bind, seconds / 4);  // warm-up
    std::vector<double> shape_ratios;
    for (int r = 0; r < rounds && !ctx.cancelled(); ++r) {
      // Alternating which goes first, so that a drift over the pair falls on both sides.
      double alone = 0, shared = 0;
      for (int half = 0; half < 2; ++half) {
        if ((half == 0) == (r % 2 == 0)) alone = RunThreads(be, ops, 1, cores, bind, seconds);
        else shared = RunThreads(be, ops, threads, cores, bind, seconds) / cores;
      }
      if (alone > 0 && shared > 0) shape_ratios.push_back(shared / alone);
    }
    if (shape_ratios.empty()) break;
    const double bytes = 4.0 * (static_cast<double>(s[0]) * s[1] + static_cast<double>(s[1]) * s[2] + static_cast<double>(s[0]) * s[2]);
    curve.push_back({bytes, std::min(1.0, Median(shape_ratios))});
    ctx.Progress("gemm", fmt::format("{} threads on {} cores, {}x{}x{} ({}): a core does {:.2f}x what one thread alone does "
                                     "(median of {} rounds)",
                                     threads, cores, s[0], s[1], s[2], FormatBytes(bytes), curve.back().y, shape_ratios.size()));
  }
  if (curve.size() < std::size(shapes)) return Status::Ok();  // cancelled
  std::sort(curve.begin(), curve.end(), [](const CurvePoint& a, const CurvePoint& b) { return a.x < b.x; });
  hw.shared_core_curve = curve;
  hw.provenance["device.shared_core_curve"] = fmt::format(
      "measured: {}, Backend::Gemm forward (256 x 128 x 512, 256 x 512 x 2048, 1024 x 512 x 2048), one thread each, {} "
      "threads on {} cores at once{} against one alone, {} pairs of {} s runs per shape in alternating order; x = bytes of the "
      "GEMM's three matrices (fp32), y = the median ratio of a core's rate shared to the lone thread's (at most 1)",
      ctx.Today(), threads, cores, bind ? " (thread i bound to core i % cores)" : "", rounds, seconds);
  return Status::Ok();
}

}  // namespace zinf
