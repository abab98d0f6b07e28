// CUDA device probe: runs only when ZINF_PROFILE_BACKEND=cuda (zplan profile has no backend
// option yet) in a build with the CUDA backend; then it profiles the GPU with the executor's
// own code paths and overrides the CPU backend's device values:
//   * cuBLAS GEMM curve through CudaBackend::Gemm over transformer shapes (tokens x hidden x
//     {h, 4h}): fp32 -> gemm_curve (the precision the CUDA backend trains in), bf16 mode ->
//     gemm_curve_bf16; each timed GEMM verified at sampled entries against a host dot product.
//   * pinned host <-> device copies (CudaPinnedHostPool + CopyH2D / CopyD2H on a copy stream),
//     verified round trip; device-to-device copy for memory_bw.
// It runs last (after the CPU probes it overrides). Without ZINF_PROFILE_BACKEND=cuda it does
// nothing.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/units.h"
#include "executor/backend/backend.h"
#include "executor/backend/cuda/cuda_backend.h"
#include "planner/profile/probes.h"
#ifdef ZINF_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "executor/backend/cuda/cuda_pinned_pool.h"
#endif

namespace zinf {

#ifdef ZINF_HAVE_CUDA
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct Shape {
  int m, k, n;
};

Status GemmCurve(ProfileContext& ctx, Backend& be, GemmPrecision prec, std::vector<CurvePoint>* out, double* best_out) {
  CudaBackend* cu = AsCuda(&be);
  cu->set_gemm_precision(prec);
  const bool quick = ctx.options().quick;
  std::vector<Shape> shapes;
  for (int tokens : quick ? std::vector<int>{1024, 8192} : std::vector<int>{256, 1024, 4096, 8192}) {
    for (int h : quick ? std::vector<int>{1024, 4096} : std::vector<int>{512, 1024, 2048, 4096, 8192}) {
      shapes.push_back({tokens, h, h});
      shapes.push_back({tokens, h, 4 * h});
    }
  }
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<CurvePoint> curve;
  double best = 0;
  for (const Shape& s : shapes) {
    if (ctx.cancelled()) break;
    std::vector<float> a(static_cast<size_t>(s.m) * s.k), b(static_cast<size_t>(s.k) * s.n), c(static_cast<size_t>(s.m) * s.n);
    for (auto& x : a) x = u(rng);
    for (auto& x : b) x = u(rng);
    ZINF_ASSIGN_OR_RETURN(DeviceBuffer da, be.AllocBuffer(a.size() * 4));
    ZINF_ASSIGN_OR_RETURN(DeviceBuffer db, be.AllocBuffer(b.size() * 4));
    ZINF_ASSIGN_OR_RETURN(DeviceBuffer dc, be.AllocBuffer(c.size() * 4));
    ZINF_RETURN_IF_ERROR(be.CopyH2D(da.data(), a.data(), a.size() * 4));
    ZINF_RETURN_IF_ERROR(be.CopyH2D(db.data(), b.data(), b.size() * 4));
    auto run = [&] { be.Gemm(false, false, s.m, s.n, s.k, 1.f, da.as<float>(), s.k, db.as<float>(), s.n, 0.f, dc.as<float>(), s.n); };
    run();
    ZINF_RETURN_IF_ERROR(be.SynchronizeAll());
    // Batches of GEMMs (a single one is too short to time from the host), median batch.
    const double flop = 2.0 * s.m * s.k * s.n;
    const int per_batch = std::max(1, static_cast<int>(2e11 / flop));
    std::vector<double> times;
    double total = 0;
    while ((total < (quick ? 0.05 : 0.2) || times.size() < 3) && times.size() < 100) {
      auto t0 = Clock::now();
      for (int i = 0; i < per_batch; ++i) run();
      be.Synchronize(be.ComputeStream());
      const double dt = Since(t0) / per_batch;
      times.push_back(dt);
      total += dt * per_batch;
    }
    ZINF_RETURN_IF_ERROR(be.SynchronizeAll());
    std::sort(times.begin(), times.end());
    ZINF_RETURN_IF_ERROR(be.CopyD2H(c.data(), dc.data(), c.size() * 4));
    be.Synchronize(be.ComputeStream());
    const double tol = prec == GemmPrecision::kFp32 ? 1e-4 : 2e-2;
    for (int t = 0; t < 16; ++t) {
      const int i = static_cast<int>(rng() % static_cast<unsigned>(s.m)), j = static_cast<int>(rng() % static_cast<unsigned>(s.n));
      double ref = 0, mag = 0;
      for (int p = 0; p < s.k; ++p) {
        const double x = double{a[static_cast<size_t>(i) * s.k + p]} * b[static_cast<size_t>(p) * s.n + j];
        ref += x;
        mag += std::fabs(x);
      }
      const double got = c[static_cast<size_t>(i) * s.n + j];
      if (std::fabs(got - ref) > tol * mag + 1e-6) {
        return Internal(fmt::format("cuda gemm probe ({}): wrong result at ({}, {}) of {}x{}x{}: {} vs {}", GemmPrecisionName(prec), i, j, s.m, s.k, s.n, got, ref));
      }
    }
    const double rate = flop / times[times.size() / 2];
    best = std::max(best, flop / times.front());
    curve.push_back({flop, rate});
    ctx.Progress("cuda", fmt::format("gemm {} {}x{}x{}: {}", GemmPrecisionName(prec), s.m, s.k, s.n, FormatFlops(rate)));
  }
  std::sort(curve.begin(), curve.end(), [](const CurvePoint& x, const CurvePoint& y) { return x.x < y.x; });
  out->clear();
  for (const CurvePoint& p : curve) {
    if (!out->empty() && out->back().x == p.x) out->back().y = 0.5 * (out->back().y + p.y);
    else out->push_back(p);
  }
  *best_out = best;
  cu->set_gemm_precision(GemmPrecision::kFp32);
  return Status::Ok();
}

Status Copies(ProfileContext& ctx, Backend& be, HwProfile& hw) {
  const size_t bytes = (ctx.options().quick ? 256u : 1024u) << 20;
  const int reps = ctx.options().quick ? 3 : 6;
  ZINF_ASSIGN_OR_RETURN(DeviceBuffer dev, be.AllocBuffer(bytes));
  ZINF_ASSIGN_OR_RETURN(DeviceBuffer dev2, be.AllocBuffer(bytes));
  ZINF_ASSIGN_OR_RETURN(auto pool, CudaPinnedHostPool::Create(2 * bytes));
  ZINF_ASSIGN_OR_RETURN(CudaPinnedBuffer src, pool->AllocBuffer(bytes));
  ZINF_ASSIGN_OR_RETURN(CudaPinnedBuffer dst, pool->AllocBuffer(bytes));
  ZINF_ASSIGN_OR_RETURN(Stream * s, be.CreateStream("profile-copy"));
  auto* p = src.as<uint8_t>();
  for (size_t i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>(i * 131 + 7);
  double h2d = 0, d2h = 0, d2d = 0;
  for (int r = 0; r < reps && !ctx.cancelled(); ++r) {
    auto t0 = Clock::now();
    ZINF_RETURN_IF_ERROR(be.CopyH2D(dev.data(), src.data(), bytes, s));
    be.Synchronize(s);
    h2d = std::max(h2d, bytes / Since(t0));
    t0 = Clock::now();
    ZINF_RETURN_IF_ERROR(be.CopyD2D(dev2.data(), dev.data(), bytes, s));
    be.Synchronize(s);
    d2d = std::max(d2d, 2.0 * bytes / Since(t0));  // read + write
    std::memset(dst.data(), 0, bytes);
    t0 = Clock::now();
    ZINF_RETURN_IF_ERROR(be.CopyD2H(dst.data(), dev2.data(), bytes, s));
    be.Synchronize(s);
    d2h = std::max(d2h, bytes / Since(t0));
    ZINF_RETURN_IF_ERROR(be.SynchronizeAll());
    if (std::memcmp(src.data(), dst.data(), bytes) != 0) return Internal("cuda copy probe: data came back different");
    ctx.Progress("cuda", fmt::format("copy pass {}/{}: h2d {}, d2h {}, d2d {}", r + 1, reps, FormatBandwidth(h2d), FormatBandwidth(d2h), FormatBandwidth(d2d)));
  }
  hw.h2d_bw_alone = h2d;
  hw.d2h_bw_alone = d2h;
  hw.h2d_bw = h2d;  // one GPU measured; node-level PCIe sharing between GPUs is not measured
  hw.d2h_bw = d2h;
  hw.memory_bw = d2d;
  const std::string m = fmt::format("measured: {}, CudaBackend CopyH2D/CopyD2H of {} from cudaHostAlloc memory on a copy stream, best of {}; one GPU alone (concurrent GPUs not measured)",
                                    ctx.Today(), FormatBytes(static_cast<double>(bytes)), reps);
  for (const char* k : {"bandwidth.h2d", "bandwidth.d2h", "bandwidth.h2d_alone", "bandwidth.d2h_alone"}) hw.provenance[k] = m;
  hw.provenance["device.memory_bw"] = fmt::format("measured: {}, CudaBackend CopyD2D of {} (read + write), best of {}", ctx.Today(), FormatBytes(static_cast<double>(bytes)), reps);
  return Status::Ok();
}

}  // namespace
#endif  // ZINF_HAVE_CUDA

Status ProbeCuda(ProfileContext& ctx, HwProfile& hw) {
  const char* want = std::getenv("ZINF_PROFILE_BACKEND");
  if (want == nullptr || std::string(want) != "cuda") return Status::Ok();
#ifndef ZINF_HAVE_CUDA
  return Unsupported("ZINF_PROFILE_BACKEND=cuda: zinf was built without CUDA");
#else
  std::string why;
  if (!CudaDeviceAvailable(&why)) return Unsupported("ZINF_PROFILE_BACKEND=cuda: no CUDA device: " + why);
  int count = 0;
  (void)cudaGetDeviceCount(&count);
  const int dev = CudaLocalDevice(count);
  cudaDeviceProp prop{};
  if (cudaError_t e = cudaGetDeviceProperties(&prop, dev); e != cudaSuccess) {
    return Internal(fmt::format("cudaGetDeviceProperties: {}", cudaGetErrorString(e)));
  }
  size_t free_b = 0, total_b = 0;
  (void)cudaSetDevice(dev);
  (void)cudaMemGetInfo(&free_b, &total_b);
  // Arena for the probes: the largest GEMM (8192 x 8192 x 32768: ~2.3 GB) or the copies.
  const size_t arena = std::min<size_t>(free_b / 2, size_t{6} << 30);
  CudaBackendOptions o;
  o.capacity_bytes = arena;
  o.device = dev;
  ZINF_ASSIGN_OR_RETURN(auto be, MakeCudaBackend(o));
  double best32 = 0, best16 = 0;
  ClearCpuKernelFigures(hw);  // measured on the CPU backend's kernels, not this GPU's
  ZINF_RETURN_IF_ERROR(GemmCurve(ctx, *be, GemmPrecision::kFp32, &hw.gemm_curve, &best32));
  ZINF_RETURN_IF_ERROR(GemmCurve(ctx, *be, GemmPrecision::kBf16, &hw.gemm_curve_bf16, &best16));
  ZINF_RETURN_IF_ERROR(Copies(ctx, *be, hw));
  double achievable = 0;
  for (const CurvePoint& p : hw.gemm_curve) achievable = std::max(achievable, p.y);
  hw.backend = "cuda";
  hw.dtype = "fp32";
  hw.device_name = fmt::format("{} (CUDA device {})", prop.name, dev);
  hw.gpus_per_node = count;
  hw.device_memory_bytes = ctx.options().device_memory_bytes > 0 ? ctx.options().device_memory_bytes : static_cast<double>(total_b);
  hw.achievable_flops = achievable;
  hw.peak_flops = std::max(best32, achievable);
  const std::string method = fmt::format("measured: {}, CudaBackend::Gemm (cuBLAS, fp32 without TF32) on {}, tokens x hidden x {{h, 4h}}; bf16 mode in gemm_curve_bf16 (best {})",
                                         ctx.Today(), prop.name, FormatFlops(best16));
  hw.provenance["device.achievable_flops"] = method + "; median of timed batches, best shape";
  hw.provenance["device.peak_flops"] = method + "; fastest batch (no datasheet value used)";
  hw.provenance["device.memory"] = ctx.options().device_memory_bytes > 0 ? "setting: zplan profile --device-memory"
                                                                         : "measured: cudaMemGetInfo total";
  hw.provenance["node.gpus_per_node"] = "measured: cudaGetDeviceCount";
  return Status::Ok();
#endif
}

}  // namespace zinf
