// What coupling costs ranks that share too few cores (CPU backend, more ranks than cores, as
// 4 zrun ranks on a 2-core machine): 2 x cores rank processes, each its own ShmComm rank,
// each iteration a fixed amount of cache-resident work on the rank's thread (at zrun's
// compute nice) while (coupled) the next iteration's 1 KiB allgather is fetched through a
// chain of zrun's lanes (executor/zero3/lane.h) and waited for after the work, as zrun's
// compute thread waits for an op's parameters: the network lane alone (parameters on the
// device), a host->device copy lane first (on the host), or an NVMe lane first whose job
// waits the measured NVMe read latency (on NVMe); against the same work with no collective
// (independent), run alternately. Independent ranks share the cores at no cost (an
// iteration takes g x work / cores); coupled, every hand-off is a wake-up on the shared
// cores and every collective waits for the slowest rank: address-space switches (processes,
// as zrun's ranks are: rank threads of one process measured a quarter of it), and cores left
// idle while the last rank of a time-sliced pair finishes. The difference per collective is
// recorded against the independent iteration time, the compute a rank does between
// collectives as the time model counts it (at its share of the cores): node.coupling_curve,
// node.coupling_curve_host, node.coupling_curve_nvme. The payload is tiny: the collective's
// own copies are the allgather curve's, an NVMe request's CPU is nvme.cpu_per_request_s.
// The collectives themselves are measured among the same ranks back to back (the shm curves)
// and, from 256 KiB to 4 MiB, beside a GEMM on each rank's thread: the lane's extra CPU a
// collective (the _cpu_beside_ curves; 1.4x its back-to-back CPU in a synthetic layer).
// Each rank process is bound to one core (rank % cores), as zrun binds oversubscribed ranks.
// Measured on a 2-core VM, 4 ranks, nice 10, at 0.18 and 0.55 ms of work per iteration
// (2026-12-05): one lane +75-113 us a collective, two +114-168, three +234-304 (+167-254
// without the latency's wait): zrun's small-nvme-ckhost-r4 had paid ~340 us a collective.
// Earlier variants (2026-12-04, on the comm thread, not niced): +100 / ~0 us at 0.18 / 1.7 ms
// overlapped; waited for at once +170 / +660-870 us.
#include <Eigen/Core>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "core/cpu_clock.h"
#include "core/units.h"
#include "executor/backend/cpu/cpu_backend.h"
#include "executor/comm/shm_comm.h"
#include "executor/train/compute_priority.h"
#include "executor/zero3/lane.h"
#include "planner/profile/lane_fetch.h"
#include "planner/profile/probes.h"
#include "planner/profile/timing.h"

namespace zinf {

namespace {
using Clock = std::chrono::steady_clock;

constexpr size_t kWorkFloats = 64 * 1024;  // 256 KiB per rank: cache-resident, like a GEMM's tiles
constexpr size_t kPayloadFloats = 256;     // 1 KiB per rank: the copy is negligible

// One pass over the rank's buffer (a read-modify-write per cache line).
float Pass(std::vector<float>& w) {
  float s = 0;
  for (size_t i = 0; i < w.size(); i += 16) {
    s += w[i];
    w[i] = s * 1e-9f;
  }
  return s;
}

struct Run {
  int passes = 0, iters = 0;
  int lanes = 0;  // coupled: the fetch chain's lanes (1 allgather, 2 + copy, 3 + NVMe read); 0 independent
  // Instead of the work: `iters` blocking collectives of `count` floats per rank, back to back
  // on the rank's thread, or (beside) each on the network lane while the rank's thread runs
  // GEMMs on the buffer the one before gathered, as zrun gathers an op's parameters while the
  // op before computes.
  enum Op { kWork, kAllGather, kReduceScatter } op = kWork;
  size_t count = 0;
  bool beside = false;
};

// A run's wall seconds per iteration (rank 0, from a start barrier to an end barrier), and
// for collectives the CPU seconds rank 0's thread (back to back) or its lane (beside) spent
// on each.
struct RunTimes {
  double wall_s = 0, coll_cpu_s = 0;
};

// The beside runs' GEMM: the executor's forward linear (Y = X W^T) of kBesideTokens tokens by
// kBesideIn inputs, over as many outputs as the collective's whole buffer holds weights of
// that width, so its work grows with the buffer as a layer's GEMMs grow with its parameters.
constexpr int kBesideTokens = 256, kBesideIn = 512;

// Issues one fetch through `lanes` of zrun's lanes, as the coordinator chains them: an NVMe
// read (a job that waits `nvme_wait_s`, as a read's latency blocks its lane), a host->device
// copy, the allgather; returns the last stage's signal.
SignalPtr Fetch(Comm& c, Lane* const* lane, int lanes, double nvme_wait_s, float* host, float* dev, float* gathered) {
  SignalPtr prev;
  if (lanes >= 2) prev = SubmitCopyFetch(*lane[0], *lane[1], lanes >= 3 ? nvme_wait_s : 0.0, host, dev, kPayloadFloats);
  return lane[2]->Submit([prev, &c, dev, gathered] {
    if (prev) ZINF_RETURN_IF_ERROR(prev->Wait());
    return c.AllGather(dev, kPayloadFloats, gathered);
  });
}

// One rank's part of every run in order; returns rank 0's times for each.
Result<std::vector<RunTimes>> RankRuns(Comm& c, const std::vector<Run>& runs, double nvme_wait_s) {
  const int g = c.size();
  std::vector<float> work(kWorkFloats, 1.0f), host(kPayloadFloats, static_cast<float>(c.rank())), dev(kPayloadFloats),
      recv(kPayloadFloats * static_cast<size_t>(g));
  size_t most = 0;
  for (const Run& r : runs) most = std::max(most, r.count);
  std::vector<float> big_send(most * static_cast<size_t>(g), 1.0f), big_recv(most * static_cast<size_t>(g));
  // The beside runs' GEMM operands: two gathered buffers (one filled while the other is
  // computed on), the tokens and the outputs; a one-thread CPU backend's kernel (zrun's, one
  // thread a rank when ranks outnumber cores). Eigen's thread count is the process's: rank 0
  // runs in the profile's process, which gets its count back.
  const bool beside = std::any_of(runs.begin(), runs.end(), [](const Run& r) { return r.beside; });
  // (Restored on every return, the backend's creation failing included.)
  struct EigenThreads {
    int n;
    ~EigenThreads() { Eigen::setNbThreads(n); }
  } restore{Eigen::nbThreads()};
  std::vector<float> gathered[2], x, y;
  std::unique_ptr<Backend> be;
  if (beside) {
    for (auto& b : gathered) b.assign(most * static_cast<size_t>(g), 1e-3f);
    x.assign(static_cast<size_t>(kBesideTokens) * kBesideIn, 1e-3f);
    y.assign(static_cast<size_t>(kBesideTokens) * (most * static_cast<size_t>(g) / kBesideIn + 1), 0.0f);
    ZINF_ASSIGN_OR_RETURN(be, MakeCpuBackend(size_t{1} << 20, 1));
  }
  // After the buffers their jobs use (the lanes drain when destroyed, first). The rank's
  // thread computes at the nice zrun gives its compute thread here; its lanes, started
  // before it, stay at 0.
  // Bound to a core as zrun binds oversubscribed ranks (--bind auto), before the lanes exist.
  if (ThreadAffinityIsUnrestricted()) ZINF_RETURN_IF_ERROR(BindThreadToCpu(c.rank()));
  Lane nvme("zinf:nvme_read"), h2d("zinf:h2d"), net("zinf:network");
  Lane* const lane[3] = {&nvme, &h2d, &net};
  ZINF_RETURN_IF_ERROR(SetThreadNice(kOversubscribedComputeNice));
  std::vector<RunTimes> out;
  float s = 0;
  for (const Run& r : runs) {
    ZINF_RETURN_IF_ERROR(c.Barrier());
    const Clock::time_point t0 = Clock::now();
    double coll_cpu = 0;  // beside: written by the network lane's jobs, read after the last one's signal
    const double cpu0 = CurrentThreadCpuSeconds();
    for (int it = 0; r.op != Run::kWork && !r.beside && it < r.iters; ++it)
      ZINF_RETURN_IF_ERROR(r.op == Run::kAllGather ? c.AllGather(big_send.data(), r.count, big_recv.data())
                                                   : c.ReduceScatter(big_send.data(), r.count, big_recv.data()));
    if (r.op != Run::kWork && !r.beside) coll_cpu = CurrentThreadCpuSeconds() - cpu0;
    for (int it = 0; r.op != Run::kWork && r.beside && it < r.iters; ++it) {
      float* into = gathered[it % 2].data();
      SignalPtr done = net.Submit([&c, &r, &big_send, &big_recv, &coll_cpu, into] {
        const double t = CurrentThreadCpuSeconds();
        Status st = r.op == Run::kAllGather ? c.AllGather(big_send.data(), r.count, into)
                                            : c.ReduceScatter(big_send.data(), r.count, big_recv.data());
        coll_cpu += CurrentThreadCpuSeconds() - t;
        return st;
      });
      const int outs = static_cast<int>(r.count * static_cast<size_t>(g) / kBesideIn);
      be->Gemm(false, true, kBesideTokens, outs, kBesideIn, 1.f, x.data(), kBesideIn, gathered[(it + 1) % 2].data(),
               kBesideIn, 0.f, y.data(), outs);
      ZINF_RETURN_IF_ERROR(done->Wait());
    }
    // Coupled: the next iteration's fetch runs on the lanes while this one's work runs, and
    // is waited for after it (zrun gathers one op ahead).
    SignalPtr next;
    if (r.lanes > 0) next = Fetch(c, lane, r.lanes, nvme_wait_s, host.data(), dev.data(), recv.data());
    for (int it = 0; r.op == Run::kWork && it < r.iters; ++it) {
      for (int p = 0; p < r.passes; ++p) s += Pass(work);
      if (r.lanes > 0) {
        ZINF_RETURN_IF_ERROR(next->Wait());
        next = Fetch(c, lane, r.lanes, nvme_wait_s, host.data(), dev.data(), recv.data());
      }
    }
    if (next) ZINF_RETURN_IF_ERROR(next->Wait());
    ZINF_RETURN_IF_ERROR(c.Barrier());
    out.push_back({std::chrono::duration<double>(Clock::now() - t0).count() / r.iters + (s == 12345.f ? 1e-12 : 0),
                   coll_cpu / r.iters});
  }
  return out;
}

// Runs `runs` on g rank processes (this one rank 0, g - 1 forked children).
Result<std::vector<RunTimes>> RunRanks(int g, const std::vector<Run>& runs, double nvme_wait_s) {
  const std::string name = fmt::format("/zinf-coupling-{}", ::getpid());
  CommOptions opts;
  opts.timeout_s = 60;  // a rank that died must not hang the profile
  ZINF_ASSIGN_OR_RETURN(auto root, ShmComm::Open(name, 0, g, /*create=*/true, opts));
  std::vector<pid_t> kids;
  for (int q = 1; q < g; ++q) {
    const pid_t pid = ::fork();
    if (pid == 0) {  // child: its own rank; leaves without running the parent's destructors
      Result<std::unique_ptr<ShmComm>> c = ShmComm::Open(name, q, g, /*create=*/false, opts);
      bool ok = c.ok() && RankRuns(**c, runs, nvme_wait_s).ok();
      if (c.ok()) c->reset();
      ::_exit(ok ? 0 : 1);
    }
    if (pid < 0) break;
    kids.push_back(pid);
  }
  // Rank 0 on a thread of its own: its nice must not outlive the probe on this thread.
  Result<std::vector<RunTimes>> out = IoError("fork failed for a coupling rank");
  if (static_cast<int>(kids.size()) == g - 1) std::thread([&] { out = RankRuns(*root, runs, nvme_wait_s); }).join();
  if (!out.ok())
    for (pid_t k : kids) ::kill(k, SIGKILL);
  for (pid_t k : kids) ::waitpid(k, nullptr, 0);
  root.reset();
  (void)ShmComm::Unlink(name);
  return out;
}
}  // namespace

Status ProbeCoupling(ProfileContext& ctx, HwProfile& hw) {
  hw.coupling_curve.clear();
  hw.coupling_curve_host.clear();
  hw.coupling_curve_nvme.clear();
  hw.shm_allgather_curve.clear();
  hw.shm_reduce_scatter_curve.clear();
  hw.shm_allgather_cpu_beside_curve.clear();
  hw.shm_reduce_scatter_cpu_beside_curve.clear();
  hw.shm_allgather_cpu_curve.clear();
  hw.shm_reduce_scatter_cpu_curve.clear();
  if (hw.backend != "cpu") return Status::Ok();
  const int cores = static_cast<int>(std::max<int64_t>(1, hw.cpu_cores));
  const int g = 2 * cores;
  const bool quick = ctx.options().quick;
  // One pass alone, to size the work per iteration.
  std::vector<float> work(kWorkFloats, 1.0f);
  float s = 0;
  int n = 0;
  const Clock::time_point c0 = Clock::now();
  while (std::chrono::duration<double>(Clock::now() - c0).count() < 0.05 || n < 100) {
    s += Pass(work);
    ++n;
  }
  const double pass_s = std::chrono::duration<double>(Clock::now() - c0).count() / n + (s == 12345.f ? 1e-12 : 0);

  const std::vector<double> targets = quick ? std::vector<double>{3e-4, 3e-3} : std::vector<double>{1e-4, 3e-4, 1e-3, 3e-3, 1e-2};
  const int pairs = quick ? 1 : 3;
  const double secs = quick ? 0.15 : 0.3;  // per run
  // The chains measured: 1, 2 lanes, and 3 where the NVMe probe measured a read's latency.
  const double nvme_wait_s = hw.nvme_read_latency_s;
  const int chains = nvme_wait_s > 0 ? 3 : 2;
  std::vector<Run> runs;
  for (double target : targets) {
    // Independent, g ranks on `cores` cores: an iteration takes passes x pass_s x g / cores.
    const int passes = std::max(1, static_cast<int>(target * cores / (g * pass_s) + 0.5));
    const int iters = std::max(10, static_cast<int>(secs / target));
    for (int p = 0; p < pairs; ++p)  // each round: independent, then every chain, alternately
      for (int lanes = 0; lanes <= chains; ++lanes) runs.push_back({passes, iters, lanes});
  }
  // The collectives themselves among the same ranks, back to back: whole buffers of `x`
  // bytes (x / g per rank), blocking, on the ranks' own threads as zrun's lanes run them; and
  // from 256 KiB to 4 MiB, right after them, the same collectives beside the ranks' GEMMs.
  const std::vector<double> sizes = quick ? std::vector<double>{256 << 10, 4 << 20}
                                          : std::vector<double>{64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20};
  // Per size, op (allgather, reduce-scatter) and mode (back to back, beside): the runs' indices.
  std::vector<std::array<std::array<std::vector<size_t>, 2>, 2>> at(sizes.size());
  for (size_t si = 0; si < sizes.size(); ++si) {
    const double x = sizes[si];
    const bool beside = x >= (256 << 10) && x <= (4 << 20);
    for (int p = 0; p < pairs; ++p)
      for (int mode = 0; mode < (beside ? 2 : 1); ++mode)
        for (int o = 0; o < 2; ++o) {
          Run r;
          r.op = o == 0 ? Run::kAllGather : Run::kReduceScatter;
          r.count = static_cast<size_t>(x) / sizeof(float) / static_cast<size_t>(g);
          r.beside = mode == 1;
          r.iters = r.beside ? static_cast<int>(std::clamp((quick ? 32.0 : 64.0) * (1 << 20) / x, 8.0, 200.0))
                             : static_cast<int>(std::clamp((quick ? 64.0 : 256.0) * (1 << 20) / x, 5.0, 400.0));
          at[si][static_cast<size_t>(o)][static_cast<size_t>(mode)].push_back(runs.size());
          runs.push_back(r);
        }
  }
  ctx.Progress("coupling", fmt::format("{} rank processes on {} cores, {} runs", g, cores, runs.size()));
  Result<std::vector<RunTimes>> measured = RunRanks(g, runs, nvme_wait_s);
  if (!measured.ok()) {  // optional figures: the profile goes on without them
    for (const char* k : {"node.coupling_curve", "node.coupling_curve_host", "node.coupling_curve_nvme",
                          "network.shm_allgather_curve", "network.shm_reduce_scatter_curve",
                          "network.shm_allgather_cpu_beside_curve", "network.shm_reduce_scatter_cpu_beside_curve",
                          "network.shm_allgather_cpu_curve", "network.shm_reduce_scatter_cpu_curve"})
      hw.provenance[k] = fmt::format("not measured: {} rank processes on {} cores: {}", g, cores, measured.status().ToString());
    ctx.Progress("coupling", "not measured: " + measured.status().ToString());
    return Status::Ok();
  }
  std::vector<double> wall;
  for (const RunTimes& t : *measured) wall.push_back(t.wall_s);
  auto median_of = [&](const std::vector<size_t>& idx, double RunTimes::*f) {
    std::vector<double> v;
    for (size_t i : idx) v.push_back((*measured)[i].*f);
    return Median(v);
  };
  std::vector<CurvePoint>* curves[3] = {&hw.coupling_curve, &hw.coupling_curve_host, &hw.coupling_curve_nvme};
  const size_t round = static_cast<size_t>(chains) + 1;
  for (int lanes = 1; lanes <= chains; ++lanes) {
    std::vector<CurvePoint> curve;
    for (size_t t = 0; t < targets.size(); ++t) {
      std::vector<double> indep, diff;
      for (int p = 0; p < pairs; ++p) {
        const size_t i = (t * static_cast<size_t>(pairs) + static_cast<size_t>(p)) * round;
        indep.push_back(wall[i]);
        diff.push_back(wall[i + static_cast<size_t>(lanes)] - wall[i]);
      }
      // A difference at or below zero (noise) is recorded as 1 ns: a curve point must be positive.
      const double x = Median(indep), y = std::max(1e-9, Median(diff));
      curve.push_back({x, y});
      ctx.Progress("coupling", fmt::format("{} ranks on {} cores, {:.0f} us between collectives, {} lane(s): +{:.0f} us a collective",
                                           g, cores, x * 1e6, lanes, y * 1e6));
    }
    std::sort(curve.begin(), curve.end(), [](const CurvePoint& a, const CurvePoint& b) { return a.x < b.x; });
    // Strictly increasing x for the curve's reader (two targets can round to one pass count).
    std::vector<CurvePoint>& out = *curves[lanes - 1];
    for (const CurvePoint& p : curve)
      if (out.empty() || p.x > out.back().x) out.push_back(p);
  }
  for (size_t si = 0; si < sizes.size(); ++si) {
    std::string beside;
    for (size_t o = 0; o < 2; ++o) {
      const double bus = sizes[si] * (g - 1) / g / median_of(at[si][o][0], &RunTimes::wall_s);
      (o == 0 ? hw.shm_allgather_curve : hw.shm_reduce_scatter_curve).push_back({sizes[si], bus});
      // The same collective's CPU on rank 0's thread back to back (at least 1 ns: a curve
      // point must be positive).
      const double alone = std::max(1e-9, median_of(at[si][o][0], &RunTimes::coll_cpu_s));
      (o == 0 ? hw.shm_allgather_cpu_curve : hw.shm_reduce_scatter_cpu_curve).push_back({sizes[si], alone});
      if (at[si][o][1].empty()) continue;
      // A difference at or below zero (noise) is recorded as 1 ns: a curve point must be positive.
      const double extra = std::max(1e-9, median_of(at[si][o][1], &RunTimes::coll_cpu_s) - alone);
      (o == 0 ? hw.shm_allgather_cpu_beside_curve : hw.shm_reduce_scatter_cpu_beside_curve).push_back({sizes[si], extra});
      beside += fmt::format("{}{} CPU {:.0f} us a rank back to back, +{:.0f} us beside GEMMs", beside.empty() ? "; " : ", ",
                            o == 0 ? "allgather" : "reduce-scatter", alone * 1e6, extra * 1e6);
    }
    ctx.Progress("coupling", fmt::format("{} ranks, {}: allgather {}, reduce-scatter {}{}", g, FormatBytes(sizes[si]),
                                         FormatBandwidth(hw.shm_allgather_curve.back().y),
                                         FormatBandwidth(hw.shm_reduce_scatter_curve.back().y), beside));
  }
  for (const char* k : {"network.shm_allgather_curve", "network.shm_reduce_scatter_curve"})
    hw.provenance[k] = fmt::format(
        "measured: {}, {} rank processes (ShmComm, each bound to a core as zrun binds them) on {} cores, blocking {} of whole buffers of x bytes back to back on "
        "the ranks' own threads, median of {}: y = bus bandwidth, x (g - 1) / g / time",
        ctx.Today(), g, cores, std::string(k).find("reduce") != std::string::npos ? "reduce-scatters" : "allgathers", pairs);
  for (const char* k : {"network.shm_allgather_cpu_curve", "network.shm_reduce_scatter_cpu_curve"})
    hw.provenance[k] = fmt::format(
        "measured: {}, {} rank processes (ShmComm, each bound to a core as zrun binds them) on {} cores, the shm curve's blocking {} of "
        "whole buffers of x bytes back to back on the ranks' own threads: the CPU time of rank 0's thread a collective, median of {}: "
        "y = seconds a collective and rank",
        ctx.Today(), g, cores, std::string(k).find("reduce") != std::string::npos ? "reduce-scatters" : "allgathers", pairs);
  for (const char* k : {"network.shm_allgather_cpu_beside_curve", "network.shm_reduce_scatter_cpu_beside_curve"}) {
    const char* op = std::string(k).find("reduce") != std::string::npos ? "reduce-scatter" : "allgather";
    hw.provenance[k] = fmt::format(
        "measured: {}, {} rank processes (ShmComm, each bound to a core as zrun binds them) on {} cores: the CPU time of "
        "one {} of a whole buffer of x bytes on each rank's network lane while the rank's thread (nice {}) runs a one-thread "
        "{} x {} x (x / {} B) Backend::Gemm on the buffer the one before gathered, less the CPU of the same {} back to back on "
        "the rank's own thread, run just before it; rank 0, median of {}: y = extra seconds a collective and rank",
        ctx.Today(), g, cores, op, kOversubscribedComputeNice, kBesideTokens, kBesideIn, kBesideIn * 4, op, pairs);
  }
  const char* chain_names[3] = {"the allgather on the network lane alone",
                                 "a host->device copy lane, then the allgather on the network lane",
                                 "an NVMe lane job waiting nvme.read_latency_s, a copy lane, then the allgather"};
  const char* keys[3] = {"node.coupling_curve", "node.coupling_curve_host", "node.coupling_curve_nvme"};
  for (int lanes = 1; lanes <= 3; ++lanes)
    hw.provenance[keys[lanes - 1]] =
        lanes > chains
            ? std::string("not measured: no NVMe read latency in the profile (the nvme probe sets it)")
            : fmt::format("measured: {}, {} rank processes (ShmComm, each bound to a core as zrun binds them) on {} cores, passes over {} KiB of cache-resident work per "
                          "iteration and rank on its thread at nice {}, beside a {} KiB fetch through zrun's lanes ({}) issued one "
                          "iteration ahead and waited for after the work (coupled) or none (independent), alternately, median "
                          "of {}: x = independent seconds per iteration, y = coupled - independent",
                          ctx.Today(), g, cores, kWorkFloats * 4 / 1024, kOversubscribedComputeNice, kPayloadFloats * 4 / 1024,
                          chain_names[lanes - 1], pairs);
  return Status::Ok();
}

}  // namespace zinf
