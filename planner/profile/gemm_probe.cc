// GEMM rate of the executor's own kernel (Backend::Gemm on the CPU backend) over the shapes
// transformer layers use: tokens x hidden x {hidden, 3 hidden, 4 hidden}. Each timed GEMM
// is verified against a scalar dot product at sampled entries.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include <Eigen/Dense>

#include "core/units.h"
#include "executor/backend/cpu/cpu_backend.h"
#include "planner/profile/probes.h"

namespace zinf {
namespace {

struct Shape {
  int m, k, n;
};

Status Verify(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& c, const Shape& s) {
  std::mt19937 rng(7);
  for (int t = 0; t < 16; ++t) {
    int i = static_cast<int>(rng() % static_cast<unsigned>(s.m)), j = static_cast<int>(rng() % static_cast<unsigned>(s.n));
    double ref = 0, mag = 0;
    for (int p = 0; p < s.k; ++p) {
      double x = double{a[static_cast<size_t>(i) * s.k + p]} * b[static_cast<size_t>(p) * s.n + j];
      ref += x;
      mag += std::fabs(x);
    }
    double got = c[static_cast<size_t>(i) * s.n + j];
    if (std::fabs(got - ref) > 1e-4 * mag + 1e-6)
      return Internal(fmt::format("gemm probe: wrong result at ({}, {}) of {}x{}x{}: {} vs {}", i, j, s.m, s.k, s.n, got, ref));
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

// The executor's causal attention (AttentionFwd + AttentionBwd) over transformer shapes: the
// forward FLOPs 4 B H T^2 hd against forward + backward time, stored as the rate that makes
// fwd + 2 x fwd equal the measured time (the model's backward = 2 x forward), keyed by one
// head's forward FLOPs 4 T^2 hd (the size of the matrices the kernel works on).
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
  std::vector<CurvePoint> curve;
  for (size_t si = 0; si < shapes.size() && !ctx.cancelled(); ++si) {
    const AttShape& a = shapes[si];
    const size_t n = static_cast<size_t>(a.B) * a.T;
    std::vector<float> qkv(n * 3 * a.C), dout(n * a.C);
    for (auto& x : qkv) x = u(rng);
    for (auto& x : dout) x = u(rng);
    ZINF_ASSIGN_OR_RETURN(DeviceBuffer dq, be->AllocBuffer(qkv.size() * 4));
    ZINF_ASSIGN_OR_RETURN(DeviceBuffer dd, be->AllocBuffer(dout.size() * 4));
    ZINF_ASSIGN_OR_RETURN(DeviceBuffer out, be->AllocBuffer(n * a.C * 4));
    ZINF_ASSIGN_OR_RETURN(DeviceBuffer probs, be->AllocBuffer(static_cast<size_t>(a.B) * a.H * a.T * a.T * 4));
    ZINF_ASSIGN_OR_RETURN(DeviceBuffer dqkv, be->AllocBuffer(qkv.size() * 4));
    ZINF_ASSIGN_OR_RETURN(DeviceBuffer ws, be->AllocBuffer(std::max<size_t>(4, be->AttentionWorkspaceBytes(a.B, a.T, a.C, a.H))));
    ZINF_RETURN_IF_ERROR(be->CopyH2D(dq.data(), qkv.data(), qkv.size() * 4));
    ZINF_RETURN_IF_ERROR(be->CopyH2D(dd.data(), dout.data(), dout.size() * 4));
    auto run = [&] {
      be->AttentionFwd(dq.as<float>(), out.as<float>(), probs.as<float>(), a.B, a.T, a.C, a.H);
      be->AttentionBwd(dd.as<float>(), dq.as<float>(), probs.as<float>(), dqkv.as<float>(), ws.as<float>(), a.B, a.T, a.C,
                       a.H);
    };
    run();
    std::vector<double> times;
    double total = 0;
    while ((total < (quick ? 0.05 : 0.2) || times.size() < 5) && times.size() < 2000) {
      auto t0 = std::chrono::steady_clock::now();
      run();
      const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      times.push_back(dt);
      total += dt;
    }
    std::vector<float> check(dqkv.bytes() / 4);
    ZINF_RETURN_IF_ERROR(be->CopyD2H(check.data(), dqkv.data(), check.size() * 4));
    for (float x : check)
      if (!std::isfinite(x)) return Internal(fmt::format("attention probe: non-finite gradient at B {} T {} C {}", a.B, a.T, a.C));
    std::sort(times.begin(), times.end());
    const double hd = static_cast<double>(a.C) / a.H;
    const double fwd_flop = 4.0 * a.B * a.H * static_cast<double>(a.T) * a.T * hd;
    const double rate = 3.0 * fwd_flop / times[times.size() / 2];
    curve.push_back({4.0 * static_cast<double>(a.T) * a.T * hd, rate});  // keyed by one head's forward FLOPs
    ctx.Progress("gemm", fmt::format("attention {}/{}: B {} T {} C {} H {}: {} effective", si + 1, shapes.size(), a.B, a.T,
                                     a.C, a.H, FormatFlops(rate)));
  }
  std::sort(curve.begin(), curve.end(), [](const CurvePoint& x, const CurvePoint& y) { return x.x < y.x; });
  std::vector<CurvePoint> merged;
  for (const CurvePoint& p : curve) {
    if (!merged.empty() && merged.back().x == p.x) merged.back().y = 0.5 * (merged.back().y + p.y);
    else merged.push_back(p);
  }
  hw.attention_curve = merged;
  hw.provenance["device.attention_curve"] = fmt::format(
      "measured: {}, Backend::AttentionFwd + AttentionBwd (CPU backend, fp32), {} shapes, {} threads; x = one head's "
      "forward FLOPs 4 T^2 hd, y = 3 x forward FLOPs / (forward + backward time), median of timed runs",
      ctx.Today(), merged.size(), be->threads());
  return Status::Ok();
}

}  // namespace

Status ProbeGemm(ProfileContext& ctx, HwProfile& hw) {
  const bool quick = ctx.options().quick;
  std::vector<Shape> shapes;
  for (int tokens : quick ? std::vector<int>{128, 1024} : std::vector<int>{64, 256, 1024, 4096}) {
    for (int h : quick ? std::vector<int>{64, 256, 1024} : std::vector<int>{64, 128, 256, 512, 1024, 2048}) {
      shapes.push_back({tokens, h, h});
      shapes.push_back({tokens, h, 4 * h});
    }
  }
  size_t max_bytes = 0;
  for (const Shape& s : shapes)
    max_bytes = std::max(max_bytes, 4 * (static_cast<size_t>(s.m) * s.k + static_cast<size_t>(s.k) * s.n + static_cast<size_t>(s.m) * s.n));
  ZINF_ASSIGN_OR_RETURN(auto backend, MakeCpuBackend(max_bytes + (16u << 20), ctx.options().threads));
  std::vector<CurvePoint> curve;
  double best = 0;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (size_t si = 0; si < shapes.size() && !ctx.cancelled(); ++si) {
    const Shape& s = shapes[si];
    std::vector<float> a(static_cast<size_t>(s.m) * s.k), b(static_cast<size_t>(s.k) * s.n), c(static_cast<size_t>(s.m) * s.n);
    for (auto& x : a) x = u(rng);
    for (auto& x : b) x = u(rng);
    ZINF_ASSIGN_OR_RETURN(DeviceBuffer da, backend->AllocBuffer(a.size() * 4));
    ZINF_ASSIGN_OR_RETURN(DeviceBuffer db, backend->AllocBuffer(b.size() * 4));
    ZINF_ASSIGN_OR_RETURN(DeviceBuffer dc, backend->AllocBuffer(c.size() * 4));
    ZINF_RETURN_IF_ERROR(backend->CopyH2D(da.data(), a.data(), a.size() * 4));
    ZINF_RETURN_IF_ERROR(backend->CopyH2D(db.data(), b.data(), b.size() * 4));
    const double flop = 2.0 * s.m * s.k * s.n;
    // Warm up (twice: thread pools start on the first call), then repeat until ~0.2 s (quick: 0.05 s) has been timed; keep the best.
    for (int w = 0; w < 2; ++w)
      backend->Gemm(false, false, s.m, s.n, s.k, 1.f, da.as<float>(), s.k, db.as<float>(), s.n, 0.f, dc.as<float>(), s.n);
    std::vector<double> times;
    double total = 0;
    const double budget = quick ? 0.05 : 0.2;
    while ((total < budget || times.size() < 5) && times.size() < 2000) {
      auto t0 = std::chrono::steady_clock::now();
      backend->Gemm(false, false, s.m, s.n, s.k, 1.f, da.as<float>(), s.k, db.as<float>(), s.n, 0.f, dc.as<float>(), s.n);
      double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      times.push_back(dt);
      total += dt;
    }
    std::sort(times.begin(), times.end());
    const double best_s = times.front(), median_s = times[times.size() / 2];
    ZINF_RETURN_IF_ERROR(backend->CopyD2H(c.data(), dc.data(), c.size() * 4));
    ZINF_RETURN_IF_ERROR(Verify(a, b, c, s));
    // The median of the timed runs: robust to a noisy box's outliers in both directions.
    const double rate = flop / median_s;
    best = std::max(best, flop / best_s);
    curve.push_back({flop, rate});
    ctx.Progress("gemm", fmt::format("{}/{}: {}x{}x{} {}", si + 1, shapes.size(), s.m, s.k, s.n, FormatFlops(rate)));
  }
  ZINF_RETURN_IF_ERROR(ProbeGemmBf16(ctx, hw));
  ZINF_RETURN_IF_ERROR(ProbeAttention(ctx, hw));
  std::sort(curve.begin(), curve.end(), [](const CurvePoint& x, const CurvePoint& y) { return x.x < y.x; });
  // Merge equal sizes (keep the mean) so x is strictly increasing.
  std::vector<CurvePoint> merged;
  for (const CurvePoint& p : curve) {
    if (!merged.empty() && merged.back().x == p.x) merged.back().y = 0.5 * (merged.back().y + p.y);
    else merged.push_back(p);
  }
  hw.gemm_curve = merged;
  double achievable = 0;
  for (const CurvePoint& p : merged) achievable = std::max(achievable, p.y);
  hw.achievable_flops = achievable;
  hw.peak_flops = std::max(best, achievable);
  hw.dtype = "fp32";
  hw.device_name = "cpu (CPU backend)";
  const std::string method = fmt::format("measured: {}, Backend::Gemm (Eigen, fp32), {} shapes tokens x hidden x {{h, 4h}}, {} threads",
                                         ctx.Today(), shapes.size(), backend->threads());
  hw.provenance["device.achievable_flops"] = method + "; median of timed runs, best shape";
  hw.provenance["device.peak_flops"] = method + "; fastest single run (no datasheet peak for the CPU backend)";
  return Status::Ok();
}

}  // namespace zinf
