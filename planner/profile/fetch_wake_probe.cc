// What a parameter fetch's hand-offs cost a rank whose compute holds every core it may use
// (CPU backend, no more ranks than cores: one rank on the whole CPU, its kernels' thread team
// on all the cores). zrun fetches an op's parameters on its lanes (executor/zero3/lane.h) a
// few ops ahead: an NVMe lane job, then a host->device copy on the copy lane. Each hand-off
// wakes a lane thread that must find a core, and while a GEMM's team holds both (and, after
// it, spins its bounded GOMP_SPINCOUNT before sleeping) the woken lane waits, so the compute,
// which then waits for the fetch, sits idle. The probe runs that: one process, each iteration
// a fixed number of Backend::Gemm calls (the executor's parallel kernel) on the calling thread
// while (coupled) the next iteration's 1 KiB fetch runs through a copy lane alone (params on
// the host) or an NVMe lane job waiting nvme.read_latency_s first (params on NVMe), waited
// for after the work; against the same work with no fetch (independent), alternately. The
// difference per fetch is recorded against the independent iteration time:
// node.fetch_wake_curve_host and node.fetch_wake_curve_nvme. The transfers themselves are
// costed elsewhere (the copy bandwidth, the NVMe lane curves); the payload here is tiny.
// Measured on the 2-core VM (2026-12-06, a 256x128x256 GEMM of ~88 us): host +11-15 us a
// fetch at 0.09-1 ms of work, NVMe +122-141 us at 0.09 ms, +88-101 at 0.26 ms, +44-66 at 1 ms;
// zrun's small-nvme-r1 left its compute idle ~80 us a fetch (v33, 4.2 ms a step over 52).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "executor/backend/cpu/cpu_backend.h"
#include "executor/zero3/lane.h"
#include "planner/profile/lane_fetch.h"
#include "planner/profile/probes.h"
#include "planner/profile/timing.h"

namespace zinf {

namespace {
using Clock = std::chrono::steady_clock;

constexpr int kM = 256, kK = 128, kN = 256;  // the unit of work: one small linear's GEMM
constexpr size_t kPayloadFloats = 256;        // 1 KiB: the copy is negligible
constexpr int kRounds = 12;                   // rounds per point (full profile)
constexpr double kRunSeconds = 0.075;         // per run of a round
constexpr int kMinIters = 4;                  // iterations per run at the least

}  // namespace

Status ProbeFetchWake(ProfileContext& ctx, HwProfile& hw) {
  hw.fetch_wake_curve_host.clear();
  hw.fetch_wake_curve_nvme.clear();
  if (hw.backend != "cpu") return Status::Ok();
  const bool quick = ctx.options().quick;
  ZINF_ASSIGN_OR_RETURN(auto be, MakeCpuBackend(size_t{4} << 20, ctx.options().threads));
  ZINF_ASSIGN_OR_RETURN(DeviceBuffer x, be->AllocBuffer(size_t{kM} * kK * 4));
  ZINF_ASSIGN_OR_RETURN(DeviceBuffer w, be->AllocBuffer(size_t{kN} * kK * 4));
  ZINF_ASSIGN_OR_RETURN(DeviceBuffer y, be->AllocBuffer(size_t{kM} * kN * 4));
  std::vector<float> ones(std::max(size_t{kM}, size_t{kN}) * kK, 0.01f);
  ZINF_RETURN_IF_ERROR(be->CopyH2D(x.data(), ones.data(), size_t{kM} * kK * 4));
  ZINF_RETURN_IF_ERROR(be->CopyH2D(w.data(), ones.data(), size_t{kN} * kK * 4));
  auto gemm = [&] { be->Gemm(false, true, kM, kN, kK, 1.f, x.as<float>(), kK, w.as<float>(), kK, 0.f, y.as<float>(), kN); };
  // One GEMM alone, to size the work per iteration.
  for (int i = 0; i < 20; ++i) gemm();
  int n = 0;
  const Clock::time_point c0 = Clock::now();
  while (std::chrono::duration<double>(Clock::now() - c0).count() < 0.05 || n < 50) {
    gemm();
    ++n;
  }
  const double gemm_s = std::chrono::duration<double>(Clock::now() - c0).count() / n;
  float check = 0;
  ZINF_RETURN_IF_ERROR(be->CopyD2H(&check, y.data(), 4));
  if (std::fabs(check - kK * 1e-4f) > 1e-5f)
    return Internal(fmt::format("fetch wake probe: GEMM gave {}, expected {}", check, kK * 1e-4f));

  const std::vector<double> targets = quick ? std::vector<double>{3e-4, 3e-3} : std::vector<double>{1e-4, 3e-4, 1e-3, 3e-3, 1e-2};
  // Many short rounds, each an independent run then every chain's, alternately: the VM's
  // speed moves by a few percent over a few hundred ms, and a point is the difference of two
  // runs' times, so the runs it compares must lie close together and its median must have
  // enough rounds to leave a slow one out (3 rounds of 0.3 s each had the 3 and 10 ms points
  // scatter from 0 to 270 us between profiles taken an hour apart; see kRounds below).
  const int pairs = quick ? 2 : kRounds;
  const double secs = quick ? 0.05 : kRunSeconds;  // per run
  const double nvme_wait_s = hw.nvme_read_latency_s;
  const int chains = nvme_wait_s > 0 ? 2 : 1;  // the copy alone; the NVMe read first
  Lane nvme("zinf:nvme_read"), copy("zinf:h2d");
  std::vector<float> host(kPayloadFloats, 1.0f), dev(kPayloadFloats);
  std::vector<CurvePoint> curves[2];
  int prev_reps = 0;
  for (size_t t = 0; t < targets.size() && !ctx.cancelled(); ++t) {
    // GEMMs per iteration for this target; where one GEMM already exceeds the shorter targets
    // (a slow machine, a sanitizer build), each point still does more work than the last.
    int reps = std::max(1, static_cast<int>(targets[t] / gemm_s + 0.5));
    if (reps <= prev_reps) reps = prev_reps * std::max(2, static_cast<int>(targets[t] / targets[t - 1] + 0.5));
    prev_reps = reps;
    const int iters = std::max(kMinIters, static_cast<int>(secs / (reps * gemm_s)));
    std::vector<double> indep, diff[2];
    for (int p = 0; p < pairs; ++p) {
      double wall[3] = {0, 0, 0};
      for (int chain = 0; chain <= chains; ++chain) {  // independent, then each chain
        const double wait = chain == 2 ? nvme_wait_s : 0.0;
        const Clock::time_point t0 = Clock::now();
        SignalPtr next;
        if (chain > 0) next = SubmitCopyFetch(nvme, copy, wait, host.data(), dev.data(), kPayloadFloats);
        // Exactly `iters` fetches, each beside one iteration's work: no fetch after the last
        // (waited for alone, it would add its whole latency / iters to every iteration).
        for (int it = 0; it < iters; ++it) {
          for (int r = 0; r < reps; ++r) gemm();
          if (chain > 0) {
            ZINF_RETURN_IF_ERROR(next->Wait());
            if (it + 1 < iters) next = SubmitCopyFetch(nvme, copy, wait, host.data(), dev.data(), kPayloadFloats);
          }
        }
        wall[chain] = std::chrono::duration<double>(Clock::now() - t0).count() / iters;
      }
      indep.push_back(wall[0]);
      for (int c = 1; c <= chains; ++c) diff[c - 1].push_back(wall[c] - wall[0]);
    }
    for (int c = 0; c < chains; ++c) {
      // A difference at or below zero (noise) is recorded as 1 ns: a curve point must be positive.
      const CurvePoint pt{Median(indep), std::max(1e-9, Median(diff[c]))};
      if (curves[c].empty() || pt.x > curves[c].back().x) curves[c].push_back(pt);
      ctx.Progress("wake", fmt::format("{:.0f} us of GEMMs between fetches, {}: +{:.0f} us a fetch", pt.x * 1e6,
                                       c == 0 ? "copy lane" : "NVMe lane, then copy lane", pt.y * 1e6));
    }
  }
  hw.fetch_wake_curve_host = curves[0];
  hw.fetch_wake_curve_nvme = curves[1];
  const std::string how = fmt::format(
      "one process, {} x {} x {} Backend::Gemm calls ({:.0f} us each, {} threads) per iteration on its thread, beside a 1 KiB "
      "fetch through zrun's lanes ({{}}) issued one iteration ahead and waited for after the work (coupled) or none "
      "(independent), alternately, median of {}: x = independent seconds per iteration, y = coupled - independent",
      kM, kK, kN, gemm_s * 1e6, be->threads(), pairs);
  hw.provenance["node.fetch_wake_curve_host"] =
      fmt::format("measured: {}, {}", ctx.Today(), fmt::format(fmt::runtime(how), "a host->device copy lane"));
  hw.provenance["node.fetch_wake_curve_nvme"] =
      chains < 2 ? std::string("not measured: no NVMe read latency in the profile (the nvme probe sets it)")
                 : fmt::format("measured: {}, {}", ctx.Today(),
                               fmt::format(fmt::runtime(how), "an NVMe lane job waiting nvme.read_latency_s, then a copy lane"));
  return Status::Ok();
}

}  // namespace zinf
