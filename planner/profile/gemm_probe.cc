// GEMM rate of the executor's own kernel (Backend::Gemm on the CPU backend) over the shapes
// transformer layers use (tokens x hidden -> {hidden, 4 hidden} and 4 hidden -> hidden), in
// the layouts a linear layer runs: forward, and backward's dW and dX. Each timed GEMM is
// verified against a scalar dot product at sampled entries.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <random>

#include <Eigen/Dense>

#include "core/units.h"
#include "executor/backend/cpu/cpu_backend.h"
#include "planner/profile/probes.h"
#include "planner/profile/timing.h"

namespace zinf {
namespace {

struct Shape {
  int m, k, n;
};

// Checks c[i][j] = sum_p a(i, p) b(p, j) at sampled entries; a and b read through the
// layouts the timed call used.
template <typename A, typename B>
Status Verify(A a, B b, const std::vector<float>& c, int m, int n, int k, const char* what) {
  std::mt19937 rng(7);
  for (int t = 0; t < 16; ++t) {
    int i = static_cast<int>(rng() % static_cast<unsigned>(m)), j = static_cast<int>(rng() % static_cast<unsigned>(n));
    double ref = 0, mag = 0;
    for (int p = 0; p < k; ++p) {
      double x = double{a(i, p)} * b(p, j);
      ref += x;
      mag += std::fabs(x);
    }
    double got = c[static_cast<size_t>(i) * n + j];
    if (std::fabs(got - ref) > 1e-4 * mag + 1e-6)
      return Internal(fmt::format("gemm probe: wrong {} result at ({}, {}) of {}x{}x{}: {} vs {}", what, i, j, m, k, n, got, ref));
  }
  return Status::Ok();
}

// Eigen's bfloat16 GEMM (the CPU's bf16 rate through Eigen; informational: the CPU backend
// trains in fp32), verified against an fp32 product of the same bf16-rounded inputs.
Status ProbeGemmBf16(ProfileContext& ctx, HwProfile& hw) {
  using Bf = Eigen::bfloat16;
  using MatB = Eigen::Matrix<Bf, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using MatF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const bool quick = ctx.options().quick;
  std::vector<int> sizes = quick ? std::vector<int>{128, 256} : std::vector<int>{128, 256, 512};
  std::vector<CurvePoint> curve;
  for (int n : sizes) {
    if (ctx.cancelled()) break;
    MatF af = MatF::Random(n, n), bf = MatF::Random(n, n);
    MatB a = af.cast<Bf>(), b = bf.cast<Bf>();
    MatB c(n, n);
    c.noalias() = a * b;  // warm-up
    std::vector<double> times;
    double total = 0;
    while ((total < (quick ? 0.05 : 0.2) || times.size() < 3) && times.size() < 200) {
      auto t0 = std::chrono::steady_clock::now();
      c.noalias() = a * b;
      double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      times.push_back(dt);
      total += dt;
    }
    std::sort(times.begin(), times.end());
    MatF ref = a.cast<float>() * b.cast<float>();
    MatF got = c.cast<float>();
    double err = (got - ref).cwiseAbs().maxCoeff(), mag = ref.cwiseAbs().maxCoeff() + 1.0;
    if (err > 0.05 * mag) return Internal(fmt::format("gemm probe (bf16): {}^3 result off by {} (scale {})", n, err, mag));
    const double flop = 2.0 * n * n * n;
    curve.push_back({flop, flop / times[times.size() / 2]});
    ctx.Progress("gemm", fmt::format("bf16 {}^3: {}", n, FormatFlops(curve.back().y)));
  }
  hw.gemm_curve_bf16 = curve;
  hw.provenance["device.gemm_curve_bf16"] = fmt::format(
      "measured: {}, Eigen bfloat16 GEMM (square {} .. {}), median of timed runs; informational (CPU backend trains in fp32)",
      ctx.Today(), sizes.front(), sizes.back());
  return Status::Ok();
}

// Sorts by x and merges equal x (their mean), so x is strictly increasing.
std::vector<CurvePoint> Merged(std::vector<CurvePoint> curve) {
  std::sort(curve.begin(), curve.end(), [](const CurvePoint& x, const CurvePoint& y) { return x.x < y.x; });
  std::vector<CurvePoint> merged;
  for (const CurvePoint& p : curve) {
    if (!merged.empty() && merged.back().x == p.x) merged.back().y = 0.5 * (merged.back().y + p.y);
    else merged.push_back(p);
  }
  return merged;
}

// The executor's causal attention (AttentionFwd + AttentionBwd) over transformer shapes: the
// forward FLOPs 4 B H T^2 hd against forward + backward time (stored as 3 x forward FLOPs /
// time) and against the forward alone, keyed by one head's forward FLOPs 4 T^2 hd (the size
// of the matrices the kernel works on). The forward is timed warm, run after run: in a step it
// reads the qkv its GEMM has just written. The backward is timed cold, each run after a pass
// that evicts the caches (kEvictBytes): in a step it reads the probabilities and qkv its
// forward saved a whole pass earlier. Timed warm, after the forward, small-none-r1's shape
// (B 8, T 128, C 128, H 4) cost 0.62-0.72 ms backward where zrun's steps took 0.83-0.85 ms a
// layer; cold, 0.82-0.86 ms (docs/performance-model.md).
constexpr size_t kEvictBytes = size_t{64} << 20;
constexpr int kMaxColdRuns = 30;  // each costs an eviction pass besides its own time
Status ProbeAttention(ProfileContext& ctx, HwProfile& hw) {
  struct AttShape {
    int B, T, C, H;
  };
  const bool quick = ctx.options().quick;
  // Per-head sizes from tiny to GPT-2 scale, each with B x H >= 8 (rows for every thread).
  const std::vector<AttShape> shapes = quick ? std::vector<AttShape>{{8, 128, 128, 4}, {4, 256, 512, 8}}
                                             : std::vector<AttShape>{{4, 32, 128, 4},  {8, 64, 256, 4},  {8, 128, 128, 4},
                                                                     {4, 256, 256, 8}, {4, 256, 512, 8}, {2, 512, 768, 12},
                                                                     {1, 1024, 1024, 16}};
  size_t max_bytes = 0;
  for (const AttShape& a : shapes) {
    const size_t n = static_cast<size_t>(a.B) * a.T;
    max_bytes = std::max(max_bytes, 4 * (n * 3 * a.C * 2 + n * a.C * 2 + static_cast<size_t>(a.B) * a.H * a.T * a.T));
  }
  ZINF_ASSIGN_OR_RETURN(auto be, MakeCpuBackend(max_bytes * 2 + (64u << 20), ctx.options().threads));
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  size_t max_elems = 0;
  for (const AttShape& a : shapes) max_elems = std::max(max_elems, static_cast<size_t>(a.B) * a.T * 3 * a.C);
  std::vector<float> pool(max_elems);  // inputs of every shape: prefixes of one random pool
  for (auto& x : pool) x = u(rng);
  std::vector<char> evict(kEvictBytes, 1);
  const double budget = (quick ? 0.05 : 0.15) / kProbeRounds;
  std::vector<std::vector<double>> fwd_t(shapes.size()), total_t(shapes.size());
  for (int round = 0; round < kProbeRounds && !ctx.cancelled(); ++round) {
    const std::vector<size_t> order = RoundOrder(shapes.size(), round);
    for (size_t oi = 0; oi < order.size() && !ctx.cancelled(); ++oi) {
      const size_t si = order[oi];
      const AttShape& a = shapes[si];
      const size_t n = static_cast<size_t>(a.B) * a.T;
      ZINF_ASSIGN_OR_RETURN(DeviceBuffer dq, be->AllocBuffer(n * 3 * a.C * 4));
      ZINF_ASSIGN_OR_RETURN(DeviceBuffer dd, be->AllocBuffer(n * a.C * 4));
      ZINF_ASSIGN_OR_RETURN(DeviceBuffer out, be->AllocBuffer(n * a.C * 4));
      ZINF_ASSIGN_OR_RETURN(DeviceBuffer probs, be->AllocBuffer(static_cast<size_t>(a.B) * a.H * a.T * a.T * 4));
      ZINF_ASSIGN_OR_RETURN(DeviceBuffer dqkv, be->AllocBuffer(n * 3 * a.C * 4));
      ZINF_ASSIGN_OR_RETURN(DeviceBuffer ws, be->AllocBuffer(std::max<size_t>(4, be->AttentionWorkspaceBytes(a.B, a.T, a.C, a.H))));
      ZINF_RETURN_IF_ERROR(be->CopyH2D(dq.data(), pool.data(), dq.bytes()));
      ZINF_RETURN_IF_ERROR(be->CopyH2D(dd.data(), pool.data(), dd.bytes()));
      auto fwd = [&] { be->AttentionFwd(dq.as<float>(), out.as<float>(), probs.as<float>(), a.B, a.T, a.C, a.H); };
      auto bwd = [&] {
        be->AttentionBwd(dd.as<float>(), dq.as<float>(), probs.as<float>(), dqkv.as<float>(), ws.as<float>(), a.B, a.T,
                         a.C, a.H);
      };
      fwd();
      bwd();
      const double f = RoundMedian(budget, fwd);
      std::vector<double> cold;
      for (double spent = 0; (spent < budget || cold.size() < 3) && cold.size() < kMaxColdRuns;) {
        EvictCaches(evict);
        const auto t0 = std::chrono::steady_clock::now();
        bwd();
        cold.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        spent += cold.back();
      }
      fwd_t[si].push_back(f);
      total_t[si].push_back(f + Median(cold));
      if (round == 0) {
        std::vector<float> check(dqkv.bytes() / 4);
        ZINF_RETURN_IF_ERROR(be->CopyD2H(check.data(), dqkv.data(), check.size() * 4));
        for (float x : check)
          if (!std::isfinite(x))
            return Internal(fmt::format("attention probe: non-finite gradient at B {} T {} C {}", a.B, a.T, a.C));
      }
      ctx.Progress("gemm", fmt::format("attention round {}/{}, {}/{}: B {} T {} C {} H {}", round + 1, kProbeRounds, oi + 1,
                                       shapes.size(), a.B, a.T, a.C, a.H));
    }
  }
  std::vector<CurvePoint> curve, fwd_curve;
  for (size_t si = 0; si < shapes.size(); ++si) {
    if (total_t[si].empty() || fwd_t[si].empty()) continue;  // cancelled before this shape
    const AttShape& a = shapes[si];
    const double hd = static_cast<double>(a.C) / a.H;
    const double fwd_flop = 4.0 * a.B * a.H * static_cast<double>(a.T) * a.T * hd;
    const double key = 4.0 * static_cast<double>(a.T) * a.T * hd;  // one head's forward FLOPs
    curve.push_back({key, 3.0 * fwd_flop / RoundsMean(total_t[si])});
    fwd_curve.push_back({key, fwd_flop / RoundsMean(fwd_t[si])});
    ctx.Progress("gemm", fmt::format("attention B {} T {} C {} H {}: {} effective", a.B, a.T, a.C, a.H,
                                     FormatFlops(curve.back().y)));
  }
  const std::vector<CurvePoint> merged = Merged(curve);
  hw.attention_curve = merged;
  hw.attention_fwd_curve = Merged(fwd_curve);
  hw.provenance["device.attention_curve"] = fmt::format(
      "measured: {}, Backend::AttentionFwd + AttentionBwd (CPU backend, fp32), {} shapes, {} threads; x = one head's "
      "forward FLOPs 4 T^2 hd, y = 3 x forward FLOPs / (forward + backward time), the forward timed warm (run after run), "
      "the backward cold (each run after a {} pass evicting the caches, as a step's backward reads what its forward saved "
      "a pass earlier); each round's median of timed runs, averaged over {} rounds in shuffled orders",
      ctx.Today(), merged.size(), be->threads(), FormatBytes(static_cast<double>(kEvictBytes)), kProbeRounds);
  hw.provenance["device.attention_fwd_curve"] = fmt::format(
      "measured: {}, Backend::AttentionFwd alone over the same shapes, {} threads; y = forward FLOPs / forward time, each "
      "round's median of timed runs, averaged over {} rounds in shuffled orders",
      ctx.Today(), be->threads(), kProbeRounds);
  return Status::Ok();
}

}  // namespace

// A linear layer of `tokens` rows, K inputs and N outputs in the executor's layouts
// (executor/model/gpt_block.cc): forward Y = X W^T, backward dW = dY^T X and dX = dY W.
Status ProbeGemm(ProfileContext& ctx, HwProfile& hw) {
  const bool quick = ctx.options().quick;
  std::vector<Shape> shapes;  // m = tokens, k = in, n = out
  for (int tokens : quick ? std::vector<int>{128, 1024} : std::vector<int>{64, 256, 1024, 4096}) {
    for (int h : quick ? std::vector<int>{64, 256, 1024} : std::vector<int>{64, 128, 256, 512, 1024, 2048}) {
      shapes.push_back({tokens, h, h});
      // The largest (4096 x 2048 x 8192, 137 GFLOP) would take most of the probe's time;
      // rates are flat by then and the curve holds its last point beyond.
      if (2.0 * tokens * h * 4.0 * h > 4e10) continue;
      shapes.push_back({tokens, h, 4 * h});
      if (!quick) shapes.push_back({tokens, 4 * h, h});
    }
  }
  size_t max_bytes = 0;
  for (const Shape& s : shapes)
    max_bytes = std::max(max_bytes, 4 * 2 * (static_cast<size_t>(s.m) * s.k + static_cast<size_t>(s.k) * s.n + static_cast<size_t>(s.m) * s.n));
  ZINF_ASSIGN_OR_RETURN(auto backend, MakeCpuBackend(max_bytes + (16u << 20), ctx.options().threads));
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  size_t max_elems = 0;
  for (const Shape& s : shapes)
    max_elems = std::max({max_elems, static_cast<size_t>(s.m) * s.k, static_cast<size_t>(s.k) * s.n, static_cast<size_t>(s.m) * s.n});
  // Every shape's X, W and dY are windows of one random pool (at different offsets).
  std::vector<float> pool(max_elems + 2);
  for (auto& v : pool) v = u(rng);
  const double budget = (quick ? 0.04 : 0.1) / kProbeRounds;
  // Per shape, each round's median time (forward; backward), averaged over the rounds below.
  std::vector<std::vector<double>> fwd_t(shapes.size()), bwd_t(shapes.size());
  for (int round = 0; round < kProbeRounds && !ctx.cancelled(); ++round) {
    const std::vector<size_t> order = RoundOrder(shapes.size(), round);
    for (size_t oi = 0; oi < order.size() && !ctx.cancelled(); ++oi) {
      const size_t si = order[oi];
      const Shape& s = shapes[si];
      const int M = s.m, K = s.k, N = s.n;
      const size_t nx = static_cast<size_t>(M) * K, nw = static_cast<size_t>(N) * K, ny = static_cast<size_t>(M) * N;
      const float *x = pool.data(), *w = pool.data() + 1, *dy = pool.data() + 2;
      ZINF_ASSIGN_OR_RETURN(DeviceBuffer dx_in, backend->AllocBuffer(nx * 4));
      ZINF_ASSIGN_OR_RETURN(DeviceBuffer dw_in, backend->AllocBuffer(nw * 4));
      ZINF_ASSIGN_OR_RETURN(DeviceBuffer ddy, backend->AllocBuffer(ny * 4));
      ZINF_ASSIGN_OR_RETURN(DeviceBuffer dout, backend->AllocBuffer(ny * 4));
      ZINF_ASSIGN_OR_RETURN(DeviceBuffer dgw, backend->AllocBuffer(nw * 4));
      ZINF_ASSIGN_OR_RETURN(DeviceBuffer dgx, backend->AllocBuffer(nx * 4));
      ZINF_RETURN_IF_ERROR(backend->CopyH2D(dx_in.data(), x, nx * 4));
      ZINF_RETURN_IF_ERROR(backend->CopyH2D(dw_in.data(), w, nw * 4));
      ZINF_RETURN_IF_ERROR(backend->CopyH2D(ddy.data(), dy, ny * 4));
      ZINF_RETURN_IF_ERROR(backend->Memset(dout.data(), 0, ny * 4));  // accumulated into (below)
      ZINF_RETURN_IF_ERROR(backend->Memset(dgw.data(), 0, nw * 4));
      const float *X = dx_in.as<float>(), *W = dw_in.as<float>(), *DY = ddy.as<float>();
      float *Y = dout.as<float>(), *GW = dgw.as<float>(), *GX = dgx.as<float>();
      // As the executor calls them (executor/model/gpt_block.cc): the forward adds to the
      // output its bias pass initialised, dW adds to the gradient buffer (beta 1: no zeroing
      // pass inside the GEMM, which for small K costs 5-10% of the forward); dX overwrites.
      auto fwd = [&] { backend->Gemm(false, true, M, N, K, 1.f, X, K, W, K, 1.f, Y, N); };
      auto bwd = [&] {
        backend->Gemm(true, false, N, K, M, 1.f, DY, N, X, K, 1.f, GW, K);
        backend->Gemm(false, false, M, K, N, 1.f, DY, N, W, K, 0.f, GX, K);
      };
      // Warm up (twice in the first round: thread pools start on the first call).
      for (int r = 0; r < (round == 0 ? 2 : 1); ++r) {
        fwd();
        bwd();
      }
      fwd_t[si].push_back(RoundMedian(budget, fwd));
      bwd_t[si].push_back(RoundMedian(budget, bwd));
      if (round == 0) {
        // The timed calls accumulated into Y and GW: one more of each from zero to check.
        ZINF_RETURN_IF_ERROR(backend->Memset(Y, 0, ny * 4));
        ZINF_RETURN_IF_ERROR(backend->Memset(GW, 0, nw * 4));
        fwd();
        bwd();
        std::vector<float> out(ny), gw(nw), gx(nx);
        ZINF_RETURN_IF_ERROR(backend->CopyD2H(out.data(), Y, ny * 4));
        ZINF_RETURN_IF_ERROR(backend->CopyD2H(gw.data(), GW, nw * 4));
        ZINF_RETURN_IF_ERROR(backend->CopyD2H(gx.data(), GX, nx * 4));
        auto at = [](const float* v, int ld) { return [v, ld](int i, int j) { return v[static_cast<size_t>(i) * ld + j]; }; };
        auto tr = [](const float* v, int ld) { return [v, ld](int i, int j) { return v[static_cast<size_t>(j) * ld + i]; }; };
        ZINF_RETURN_IF_ERROR(Verify(at(x, K), tr(w, K), out, M, N, K, "forward"));
        ZINF_RETURN_IF_ERROR(Verify(tr(dy, N), at(x, K), gw, N, K, M, "dW"));
        ZINF_RETURN_IF_ERROR(Verify(at(dy, N), at(w, K), gx, M, K, N, "dX"));
      }
      const double flop = 2.0 * M * K * N;
      ctx.Progress("gemm", fmt::format("round {}/{}, {}/{}: {}x{}x{} forward {}, backward {}", round + 1, kProbeRounds, oi + 1,
                                       shapes.size(), M, K, N, FormatFlops(flop / fwd_t[si].back()),
                                       FormatFlops(2.0 * flop / bwd_t[si].back())));
    }
  }
  std::vector<CurvePoint> curve, bwd_curve;
  std::map<int, GemmTokenCurve> by_tokens;
  for (size_t si = 0; si < shapes.size(); ++si) {
    if (fwd_t[si].empty() || bwd_t[si].empty()) continue;  // cancelled before this shape
    const double flop = 2.0 * shapes[si].m * shapes[si].k * shapes[si].n;
    curve.push_back({flop, flop / RoundsMean(fwd_t[si])});
    bwd_curve.push_back({flop, 2.0 * flop / RoundsMean(bwd_t[si])});
    GemmTokenCurve& t = by_tokens[shapes[si].m];
    t.tokens = shapes[si].m;
    t.fwd.push_back(curve.back());
    t.bwd.push_back(bwd_curve.back());
  }
  hw.gemm_token_curves.clear();
  for (auto& [tokens, c] : by_tokens) {
    c.fwd = Merged(c.fwd);
    c.bwd = Merged(c.bwd);
    hw.gemm_token_curves.push_back(std::move(c));
  }
  // A noisy machine shows here first: the rounds of one shape should agree within a few percent.
  const double spread = RoundSpread(fwd_t);
  const int stalled = StalledRounds(fwd_t) + StalledRounds(bwd_t);
  hw.provenance["device.gemm_token_curves"] = fmt::format(
      "measured: {}, the same GEMMs as gemm_curve and gemm_bwd_curve, one pair of curves per row count ({} counts); "
      "rounds in shuffled orders, a shape's slowest round {:.1f}% slower than its fastest (median over shapes); {} of {} "
      "shape-rounds left out as stalled (over {}x their shape's median round)",
      ctx.Today(), hw.gemm_token_curves.size(), 100.0 * (spread - 1.0), stalled, 2 * kProbeRounds * shapes.size(), kStalledRound);
  if (stalled > 0)
    ctx.Progress("gemm", fmt::format("{} shape-rounds stalled (over {}x their shape's median round), left out", stalled, kStalledRound));
  ZINF_RETURN_IF_ERROR(ProbeGemmBf16(ctx, hw));
  ZINF_RETURN_IF_ERROR(ProbeAttention(ctx, hw));
  ZINF_RETURN_IF_ERROR(ProbeSharedCore(ctx, hw));
  // The probe's last line (a log keeps each probe's first and last).
  ctx.Progress("gemm", fmt::format("a shape's slowest round {:.1f}% slower than its fastest (median over shapes){}",
                                   100.0 * (spread - 1.0), spread > 1.1 ? ": the machine's speed moved while it was measured" : ""));
  const std::vector<CurvePoint> merged = Merged(curve);
  hw.gemm_curve = merged;
  hw.gemm_bwd_curve = Merged(bwd_curve);
  double achievable = 0;
  for (const CurvePoint& p : merged) achievable = std::max(achievable, p.y);
  hw.achievable_flops = achievable;
  hw.peak_flops = achievable;
  hw.dtype = "fp32";
  hw.device_name = "cpu (CPU backend)";
  const std::string method = fmt::format("measured: {}, Backend::Gemm (Eigen, fp32), {} shapes tokens x hidden x {{h, 4h}} and 4h x h, forward layout Y += X W^T (beta 1, as the executor adds to its bias-initialised output), {} threads",
                                         ctx.Today(), shapes.size(), backend->threads());
  hw.provenance["device.achievable_flops"] = method + fmt::format("; each round's median of timed runs, averaged over {} rounds in shuffled orders, best shape", kProbeRounds);
  hw.provenance["device.peak_flops"] = method + "; the fastest shape's rate (no datasheet peak for the CPU backend)";
  hw.provenance["device.gemm_bwd_curve"] = fmt::format(
      "measured: {}, Backend::Gemm dW += dY^T X plus dX = dY W over the same shapes, {} threads; x = forward FLOPs, y = 2 x "
      "forward FLOPs / backward time, each round's median of timed runs, averaged over {} rounds in shuffled orders",
      ctx.Today(), backend->threads(), kProbeRounds);
  return Status::Ok();
}

}  // namespace zinf
