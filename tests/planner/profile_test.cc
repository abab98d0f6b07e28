// zplan profile: a quick profile of this machine parses back exactly, covers every value
// with provenance, leaves no files behind, and rejects bad NVMe directories clearly.
#include "planner/profile/probe.h"

#include <gtest/gtest.h>

#include "tests/executor/zero3/tiny_plan.h"
#include "tests/remove_at_exit.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <thread>
#include <tuple>

#include <unistd.h>

#include "core/hw_profile.h"
#include "planner/profile/calibrate.h"
#include "planner/profile/probes.h"
#include "planner/profile/timing.h"

namespace zinf {
namespace {

namespace fs = std::filesystem;

TEST(ProbeTiming, MedianAndRunCounts) {
  EXPECT_EQ(Median({}), 0);
  EXPECT_EQ(Median({3, 1, 2}), 2);
  EXPECT_EQ(Median({4, 1, 3, 2}), 3);  // upper middle
  EXPECT_EQ(Median({5, 100, 5, 5, 0}), 5);
  std::vector<double> t;
  int calls = 0;
  TimeRuns(0, 4, [&] { ++calls; }, &t);  // no budget: exactly the minimum
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(t.size(), 4u);
  TimeRuns(1e9, 1, [&] { ++calls; }, &t);  // a budget never reached: capped at 2000 runs
  EXPECT_EQ(t.size(), 2004u);
  for (double x : t) EXPECT_GE(x, 0);
}

TEST(ProbeTiming, RoundsVisitEveryShapeInTheirOwnOrder) {
  EXPECT_EQ(RoundOrder(5, 0), (std::vector<size_t>{0, 1, 2, 3, 4}));  // the first in order
  std::vector<size_t> r1 = RoundOrder(40, 1), r2 = RoundOrder(40, 2);
  EXPECT_NE(r1, r2);
  EXPECT_NE(r1, RoundOrder(40, 0));
  EXPECT_EQ(r1, RoundOrder(40, 1));  // reproducible
  std::sort(r1.begin(), r1.end());
  EXPECT_EQ(r1, RoundOrder(40, 0));  // a permutation: every shape once
}

TEST(ProbeTiming, RoundSpreadIsTheMedianShapesSlowestOverFastestRound) {
  EXPECT_EQ(RoundSpread({}), 1.0);
  EXPECT_EQ(RoundSpread({{2.0}}), 1.0);  // one round: nothing to compare
  // Ratios 1.5, 1.1 and 3: the median is 1.5.
  EXPECT_DOUBLE_EQ(RoundSpread({{2.0, 3.0, 2.5}, {1.0, 1.1, 1.0}, {1.0, 3.0}}), 1.5);
}

TEST(ProbeTiming, RoundsMeanLeavesStalledRoundsOut) {
  EXPECT_EQ(RoundsMean({}), 0.0);
  // Drift (here 20%) stays in the mean: a machine slow part of the time is slow for that part.
  EXPECT_DOUBLE_EQ(RoundsMean({1.0, 1.2, 1.1}), 1.1);
  // A round 100x slower than its shape's median round is a stall: left out.
  EXPECT_DOUBLE_EQ(RoundsMean({1.0, 100.0, 1.2}), 1.1);
  EXPECT_DOUBLE_EQ(RoundsMean({2.0, 1.0, 1.0}), 1.0);  // 2x: over the 1.5x line
  EXPECT_DOUBLE_EQ(RoundsMean({1.4, 1.0, 1.0}), 3.4 / 3);  // 1.4x: kept
  EXPECT_EQ(StalledRounds({{1.0, 100.0, 1.2}, {1.0, 1.2, 1.1}, {2.0, 1.0, 1.0}}), 2);
  EXPECT_EQ(StalledRounds({}), 0);
}

TEST(ProfileProgress, ALogGetsWholeLinesEachProbesFirstAndLast) {
  if (::isatty(STDERR_FILENO) == 1) GTEST_SKIP() << "stderr is a terminal: the status-line mode (run under meson test)";
  ::testing::internal::CaptureStderr();
  {
    ProfileContext ctx(ProfileOptions{});
    ctx.Progress("gemm", "1/3");
    ctx.Progress("gemm", "2/3");  // within 5 s of the first: held back
    ctx.Progress("gemm", "done");  // held back too, replacing it
    ctx.Progress("adam", "start");  // a new probe: the held line first, then its own
    ctx.Progress("adam", "result");
    ctx.EndProgress();  // the held result
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "zplan profile: [gemm] 1/3\n"
            "zplan profile: [gemm] done\n"
            "zplan profile: [adam] start\n"
            "zplan profile: [adam] result\n");
}

TEST(NvmeSetting, OneSettingServesBothDirections) {
  // Fastest reads at 64 KiB x 32, fastest writes at 4 MiB x 4; zrun runs both at one
  // setting, so the pick is the one that moves a byte each way fastest: 1 MiB x 16.
  std::vector<NvmeSetting> m = {{64 << 10, 32, 0.40e9, 3.3e9}, {1 << 20, 16, 1.40e9, 3.0e9}, {4 << 20, 4, 1.60e9, 1.4e9}};
  const NvmeSetting* p = PickNvmeSetting(m);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->block, 1u << 20);
  EXPECT_EQ(p->depth, 16u);
  EXPECT_DOUBLE_EQ(p->write_bw, 1.40e9);
  EXPECT_DOUBLE_EQ(p->read_bw, 3.0e9);
  m[1].write_bw = 0;  // a setting that measured nothing is never picked
  p = PickNvmeSetting(m);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->block, 4u << 20);
  EXPECT_EQ(PickNvmeSetting({}), nullptr);
}

TEST(Profile, QuickProfileRoundTripsWithProvenance) {
  fs::path dir = fs::path(::testing::TempDir()) / "zinf-profile-test";
  fs::create_directories(dir);
  testing::RemoveAtExit(dir.string());
  ProfileOptions o;
  o.quick = true;
  o.nvme_dir = dir.string();
  o.device_memory_bytes = 1 << 30;
  Result<HwProfile> hw = ProfileThisMachine(o);
  ASSERT_TRUE(hw.ok()) << hw.status().ToString();
  EXPECT_EQ(hw->backend, "cpu");
  EXPECT_GT(hw->achievable_flops, 1e8);
  EXPECT_GT(hw->nvme_read_bw, 1e6);
  EXPECT_GT(hw->nvme_write_bw, 1e6);
  // The CPU an NVMe request takes: a syscall and a wake-up at least, far below a second.
  EXPECT_GT(hw->nvme_cpu_per_request_s + hw->nvme_cpu_per_byte_s * 65536, 1e-7);
  EXPECT_LT(hw->nvme_cpu_per_request_s, 0.1);
  EXPECT_TRUE(hw->provenance.count("nvme.cpu_per_request_s"));
  EXPECT_GT(hw->cpu_adam_params_per_s, 1e6);
  EXPECT_GT(hw->host_mem_bw, 1e8);
  EXPECT_FALSE(hw->gemm_curve.empty());
  ASSERT_EQ(hw->gemm_token_curves.size(), 2u);  // --quick: 128 and 1024 tokens
  EXPECT_EQ(hw->gemm_token_curves[0].tokens, 128);
  EXPECT_EQ(hw->gemm_token_curves[1].fwd.size(), hw->gemm_token_curves[1].bwd.size());
  EXPECT_FALSE(hw->allgather_curve.empty());
  // The coupling of 2 x cores rank processes (--quick: two points), increasing x, positive y,
  // for each fetch chain. The NVMe chain waits nvme.read_latency_s, a 64 KiB read's wall time
  // beyond its bytes at the read bandwidth. Where that came out at zero (it did once in the
  // sanitizer build, on the page-cache "drive" of a temporary directory, whose small reads cost
  // little beyond their bytes), the NVMe chains are not measured, and their provenance says so.
  EXPECT_GE(hw->nvme_read_latency_s, 0);
  const bool nvme_chain = hw->nvme_read_latency_s > 0;
  const std::tuple<const char*, const std::vector<CurvePoint>*, bool> curves[] = {
      {"node.coupling_curve", &hw->coupling_curve, true},
      {"node.coupling_curve_host", &hw->coupling_curve_host, true},
      {"node.coupling_curve_nvme", &hw->coupling_curve_nvme, nvme_chain},
      // And one rank's fetch hand-offs beside its GEMMs, per chain (--quick: two points).
      {"node.fetch_wake_curve_host", &hw->fetch_wake_curve_host, true},
      {"node.fetch_wake_curve_nvme", &hw->fetch_wake_curve_nvme, nvme_chain}};
  for (const auto& [key, curve, measured] : curves) {
    SCOPED_TRACE(key);
    const std::vector<CurvePoint>& c = *curve;
    ASSERT_TRUE(hw->provenance.count(key));
    if (!measured) {
      EXPECT_TRUE(c.empty());
      EXPECT_EQ(hw->provenance.at(key).rfind("not measured: no NVMe read latency", 0), 0u) << hw->provenance.at(key);
      continue;
    }
    ASSERT_EQ(c.size(), 2u);
    EXPECT_LT(c[0].x, c[1].x);
    EXPECT_GT(c[0].y, 0);
    EXPECT_LT(c[1].y, 0.1);
    EXPECT_EQ(hw->provenance.at(key).rfind("measured:", 0), 0u) << hw->provenance.at(key);
  }
  // The collectives among the same ranks (--quick: 256 KiB and 4 MiB buffers).
  for (const auto* c : {&hw->shm_allgather_curve, &hw->shm_reduce_scatter_curve}) {
    ASSERT_EQ(c->size(), 2u);
    EXPECT_EQ((*c)[0].x, 256 << 10);
    EXPECT_GT((*c)[0].y, 1e6);
  }
  // And their CPU back to back and extra CPU beside the ranks' GEMMs (--quick: the same two
  // sizes), measured.
  for (const auto& [key, c] : {std::pair{"network.shm_allgather_cpu_beside_curve", &hw->shm_allgather_cpu_beside_curve},
                               std::pair{"network.shm_reduce_scatter_cpu_beside_curve", &hw->shm_reduce_scatter_cpu_beside_curve},
                               std::pair{"network.shm_allgather_cpu_curve", &hw->shm_allgather_cpu_curve},
                               std::pair{"network.shm_reduce_scatter_cpu_curve", &hw->shm_reduce_scatter_cpu_curve}}) {
    SCOPED_TRACE(key);
    ASSERT_EQ(c->size(), 2u);
    EXPECT_EQ((*c)[0].x, 256 << 10);
    EXPECT_EQ((*c)[1].x, 4 << 20);
    for (const CurvePoint& p : *c) {
      EXPECT_GT(p.y, 0);
      EXPECT_LT(p.y, 0.1);  // seconds of CPU a collective
    }
    ASSERT_TRUE(hw->provenance.count(key));
    EXPECT_EQ(hw->provenance.at(key).rfind("measured:", 0), 0u) << hw->provenance.at(key);
  }
  // The executor's arithmetic-bound elementwise kernels, forward and backward.
  for (double rate : {hw->gelu_elems_per_s, hw->gelu_bwd_elems_per_s, hw->cross_entropy_elems_per_s,
                      hw->cross_entropy_bwd_elems_per_s})
    EXPECT_GT(rate, 1e6);
  // An NVMe read's latency beyond its bytes: measured (on tmpfs or a page cache it may be 0).
  EXPECT_TRUE(hw->provenance.count("nvme.read_latency_s"));
  EXPECT_GE(hw->nvme_read_latency_s, 0.0);
  EXPECT_LT(hw->nvme_read_latency_s, 0.1);
  // And with a spinning thread on every core: measured beside it.
  EXPECT_TRUE(hw->provenance.count("nvme.read_latency_busy_s"));
  EXPECT_GE(hw->nvme_read_latency_busy_s, 0.0);
  EXPECT_LT(hw->nvme_read_latency_busy_s, 0.1);
  // The NVMe lane's rate by transfer size, reads and writes alternating (--quick: 3 sizes).
  for (const auto* c : {&hw->nvme_lane_read_curve, &hw->nvme_lane_write_curve}) {
    ASSERT_EQ(c->size(), 3u);
    EXPECT_EQ((*c)[0].x, 64 << 10);
    for (size_t i = 0; i < c->size(); ++i) {
      EXPECT_GT((*c)[i].y, 1e6);
      if (i) {
        EXPECT_GT((*c)[i].x, (*c)[i - 1].x);
      }
    }
  }
  EXPECT_EQ(hw->provenance.at("nvme.lane_read_curve").rfind("measured:", 0), 0u);
  EXPECT_TRUE(hw->provenance.count("nvme.lane_write_curve"));
  // The lane and CPU Adam beside each other: ratios of wall times, about 1 or above (a noisy
  // round on a shared machine can dip below), measured with their method.
  ASSERT_TRUE(hw->HasLaneAdamCoupling());
  for (double f : {hw->nvme_lane_read_beside_adam, hw->nvme_lane_write_beside_adam, hw->nvme_adam_beside_lane}) {
    EXPECT_GT(f, 0.5);
    EXPECT_LT(f, 50.0);
  }
  EXPECT_EQ(hw->provenance.at("nvme.adam_beside_lane").rfind("measured:", 0), 0u);
  // Memory passes over cached data, by working set: 1 to 64 MiB, doubling, measured rates.
  ASSERT_EQ(hw->hot_pass_curve.size(), 7u);
  EXPECT_EQ(hw->hot_pass_curve.front().x, 1 << 20);
  EXPECT_EQ(hw->hot_pass_curve.back().x, 64 << 20);
  for (size_t i = 0; i < hw->hot_pass_curve.size(); ++i) {
    EXPECT_GT(hw->hot_pass_curve[i].y, 1e8);
    if (i) {
      EXPECT_EQ(hw->hot_pass_curve[i].x, 2 * hw->hot_pass_curve[i - 1].x);
    }
  }
  EXPECT_EQ(hw->provenance.at("device.hot_pass_curve").rfind("measured:", 0), 0u);
  // A parallel kernel's launch: measured (0 with one thread: no team); tens of microseconds on
  // an idle machine, but on a busy one the team waits for its threads' turns on the cores
  // (7.97 ms beside a sanitizer build on 2 cores): under a tenth of a second, never seconds.
  EXPECT_TRUE(hw->provenance.count("device.kernel_launch_s"));
  EXPECT_GE(hw->kernel_launch_s, 0.0);
  EXPECT_LT(hw->kernel_launch_s, 0.1);
  for (const std::string& k : HwProfileOptionalValueKeys())
    if (k.find("elems_per_s") != std::string::npos) {
      EXPECT_TRUE(hw->provenance.count(k)) << "no provenance for " << k;
    }
  for (const std::string& k : HwProfileValueKeys()) EXPECT_TRUE(hw->provenance.count(k)) << "no provenance for " << k;
  // The probe's files are gone.
  EXPECT_TRUE(fs::is_empty(dir)) << "files left in " << dir;
  const std::string path = (dir / "profile.yaml").string();
  ASSERT_TRUE(SaveHwProfile(*hw, path).ok());
  Result<HwProfile> back = LoadHwProfile(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(HwProfileToYaml(*back), HwProfileToYaml(*hw));
  fs::remove_all(dir);
}

TEST(Profile, BadNvmeDirIsAClearError) {
  ProfileOptions o;
  o.quick = true;
  o.nvme_dir = "/nonexistent/zinf-nvme";
  Result<HwProfile> hw = ProfileThisMachine(o);
  ASSERT_FALSE(hw.ok());
  EXPECT_EQ(hw.status().code(), Code::kNotFound);
  EXPECT_NE(hw.status().message().find("/nonexistent/zinf-nvme"), std::string::npos) << hw.status().message();
  const std::string file = ::testing::TempDir() + "zinf-not-a-dir";
  std::ofstream(file) << "x";
  testing::RemoveAtExit(file);
  o.nvme_dir = file;
  hw = ProfileThisMachine(o);
  ASSERT_FALSE(hw.ok());
  EXPECT_EQ(hw.status().code(), Code::kInvalidArgument);
  EXPECT_NE(hw.status().message().find("not a directory"), std::string::npos);
}

TEST(Profile, ThreadsPerDeviceSetTheDevicesPerNode) {
  EXPECT_EQ(CpuDevicesPerNode(2, 0), 1);  // all cores: one device
  EXPECT_EQ(CpuDevicesPerNode(2, 2), 1);
  EXPECT_EQ(CpuDevicesPerNode(2, 1), 2);
  EXPECT_EQ(CpuDevicesPerNode(16, 4), 4);
  EXPECT_EQ(CpuDevicesPerNode(16, 5), 3);  // whole devices only
  EXPECT_EQ(CpuDevicesPerNode(2, 8), 1);  // more threads than cores: still one
}

TEST(Profile, OnlyReMeasuresTheNamedProbesIntoTheBase) {
  HwProfile base;
  base.name = "base-box";
  base.backend = "cpu";
  base.description = "an earlier profile";
  base.nvme_read_bw = 1.25e9;  // figures of probes not re-measured stay exactly as they were
  base.cpu_adam_params_per_s = 3.5e8;
  base.host_mem_bw = 1.0;  // the memory probe re-measures this
  ProfileOptions o;
  o.quick = true;
  o.only = {"memory"};
  o.base = &base;
  Result<HwProfile> hw = ProfileThisMachine(o);
  ASSERT_TRUE(hw.ok()) << hw.status().ToString();
  EXPECT_EQ(hw->name, "base-box");
  EXPECT_EQ(hw->nvme_read_bw, 1.25e9);
  EXPECT_EQ(hw->cpu_adam_params_per_s, 3.5e8);
  EXPECT_GT(hw->host_mem_bw, 1e8);
  EXPECT_TRUE(hw->gemm_curve.empty());  // the GEMM probe did not run
  EXPECT_NE(hw->description.find("an earlier profile; memory re-measured on"), std::string::npos) << hw->description;

  // A base measured with one thread per device (2 devices on 2 cores) is re-measured so.
  base.cpu_cores = 2;
  base.gpus_per_node = 2;
  hw = ProfileThisMachine(o);
  ASSERT_TRUE(hw.ok()) << hw.status().ToString();
  EXPECT_NE(hw->provenance["bandwidth.host_memory"].find("on 1 threads,"), std::string::npos)
      << hw->provenance["bandwidth.host_memory"];

  o.only = {"memory", "gemmm"};
  hw = ProfileThisMachine(o);
  ASSERT_FALSE(hw.ok());
  EXPECT_EQ(hw.status().code(), Code::kInvalidArgument);
  EXPECT_NE(hw.status().message().find("'gemmm'"), std::string::npos) << hw.status().message();
  EXPECT_NE(hw.status().message().find("gemm, copy"), std::string::npos) << hw.status().message();
  o.only = {"memory"};
  o.base = nullptr;
  hw = ProfileThisMachine(o);
  ASSERT_FALSE(hw.ok());
  EXPECT_EQ(hw.status().code(), Code::kInvalidArgument);
}

// A profile of one-thread devices (--threads 1) also times a core shared by two one-thread
// GEMM loops against one alone: a ratio above 0 and at most 1, with its method. A profile of
// all cores as one device does not (zrun runs one rank a core or fewer with it).
TEST(Profile, OneThreadProfileTimesSharedCores) {
  HwProfile base;
  base.name = "base-box";
  base.backend = "cpu";
  base.cpu_cores = std::max(1u, std::thread::hardware_concurrency());
  ProfileOptions o;
  o.quick = true;
  o.only = {"gemm"};
  o.base = &base;
  o.threads = 1;
  Result<HwProfile> hw = ProfileThisMachine(o);
  ASSERT_TRUE(hw.ok()) << hw.status().ToString();
  ASSERT_EQ(hw->shared_core_curve.size(), 3u);  // three working sets, increasing
  for (size_t i = 0; i < hw->shared_core_curve.size(); ++i) {
    EXPECT_GT(hw->shared_core_curve[i].y, 0.1);
    EXPECT_LE(hw->shared_core_curve[i].y, 1.0);
    if (i) {
      EXPECT_GT(hw->shared_core_curve[i].x, hw->shared_core_curve[i - 1].x);
    }
  }
  EXPECT_EQ(hw->shared_core_curve.front().x, 4.0 * (256 * 128 + 128 * 512 + 256 * 512));
  EXPECT_EQ(hw->provenance.at("device.shared_core_curve").rfind("measured:", 0), 0u);
  o.threads = 0;
  base.gpus_per_node = 1;
  hw = ProfileThisMachine(o);
  ASSERT_TRUE(hw.ok()) << hw.status().ToString();
  EXPECT_TRUE(hw->shared_core_curve.empty());
  EXPECT_EQ(hw->SharedCoreSpeed(1e6), 1.0);
}

// zplan plan --calibrate: the plan's linears timed now against the profile's rates for them.
// A profile 10^4 times too fast reads a speed far below 1, one 10^4 times too slow far above:
// the direction cannot come out inverted, whatever the machine's noise.
TEST(Calibration, TimesThePlansLinearsAgainstTheProfile) {
  const Plan p = TinyPlan("device", "device", "device", 1, 2);
  HwProfile hw;
  hw.name = "box";
  hw.backend = "cpu";
  hw.cpu_cores = 2;
  hw.gpus_per_node = 2;  // a --threads 1 profile: one thread per device
  for (double rate : {1e15, 1e6}) {
    hw.achievable_flops = rate;
    hw.gemm_curve = {{1e3, rate}, {1e12, rate}};
    Result<Calibration> c = CalibrateComputeSpeed(p, hw, 0.05);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->threads, 1);
    EXPECT_GE(c->totals.checks, 1);
    EXPECT_GT(c->totals.measured_s, 0.0);
    EXPECT_LE(c->totals.min, c->speed());
    EXPECT_GE(c->totals.max, c->speed());
    if (rate > 1e9) EXPECT_LT(c->speed(), 0.1) << "a profile 10^4x too fast";
    else EXPECT_GT(c->speed(), 10.0) << "a profile 10^4x too slow";
  }
  hw.backend = "cuda";
  Result<Calibration> c = CalibrateComputeSpeed(p, hw, 0.05);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::kInvalidArgument);
  EXPECT_NE(c.status().message().find("--calibrate"), std::string::npos) << c.status().message();
  hw.backend = "cpu";
  hw.gemm_curve.clear();
  hw.gemm_bwd_curve.clear();
  hw.achievable_flops = 0;
  c = CalibrateComputeSpeed(p, hw, 0.05);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("no GEMM rates"), std::string::npos) << c.status().message();
}

}  // namespace
}  // namespace zinf
