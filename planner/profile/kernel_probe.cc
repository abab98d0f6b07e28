// Elementwise kernels of the executor whose cost is arithmetic, not memory traffic, on a CPU:
// GELU (tanh) and the softmax cross-entropy (an exp per logit; the backward recomputes the
// softmax). Each is timed through the CPU backend over a transformer-sized tensor, forward
// and backward, as elements per second; the planner costs those ops at these rates instead of
// as memory passes. On a 2-core EPYC VM the cross-entropy over 1024 x 256 logits took 477 /
// 889 us (forward / backward) in zrun, 430 / 820 us at this probe's rates, 122 / 61 us as
// memory passes.
//
// LayerNorm is not probed: timed in a loop on hot buffers it ran at 3.4 G elements/s, in zrun
// at 1.8, and right after a backward on the same buffers (whose lines both cores then hold) at
// 0.8: its cost there is the cache-coherence state the previous ops left, which a kernel probe
// does not reproduce; it stays a memory pass: forward at the hot-pass rate below (in zrun on
// 2026-12-07 it ran at 0.25-0.4x its time at memory_bw), backward at memory_bw
// (docs/performance-model.md).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "core/units.h"
#include "executor/backend/backend.h"
#include "planner/profile/probes.h"
#include "planner/profile/timing.h"

namespace zinf {

namespace {

// Median seconds of `runs` calls of fn, each after prep (untimed).
template <typename Prep, typename Fn>
double TimedMedian(int runs, Prep&& prep, Fn&& fn) {
  std::vector<double> t;
  for (int r = 0; r < runs; ++r) {
    prep();
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return Median(t);
}

Status ProbeGelu(ProfileContext& ctx, Backend& be, HwProfile& hw, int runs) {
  const size_t n = 4u << 20;
  ZINF_ASSIGN_OR_RETURN(DeviceBuffer x, be.AllocBuffer(n * 4));
  ZINF_ASSIGN_OR_RETURN(DeviceBuffer y, be.AllocBuffer(n * 4));
  ZINF_ASSIGN_OR_RETURN(DeviceBuffer dy, be.AllocBuffer(n * 4));
  std::vector<float> host(n);
  for (size_t i = 0; i < n; ++i) host[i] = static_cast<float>((i % 2001) * 0.004 - 4.0);
  ZINF_RETURN_IF_ERROR(be.CopyH2D(x.data(), host.data(), n * 4));
  be.GeluFwd(x.as<float>(), y.as<float>(), n);
  const double fwd = TimedMedian(runs, [] {}, [&] { be.GeluFwd(x.as<float>(), y.as<float>(), n); });
  ZINF_RETURN_IF_ERROR(be.CopyD2H(host.data(), y.data(), 4 * 16));
  const double x0 = -4.0, ref = 0.5 * x0 * (1 + std::tanh(0.7978845608 * (x0 + 0.044715 * x0 * x0 * x0)));
  if (std::fabs(host[0] - ref) > 1e-4) return Internal(fmt::format("gelu probe: gelu(-4) = {}, expected {}", host[0], ref));
  // Backward: dX = dY * gelu'(X), in place on dY as the executor runs it.
  const double bwd = TimedMedian(
      runs, [&] { (void)be.Memset(dy.data(), 0, n * 4); },
      [&] { be.GeluBwd(dy.as<float>(), x.as<float>(), dy.as<float>(), n); });
  hw.gelu_elems_per_s = static_cast<double>(n) / fwd;
  hw.gelu_bwd_elems_per_s = static_cast<double>(n) / bwd;
  hw.provenance["device.gelu_elems_per_s"] = fmt::format(
      "measured: {}, Backend::GeluFwd over {} elements, {} threads, median of {} runs", ctx.Today(), n, be.threads(), runs);
  hw.provenance["device.gelu_bwd_elems_per_s"] = fmt::format(
      "measured: {}, Backend::GeluBwd (in place) over {} elements, {} threads, median of {} runs", ctx.Today(), n,
      be.threads(), runs);
  return Status::Ok();
}

Status ProbeCrossEntropy(ProfileContext& ctx, Backend& be, HwProfile& hw, int runs) {
  const int rows = 4096, vocab = 256;
  const size_t n = static_cast<size_t>(rows) * vocab;
  ZINF_ASSIGN_OR_RETURN(DeviceBuffer logits, be.AllocBuffer(n * 4));
  ZINF_ASSIGN_OR_RETURN(DeviceBuffer dlogits, be.AllocBuffer(n * 4));
  ZINF_ASSIGN_OR_RETURN(DeviceBuffer targets, be.AllocBuffer(rows * 4));
  ZINF_ASSIGN_OR_RETURN(DeviceBuffer loss, be.AllocBuffer((rows + 1) * 4));
  std::vector<float> host(n, 0.f);  // uniform logits: loss = log(vocab)
  ZINF_RETURN_IF_ERROR(be.CopyH2D(logits.data(), host.data(), n * 4));
  std::vector<int32_t> t(rows);
  for (int r = 0; r < rows; ++r) t[r] = r % vocab;
  ZINF_RETURN_IF_ERROR(be.CopyH2D(targets.data(), t.data(), rows * 4));
  float* row_loss = loss.as<float>();
  auto fwd_call = [&] {
    be.CrossEntropyFwd(logits.as<float>(), targets.as<int32_t>(), row_loss, row_loss + rows, rows, vocab);
  };
  fwd_call();
  const double fwd = TimedMedian(runs, [] {}, fwd_call);
  float mean = 0;
  ZINF_RETURN_IF_ERROR(be.CopyD2H(&mean, row_loss + rows, 4));
  if (std::fabs(mean - std::log(static_cast<float>(vocab))) > 1e-3)
    return Internal(fmt::format("cross-entropy probe: loss of uniform logits {}, expected log({}) = {}", mean, vocab,
                                std::log(static_cast<double>(vocab))));
  const double bwd = TimedMedian(runs, [] {}, [&] {
    be.CrossEntropyBwd(logits.as<float>(), targets.as<int32_t>(), dlogits.as<float>(), 1.0f, rows, vocab);
  });
  hw.cross_entropy_elems_per_s = static_cast<double>(n) / fwd;
  hw.cross_entropy_bwd_elems_per_s = static_cast<double>(n) / bwd;
  hw.provenance["device.cross_entropy_elems_per_s"] = fmt::format(
      "measured: {}, Backend::CrossEntropyFwd over {} rows x {} logits, {} threads, median of {} runs", ctx.Today(),
      rows, vocab, be.threads(), runs);
  hw.provenance["device.cross_entropy_bwd_elems_per_s"] = fmt::format(
      "measured: {}, Backend::CrossEntropyBwd over {} rows x {} logits, {} threads, median of {} runs", ctx.Today(),
      rows, vocab, be.threads(), runs);
  return Status::Ok();
}

// What one parallel kernel (an OpenMP region of ParallelChunks) costs beyond its elements:
// waking the team's threads (zrun and zplan wait passively: they sleep between regions) and
// joining them. Backend::Add over n1 and n2 elements (both above the parallel threshold, both
// cache-resident), interleaved; t = launch + n x c fitted through the two medians. The GEMM
// and attention probes time their kernels with this cost inside; the memory-pass kernels
// (LayerNorm, bias, embedding) and the large-array GELU and cross-entropy rates do not.
Status ProbeKernelLaunch(ProfileContext& ctx, Backend& be, HwProfile& hw, int runs) {
  const size_t n1 = 1u << 15, n2 = 1u << 17;
  ZINF_ASSIGN_OR_RETURN(DeviceBuffer a, be.AllocBuffer(n2 * 4));
  ZINF_ASSIGN_OR_RETURN(DeviceBuffer b, be.AllocBuffer(n2 * 4));
  ZINF_RETURN_IF_ERROR(be.Memset(a.data(), 0, n2 * 4));
  ZINF_RETURN_IF_ERROR(be.Memset(b.data(), 0, n2 * 4));
  std::vector<double> t1, t2;
  for (int r = 0; r < 20 * runs; ++r) {
    for (size_t n : {n1, n2}) {
      const auto t0 = std::chrono::steady_clock::now();
      be.Add(a.as<float>(), b.as<float>(), b.as<float>(), n);
      (n == n1 ? t1 : t2).push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
  }
  const double m1 = Median(t1), m2 = Median(t2);
  const double per_elem = std::max(0.0, (m2 - m1) / static_cast<double>(n2 - n1));
  hw.kernel_launch_s = std::max(0.0, m1 - per_elem * static_cast<double>(n1));
  hw.provenance["device.kernel_launch_s"] = fmt::format(
      "measured: {}, Backend::Add over {} and {} elements (cache-resident), {} threads, interleaved, median of {} runs "
      "each: the intercept of time = launch + elements x cost",
      ctx.Today(), n1, n2, be.threads(), t1.size());
  ctx.Progress("overhead", fmt::format("{:.1f} us per parallel kernel", hw.kernel_launch_s * 1e6));
  return Status::Ok();
}

// The rate of a memory pass over tensors the caches hold (device.hot_pass_curve): a step's
// elementwise kernels mostly touch what the op before them wrote. Backend::Add (out = a + b:
// 12 bytes an element) over working sets from 1 MiB to 64 MiB, each run again and again over
// the same three arrays (so hot where they fit), in a rotated order each round; y = bytes /
// (median time - the launch ProbeKernelLaunch found). On a 2-core EPYC VM (32 MiB L3): ~200
// GB/s at 1 MiB, 160 at 2-8, 119 at 16, 46 at 32, 29 at 64 (memory_bw, memcpy beyond the
// caches: 30).
Status ProbeHotPass(ProfileContext& ctx, Backend& be, HwProfile& hw, int runs) {
  constexpr size_t kMiB = size_t{1} << 20;
  const std::vector<size_t> sets = {kMiB, 2 * kMiB, 4 * kMiB, 8 * kMiB, 16 * kMiB, 32 * kMiB, 64 * kMiB};
  const size_t max_n = sets.back() / 12;
  ZINF_ASSIGN_OR_RETURN(DeviceBuffer a, be.AllocBuffer(max_n * 4));
  ZINF_ASSIGN_OR_RETURN(DeviceBuffer b, be.AllocBuffer(max_n * 4));
  ZINF_ASSIGN_OR_RETURN(DeviceBuffer out, be.AllocBuffer(max_n * 4));
  std::vector<float> host(max_n);
  for (size_t i = 0; i < max_n; ++i) host[i] = static_cast<float>(i % 1024);
  ZINF_RETURN_IF_ERROR(be.CopyH2D(a.data(), host.data(), max_n * 4));
  ZINF_RETURN_IF_ERROR(be.CopyH2D(b.data(), host.data(), max_n * 4));
  std::vector<std::vector<double>> t(sets.size());
  std::vector<size_t> order(sets.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const int rounds = 3;
  for (int r = 0; r < rounds && !ctx.cancelled(); ++r) {
    std::rotate(order.begin(), order.begin() + 3, order.end());  // a different order each round
    for (size_t i : order) {
      const size_t n = sets[i] / 12;
      be.Add(a.as<float>(), b.as<float>(), out.as<float>(), n);  // untimed: brings them in
      for (int k = 0; k < 4 * runs; ++k) {
        const auto t0 = std::chrono::steady_clock::now();
        be.Add(a.as<float>(), b.as<float>(), out.as<float>(), n);
        t[i].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
    }
  }
  if (ctx.cancelled()) return Aborted("hot-pass probe: cancelled");
  ZINF_RETURN_IF_ERROR(be.CopyD2H(host.data(), out.data(), 4 * 16));
  for (size_t i = 0; i < 16; ++i)
    if (host[i] != 2.0f * static_cast<float>(i)) return Internal(fmt::format("hot-pass probe: {} + {} = {}", i, i, host[i]));
  hw.hot_pass_curve.clear();
  for (size_t i = 0; i < sets.size(); ++i) {
    const double bytes = 12.0 * static_cast<double>(sets[i] / 12);
    const double s = std::max(Median(t[i]) - hw.kernel_launch_s, 1e-9);
    hw.hot_pass_curve.push_back({static_cast<double>(sets[i]), bytes / s});
  }
  hw.provenance["device.hot_pass_curve"] = fmt::format(
      "measured: {}, Backend::Add (12 bytes an element) over working sets of 1 to 64 MiB, each run {} times over the same "
      "arrays after an untimed run, {} rounds in rotated orders, {} threads: x = working set bytes, y = bytes / (median "
      "time - device.kernel_launch_s)",
      ctx.Today(), 4 * runs, rounds, be.threads());
  ctx.Progress("overhead", fmt::format("hot memory passes: {} at 1 MiB, {} at 64 MiB", FormatBandwidth(hw.hot_pass_curve.front().y),
                                       FormatBandwidth(hw.hot_pass_curve.back().y)));
  return Status::Ok();
}

}  // namespace

Status ProbeElementwiseKernels(ProfileContext& ctx, Backend& be, HwProfile& hw) {
  const int runs = ctx.options().quick ? 5 : 15;
  ZINF_RETURN_IF_ERROR(ProbeGelu(ctx, be, hw, runs));
  ZINF_RETURN_IF_ERROR(ProbeCrossEntropy(ctx, be, hw, runs));
  ZINF_RETURN_IF_ERROR(ProbeKernelLaunch(ctx, be, hw, runs));
  ZINF_RETURN_IF_ERROR(ProbeHotPass(ctx, be, hw, runs));
  ctx.Progress("overhead", fmt::format("G elements/s forward / backward: GELU {:.2f} / {:.2f}, cross-entropy {:.2f} / {:.2f}",
                                       hw.gelu_elems_per_s / 1e9, hw.gelu_bwd_elems_per_s / 1e9,
                                       hw.cross_entropy_elems_per_s / 1e9, hw.cross_entropy_bwd_elems_per_s / 1e9));
  return Status::Ok();
}

}  // namespace zinf
