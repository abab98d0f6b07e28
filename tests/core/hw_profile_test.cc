// HwProfile: the shipped hwprofiles/*.yaml, round trips, provenance, curves, bad files.
#include "core/hw_profile.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <set>
#include <string>

#include "tests/core/test_util.h"

namespace zinf {
namespace {

using testing::ReplaceOnce;
using testing::ScratchDir;
using testing::ShippedYaml;
using testing::SourceDir;
using testing::Stem;

std::string HwPath(const std::string& name) { return SourceDir() + "/hwprofiles/" + name + ".yaml"; }

HwProfile Load(const std::string& path) {
  Result<HwProfile> hw = LoadHwProfile(path);
  EXPECT_TRUE(hw.ok()) << path << ": " << hw.status().ToString();
  return hw.ok() ? *hw : HwProfile{};
}

void ExpectSameCurve(const std::vector<CurvePoint>& a, const std::vector<CurvePoint>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].x, b[i].x);
    EXPECT_EQ(a[i].y, b[i].y);
  }
}

void ExpectSameProfile(const HwProfile& a, const HwProfile& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.description, b.description);
  EXPECT_EQ(a.backend, b.backend);
  EXPECT_EQ(a.gpus_per_node, b.gpus_per_node);
  EXPECT_EQ(a.cpu_cores, b.cpu_cores);
  EXPECT_EQ(a.host_memory_bytes, b.host_memory_bytes);
  EXPECT_EQ(a.nvme_capacity_bytes, b.nvme_capacity_bytes);
  EXPECT_EQ(a.device_name, b.device_name);
  EXPECT_EQ(a.device_memory_bytes, b.device_memory_bytes);
  EXPECT_EQ(a.dtype, b.dtype);
  EXPECT_EQ(a.peak_flops, b.peak_flops);
  EXPECT_EQ(a.achievable_flops, b.achievable_flops);
  EXPECT_EQ(a.memory_bw, b.memory_bw);
  ExpectSameCurve(a.gemm_curve, b.gemm_curve);
  EXPECT_EQ(a.h2d_bw, b.h2d_bw);
  EXPECT_EQ(a.d2h_bw, b.d2h_bw);
  EXPECT_EQ(a.h2d_bw_alone, b.h2d_bw_alone);
  EXPECT_EQ(a.d2h_bw_alone, b.d2h_bw_alone);
  EXPECT_EQ(a.nvme_read_bw, b.nvme_read_bw);
  EXPECT_EQ(a.nvme_write_bw, b.nvme_write_bw);
  EXPECT_EQ(a.nvme_read_bw_node, b.nvme_read_bw_node);
  EXPECT_EQ(a.nvme_write_bw_node, b.nvme_write_bw_node);
  EXPECT_EQ(a.host_mem_bw, b.host_mem_bw);
  EXPECT_EQ(a.intra_node_bw, b.intra_node_bw);
  EXPECT_EQ(a.inter_node_bw, b.inter_node_bw);
  EXPECT_EQ(a.collective_latency_s, b.collective_latency_s);
  ExpectSameCurve(a.allgather_curve, b.allgather_curve);
  ExpectSameCurve(a.coupling_curve, b.coupling_curve);
  ExpectSameCurve(a.coupling_curve_host, b.coupling_curve_host);
  ExpectSameCurve(a.coupling_curve_nvme, b.coupling_curve_nvme);
  ExpectSameCurve(a.fetch_wake_curve_host, b.fetch_wake_curve_host);
  ExpectSameCurve(a.fetch_wake_curve_nvme, b.fetch_wake_curve_nvme);
  ExpectSameCurve(a.shm_allgather_curve, b.shm_allgather_curve);
  ExpectSameCurve(a.shm_reduce_scatter_curve, b.shm_reduce_scatter_curve);
  ExpectSameCurve(a.shm_allgather_cpu_beside_curve, b.shm_allgather_cpu_beside_curve);
  ExpectSameCurve(a.shm_reduce_scatter_cpu_beside_curve, b.shm_reduce_scatter_cpu_beside_curve);
  ExpectSameCurve(a.shm_allgather_cpu_curve, b.shm_allgather_cpu_curve);
  ExpectSameCurve(a.shm_reduce_scatter_cpu_curve, b.shm_reduce_scatter_cpu_curve);
  EXPECT_EQ(a.cpu_adam_params_per_s, b.cpu_adam_params_per_s);
  EXPECT_EQ(a.nvme_block_size, b.nvme_block_size);
  EXPECT_EQ(a.nvme_queue_depth, b.nvme_queue_depth);
  EXPECT_EQ(a.nvme_cpu_per_request_s, b.nvme_cpu_per_request_s);
  EXPECT_EQ(a.nvme_cpu_per_byte_s, b.nvme_cpu_per_byte_s);
  EXPECT_EQ(a.nvme_read_latency_s, b.nvme_read_latency_s);
  EXPECT_EQ(a.nvme_read_latency_busy_s, b.nvme_read_latency_busy_s);
  ExpectSameCurve(a.nvme_lane_read_curve, b.nvme_lane_read_curve);
  ExpectSameCurve(a.nvme_lane_write_curve, b.nvme_lane_write_curve);
  EXPECT_EQ(a.nvme_lane_read_beside_adam, b.nvme_lane_read_beside_adam);
  EXPECT_EQ(a.nvme_lane_write_beside_adam, b.nvme_lane_write_beside_adam);
  EXPECT_EQ(a.nvme_adam_beside_lane, b.nvme_adam_beside_lane);
  EXPECT_EQ(a.provenance, b.provenance);
  EXPECT_EQ(HwProfileToYaml(a), HwProfileToYaml(b));
}

TEST(ShippedProfiles, TheCatalogIsComplete) {
  std::set<std::string> names;
  for (const auto& p : ShippedYaml("hwprofiles")) names.insert(Stem(p));
  for (const char* want : {"dgx2-v100", "dgx-a100-80g", "dgx-h100", "h200-single"})
    EXPECT_TRUE(names.count(want)) << "hwprofiles/" << want << ".yaml is missing";
}

TEST(ShippedProfiles, EveryFileLoadsAndRoundTripsExactly) {
  ScratchDir dir;
  std::vector<std::string> files = ShippedYaml("hwprofiles");
  ASSERT_GE(files.size(), 4u);
  for (const auto& path : files) {
    SCOPED_TRACE(path);
    HwProfile a = Load(path);
    EXPECT_EQ(a.name, Stem(path));
    std::string out = dir.File(Stem(path) + ".yaml");
    ASSERT_TRUE(SaveHwProfile(a, out).ok());
    HwProfile b = Load(out);
    ExpectSameProfile(a, b);
    // And once more: the written form is a fixed point.
    std::string out2 = dir.File(Stem(path) + ".2.yaml");
    ASSERT_TRUE(SaveHwProfile(b, out2).ok());
    EXPECT_EQ(testing::ReadText(out), testing::ReadText(out2));
  }
}

bool HasPrefix(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

TEST(ShippedProfiles, EveryValueHasProvenance) {
  const std::vector<std::string>& keys = HwProfileValueKeys();
  std::set<std::string> known(keys.begin(), keys.end());
  for (const auto& k : HwProfileOptionalValueKeys()) known.insert(k);
  for (const auto& path : ShippedYaml("hwprofiles")) {
    SCOPED_TRACE(path);
    HwProfile hw = Load(path);
    for (const auto& k : keys) {
      auto it = hw.provenance.find(k);
      ASSERT_NE(it, hw.provenance.end()) << "no provenance for " << k;
      const std::string& v = it->second;
      EXPECT_TRUE(HasPrefix(v, "datasheet: ") || HasPrefix(v, "paper: ") || HasPrefix(v, "estimate: ") ||
                  HasPrefix(v, "measured: ") || HasPrefix(v, "setting: ") || HasPrefix(v, "not measured: "))
          << k << ": '" << v << "' does not say where it comes from";
    }
    for (const auto& [k, v] : hw.provenance) EXPECT_TRUE(known.count(k)) << "provenance for unknown key " << k;
  }
}

TEST(HwProfileValueKeys, NameRealKeysOfTheFormat) {
  // Every dotted key is a key of the written file (section.key).
  HwProfile hw = Load(HwPath("dgx2-v100"));
  YAML::Node n = YAML::Load(HwProfileToYaml(hw));
  for (const auto& k : HwProfileValueKeys()) {
    size_t dot = k.find('.');
    ASSERT_NE(dot, std::string::npos) << k;
    EXPECT_TRUE(n[k.substr(0, dot)][k.substr(dot + 1)].IsDefined()) << k << " is not a key of the format";
  }
}

TEST(ShippedProfiles, ValuesAreConsistent) {
  for (const auto& path : ShippedYaml("hwprofiles")) {
    SCOPED_TRACE(path);
    HwProfile hw = Load(path);
    EXPECT_LE(hw.achievable_flops, hw.peak_flops);
    if (hw.backend == "cpu") {
      // Measured on one box: all devices at once share its memory bandwidth, the arena is
      // a budget, not a chip, and there is no second node. (Measured NVMe writes may beat
      // reads on a VM whose host caches writes.)
      EXPECT_LE(hw.h2d_bw, hw.h2d_bw_alone * 1.05);
      EXPECT_LE(hw.d2h_bw, hw.d2h_bw_alone * 1.05);
      EXPECT_GT(hw.nvme_read_bw, 0);
      EXPECT_GT(hw.nvme_write_bw, 0);
      EXPECT_FALSE(hw.gemm_curve.empty());
      EXPECT_FALSE(hw.allgather_curve.empty());
      EXPECT_GT(hw.host_memory_bytes, hw.device_memory_bytes);
      continue;
    }
    EXPECT_LE(hw.h2d_bw, hw.h2d_bw_alone);
    EXPECT_LE(hw.d2h_bw, hw.d2h_bw_alone);
    EXPECT_LE(hw.nvme_write_bw, hw.nvme_read_bw * 1.0001);
    // Node NVMe totals match the per-GPU shares within 5%.
    double g = static_cast<double>(hw.gpus_per_node);
    EXPECT_NEAR(hw.nvme_read_bw_node, hw.nvme_read_bw * g, 0.05 * hw.nvme_read_bw_node);
    EXPECT_NEAR(hw.nvme_write_bw_node, hw.nvme_write_bw * g, 0.05 * hw.nvme_write_bw_node);
    EXPECT_GT(hw.inter_node_bw, 0);
    EXPECT_GT(hw.collective_latency_s, 0);
    EXPECT_LT(hw.collective_latency_s, 1e-3);
    EXPECT_GT(hw.device_memory_bytes, 16e9);
    EXPECT_GT(hw.host_memory_bytes, hw.device_memory_bytes);
  }
}

TEST(ShippedProfiles, Dgx2MatchesThePaper) {
  HwProfile hw = Load(HwPath("dgx2-v100"));
  EXPECT_EQ(hw.gpus_per_node, 16);
  EXPECT_EQ(hw.cpu_cores, 48);
  EXPECT_EQ(hw.host_memory_bytes, 1.5e12);
  EXPECT_EQ(hw.nvme_capacity_bytes, 28e12);
  EXPECT_EQ(hw.device_memory_bytes, 32.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(hw.peak_flops, 125e12);
  EXPECT_EQ(hw.achievable_flops, 70e12);
  EXPECT_EQ(hw.h2d_bw, 3e9);
  EXPECT_EQ(hw.h2d_bw_alone, 12e9);
  EXPECT_EQ(hw.nvme_read_bw, 1.6e9);
  EXPECT_LT(hw.nvme_write_bw, hw.nvme_read_bw);
  EXPECT_EQ(hw.intra_node_bw, 150e9);
  EXPECT_EQ(hw.inter_node_bw, 100e9);  // 800 Gbps
  EXPECT_EQ(hw.cpu_adam_params_per_s, 1e9);
}

TEST(ShippedProfiles, SingleH200) {
  HwProfile hw = Load(HwPath("h200-single"));
  EXPECT_EQ(hw.backend, "cuda");
  EXPECT_EQ(hw.gpus_per_node, 1);
  EXPECT_EQ(hw.device_memory_bytes, 141e9);
  EXPECT_EQ(hw.peak_flops, 989e12);
  EXPECT_EQ(hw.dtype, "bf16");
  EXPECT_EQ(hw.h2d_bw, 55e9);
}

TEST(GemmRate, EmptyCurveIsAchievable) {
  HwProfile hw;
  hw.achievable_flops = 70e12;
  EXPECT_EQ(hw.GemmRate(1e6), 70e12);
  EXPECT_EQ(hw.GemmRate(1e15), 70e12);
  EXPECT_EQ(hw.GemmRate(0), 70e12);
}

TEST(GemmRate, LogLinearInterpolation) {
  HwProfile hw;
  hw.achievable_flops = 1;  // unused with a curve
  hw.gemm_curve = {{1e9, 10e12}, {1e12, 100e12}, {1e13, 120e12}};
  EXPECT_DOUBLE_EQ(hw.GemmRate(1e9), 10e12);
  EXPECT_DOUBLE_EQ(hw.GemmRate(1e12), 100e12);
  EXPECT_DOUBLE_EQ(hw.GemmRate(1e13), 120e12);
  // Geometric midpoints give arithmetic midpoints of the rate.
  EXPECT_NEAR(hw.GemmRate(std::sqrt(1e9 * 1e12)), 55e12, 1e3);
  EXPECT_NEAR(hw.GemmRate(std::sqrt(1e12 * 1e13)), 110e12, 1e3);
  // One third of the way in log space.
  EXPECT_NEAR(hw.GemmRate(1e10), 40e12, 1e3);
  // Above the last point: flat.
  EXPECT_EQ(hw.GemmRate(1e16), 120e12);
  // Below the first point: flat too (profiles measure down to the smallest shapes used).
  EXPECT_EQ(hw.GemmRate(1e8), 10e12);
  EXPECT_EQ(hw.GemmRate(1e3), 10e12);
  // Monotone between points.
  double prev = 0;
  for (double x = 1e7; x < 1e14; x *= 1.7) {
    double r = hw.GemmRate(x);
    EXPECT_GE(r, prev) << x;
    prev = r;
  }
}

// Per-token curves: a linear of T tokens takes the rate of the curves at the counts around T
// (log-linear in tokens), the nearest count's outside them; without tokens the flat curve.
TEST(GemmRate, PerTokenCurves) {
  HwProfile hw;
  hw.achievable_flops = 1;
  hw.gemm_curve = {{1e9, 80e9}};
  hw.gemm_bwd_curve = {{1e9, 70e9}};
  hw.gemm_token_curves = {{64, {{1e9, 60e9}}, {{1e9, 50e9}}}, {1024, {{1e8, 90e9}, {1e10, 110e9}}, {{1e9, 100e9}}}};
  EXPECT_EQ(hw.GemmRate(1e9), 80e9);
  EXPECT_EQ(hw.GemmBwdRate(1e9), 70e9);
  EXPECT_EQ(hw.GemmRate(1e9, 64), 60e9);
  EXPECT_EQ(hw.GemmRate(1e9, 16), 60e9);
  EXPECT_EQ(hw.GemmBwdRate(1e9, 8192), 100e9);
  EXPECT_NEAR(hw.GemmRate(1e9, 1024), 100e9, 1);  // halfway in log FLOPs
  EXPECT_NEAR(hw.GemmRate(1e9, 256), 60e9 + 0.5 * 40e9, 1);  // halfway in log tokens
  EXPECT_NEAR(hw.GemmBwdRate(1e9, 256), 75e9, 1);
  // They round-trip through the file, and bad ones name the key.
  ScratchDir dir;
  hw = Load(HwPath("dgx-h100"));
  hw.gemm_token_curves = {{64, {{1e9, 60e9}}, {{1e9, 50e9}}}, {1024, {{1e8, 90e9}, {1e10, 110e9}}, {{1e9, 100e9}}}};
  ASSERT_TRUE(SaveHwProfile(hw, dir.File("t.yaml")).ok());
  HwProfile back = Load(dir.File("t.yaml"));
  ASSERT_EQ(back.gemm_token_curves.size(), 2u);
  EXPECT_EQ(back.gemm_token_curves[1].tokens, 1024);
  ASSERT_EQ(back.gemm_token_curves[1].fwd.size(), 2u);
  EXPECT_EQ(back.gemm_token_curves[1].fwd[1].y, 110e9);
  EXPECT_EQ(back.gemm_token_curves[0].bwd[0].y, 50e9);
  EXPECT_EQ(HwProfileToYaml(back), HwProfileToYaml(hw));
  std::swap(hw.gemm_token_curves[0], hw.gemm_token_curves[1]);
  ASSERT_TRUE(SaveHwProfile(hw, dir.File("bad.yaml")).ok());
  Result<HwProfile> bad = LoadHwProfile(dir.File("bad.yaml"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("tokens"), std::string::npos) << bad.status().ToString();
  EXPECT_NE(bad.status().message().find("bad.yaml"), std::string::npos) << bad.status().ToString();
}

TEST(AllgatherBusBw, CurveAndFallback) {
  HwProfile hw;
  hw.intra_node_bw = 150e9;
  EXPECT_EQ(hw.AllgatherBusBw(1e6), 150e9);
  hw.allgather_curve = {{1e6, 10e9}, {1e8, 130e9}};
  EXPECT_DOUBLE_EQ(hw.AllgatherBusBw(1e6), 10e9);
  EXPECT_NEAR(hw.AllgatherBusBw(1e7), 70e9, 1);
  EXPECT_EQ(hw.AllgatherBusBw(1e9), 130e9);
  EXPECT_NEAR(hw.AllgatherBusBw(1e5), 1e9, 1);
}

TEST(HwProfile, CurvesRoundTrip) {
  HwProfile hw = Load(HwPath("dgx-h100"));
  hw.gemm_curve = {{1e9, 1.23456789e14}, {2.5e11, 5.5e14}, {1e13, 6e14}};
  hw.allgather_curve = {{65536, 3.3e9}, {1 << 26, 3.1e11}};
  hw.coupling_curve = {{1e-4, 1.1e-4}, {1e-2, 2.5e-4}};  // one curve per fetch chain, kept apart
  hw.coupling_curve_host = {{1e-4, 2.1e-4}, {1e-2, 4.2e-4}};
  hw.coupling_curve_nvme = {{1e-4, 3.6e-4}, {3e-3, 4.4e-4}, {1e-2, 3.7e-4}};
  hw.fetch_wake_curve_host = {{9e-5, 1.4e-5}, {1e-3, 2e-5}};  // one rank's fetch hand-offs, per chain
  hw.fetch_wake_curve_nvme = {{9e-5, 7.7e-5}, {1e-3, 6.8e-5}, {1e-2, 3.2e-4}};
  hw.nvme_read_latency_s = 2.3e-5;  // and the NVMe read latency, idle and with the cores busy
  hw.nvme_read_latency_busy_s = 6.1e-5;
  hw.nvme_lane_read_curve = {{65536, 8.4e8}, {1 << 20, 2.07e9}};  // the NVMe lane by transfer size
  hw.nvme_lane_write_curve = {{65536, 8.2e8}, {1 << 20, 2.1e9}};
  hw.nvme_lane_read_beside_adam = 1.09;  // the lane and CPU Adam beside each other
  hw.nvme_lane_write_beside_adam = 1.21;
  hw.nvme_adam_beside_lane = 1.55;
  hw.shared_core_curve = {{9.4e5, 0.98}, {1.5e7, 0.81}};  // two one-thread ranks taking turns on a core
  hw.shm_allgather_curve = {{262144, 2.4e9}, {4 << 20, 3.1e9}};  // collectives among rank processes,
  hw.shm_reduce_scatter_curve = {{262144, 1.6e9}, {4 << 20, 1.8e9}};
  hw.shm_allgather_cpu_beside_curve = {{262144, 1.3e-5}, {4 << 20, 2.7e-4}};  // and their CPU beside GEMMs
  hw.shm_reduce_scatter_cpu_beside_curve = {{262144, 1.8e-5}, {1 << 20, 3.3e-5}, {4 << 20, 3.4e-4}};
  hw.shm_allgather_cpu_curve = {{65536, 2.9e-5}, {4 << 20, 6.1e-4}};  // and back to back
  hw.shm_reduce_scatter_cpu_curve = {{65536, 3.3e-5}, {1 << 20, 1.9e-4}, {16 << 20, 3.1e-3}};
  hw.description = "";
  ScratchDir dir;
  ASSERT_TRUE(SaveHwProfile(hw, dir.File("c.yaml")).ok());
  ExpectSameProfile(hw, Load(dir.File("c.yaml")));
}

TEST(HwProfile, FetchWakePerFetchFromTheCurves) {
  HwProfile hw;
  EXPECT_FALSE(hw.HasFetchWake());
  EXPECT_EQ(hw.FetchWakePerFetch(1e-3, true), 0.0);  // not measured
  hw.fetch_wake_curve_host = {{1e-4, 10e-6}, {1e-2, 30e-6}};
  EXPECT_TRUE(hw.HasFetchWake());
  EXPECT_NEAR(hw.FetchWakePerFetch(1e-3, false), 20e-6, 1e-12);  // log-linear halfway
  EXPECT_NEAR(hw.FetchWakePerFetch(1e-3, true), 20e-6, 1e-12);   // no NVMe chain measured: the copy lane's
  hw.fetch_wake_curve_nvme = {{1e-4, 100e-6}, {1e-2, 60e-6}};
  EXPECT_NEAR(hw.FetchWakePerFetch(1e-3, true), 80e-6, 1e-12);
  EXPECT_NEAR(hw.FetchWakePerFetch(1e-6, true), 100e-6, 1e-12);  // flat beyond the points
  EXPECT_NEAR(hw.FetchWakePerFetch(1.0, false), 30e-6, 1e-12);
}

// A collective's extra CPU beside compute: per byte between the measured sizes (log-linear in
// the size), the end points' per-byte figure outside them; 0 without the curve.
TEST(HwProfile, ShmCpuBesideSecondsFromTheCurves) {
  HwProfile hw;
  EXPECT_EQ(hw.ShmCpuBesideSeconds(1e6, false), 0.0);
  hw.shm_allgather_cpu_beside_curve = {{1e6, 1e-5}, {4e6, 2e-4}};  // 1e-11 and 5e-11 s a byte
  EXPECT_NEAR(hw.ShmCpuBesideSeconds(1e6, false), 1e-5, 1e-18);
  EXPECT_NEAR(hw.ShmCpuBesideSeconds(2e6, false), 2e6 * 3e-11, 1e-17);  // halfway in log size
  EXPECT_NEAR(hw.ShmCpuBesideSeconds(16e6, false), 16e6 * 5e-11, 1e-16);
  EXPECT_NEAR(hw.ShmCpuBesideSeconds(1e5, false), 1e5 * 1e-11, 1e-18);
  EXPECT_EQ(hw.ShmCpuBesideSeconds(0, false), 0.0);
  EXPECT_EQ(hw.ShmCpuBesideSeconds(1e6, true), 0.0);  // each kind its own curve
  hw.shm_reduce_scatter_cpu_beside_curve = {{1e6, 3e-5}};
  EXPECT_NEAR(hw.ShmCpuBesideSeconds(2e6, true), 6e-5, 1e-17);
}

// A collective's CPU back to back: per byte as the beside figure, from its own curves.
TEST(HwProfile, ShmCpuSecondsFromTheCurves) {
  HwProfile hw;
  EXPECT_EQ(hw.ShmCpuSeconds(1e6, false), 0.0);
  hw.shm_allgather_cpu_curve = {{1e6, 2e-5}, {4e6, 1.6e-4}};  // 2e-11 and 4e-11 s a byte
  hw.shm_allgather_cpu_beside_curve = {{1e6, 9e-3}};         // another curve: not read
  EXPECT_NEAR(hw.ShmCpuSeconds(1e6, false), 2e-5, 1e-18);
  EXPECT_NEAR(hw.ShmCpuSeconds(2e6, false), 2e6 * 3e-11, 1e-17);
  EXPECT_NEAR(hw.ShmCpuSeconds(8e6, false), 8e6 * 4e-11, 1e-16);
  EXPECT_EQ(hw.ShmCpuSeconds(1e6, true), 0.0);
  hw.shm_reduce_scatter_cpu_curve = {{1e6, 5e-5}};
  EXPECT_NEAR(hw.ShmCpuSeconds(3e6, true), 1.5e-4, 1e-17);
  EXPECT_EQ(hw.ShmCpuSeconds(-1, true), 0.0);
}

TEST(HwProfile, NvmeLaneSecondsFromTheCurves) {
  HwProfile hw;
  EXPECT_FALSE(hw.HasNvmeLaneCurves());
  EXPECT_EQ(hw.NvmeLaneSeconds(1 << 20, false), 0.0);  // not measured
  hw.nvme_lane_read_curve = {{65536, 1e9}, {4 << 20, 2e9}};
  hw.nvme_lane_write_curve = {{65536, 5e8}, {4 << 20, 1e9}};
  EXPECT_TRUE(hw.HasNvmeLaneCurves());
  EXPECT_DOUBLE_EQ(hw.NvmeLaneSeconds(65536, false), 65536 / 1e9);
  EXPECT_DOUBLE_EQ(hw.NvmeLaneSeconds(65536, true), 65536 / 5e8);
  // Below the first point: that point's time (the transfer's latency dominates).
  EXPECT_DOUBLE_EQ(hw.NvmeLaneSeconds(4096, false), 65536 / 1e9);
  // Between points: the rate log-linear in size (halfway in log: 512 KiB at 1.5 GB/s).
  EXPECT_NEAR(hw.NvmeLaneSeconds(512 << 10, false), (512 << 10) / 1.5e9, 1e-12);
  // Beyond the last: its rate.
  EXPECT_DOUBLE_EQ(hw.NvmeLaneSeconds(64 << 20, true), (64 << 20) / 1e9);
  EXPECT_EQ(hw.NvmeLaneSeconds(0, false), 0.0);
}

TEST(HwProfile, DefaultsForOptionalKeys) {
  ScratchDir dir;
  std::string p = dir.Write("min.yaml", R"(format: zinf.hwprofile/v1
name: minimal
node: {gpus_per_node: 4, cpu_cores: 8, host_memory: 64GiB}
device: {name: X, memory: 16GiB, peak_flops: 100 TFLOP/s, achievable_flops: 50 TFLOP/s, memory_bw: 1 TB/s}
bandwidth: {h2d: 10 GB/s, d2h: 8 GB/s, nvme_read: 2 GB/s, nvme_write: 1 GB/s, host_memory: 50 GB/s}
network: {intra_node: 100 GB/s}
cpu: {adam_params_per_s: 1e9}
)");
  HwProfile hw = Load(p);
  EXPECT_EQ(hw.backend, "cuda");
  EXPECT_FALSE(hw.HasLaneAdamCoupling());  // not measured: the lane and Adam each as if alone
  EXPECT_EQ(hw.nvme_read_latency_busy_s, 0);  // not measured: the idle latency stands in
  hw.nvme_read_latency_s = 2e-5;
  EXPECT_EQ(hw.BusyReadLatency(), 2e-5);
  hw.nvme_read_latency_busy_s = 5e-5;
  EXPECT_EQ(hw.BusyReadLatency(), 5e-5);
  EXPECT_EQ(hw.dtype, "fp16");
  EXPECT_EQ(hw.description, "");
  EXPECT_EQ(hw.nvme_capacity_bytes, 0);
  EXPECT_EQ(hw.h2d_bw_alone, 10e9);
  EXPECT_EQ(hw.d2h_bw_alone, 8e9);
  EXPECT_EQ(hw.nvme_read_bw_node, 8e9);   // 4 GPUs x 2 GB/s
  EXPECT_EQ(hw.nvme_write_bw_node, 4e9);
  EXPECT_EQ(hw.inter_node_bw, 0);
  EXPECT_EQ(hw.collective_latency_s, 0);
  EXPECT_EQ(hw.nvme_block_size, 1 << 20);
  EXPECT_EQ(hw.nvme_queue_depth, 8);
  EXPECT_TRUE(hw.provenance.empty());
  EXPECT_TRUE(hw.gemm_curve.empty());
  EXPECT_FALSE(hw.HasNvmeLaneCurves());
  EXPECT_TRUE(hw.shared_core_curve.empty());  // not measured: shared cores as fast as one thread alone
  EXPECT_EQ(hw.SharedCoreSpeed(1e7), 1.0);
  hw.shared_core_curve = {{1e6, 0.9}, {1e8, 0.5}};
  EXPECT_EQ(hw.SharedCoreSpeed(1e5), 0.9);  // held below the first point and beyond the last
  EXPECT_EQ(hw.SharedCoreSpeed(1e9), 0.5);
  EXPECT_NEAR(hw.SharedCoreSpeed(1e7), 0.7, 1e-12);  // log-interpolated
}

TEST(HwProfile, BadFilesNameFileAndKey) {
  ScratchDir dir;
  const std::string good = testing::ReadText(HwPath("dgx2-v100"));
  struct Case {
    std::string from, to, expect;
  };
  const Case cases[] = {
      {"format: zinf.hwprofile/v1", "format: zinf.hwprofile/v2",
       "key 'format': 'zinf.hwprofile/v2' is not allowed; allowed: zinf.hwprofile/v1"},
      {"format: zinf.hwprofile/v1\n", "", "key 'format': missing (required)"},
      {"backend: cuda", "backend: rocm", "key 'backend': 'rocm' is not allowed; allowed: cuda, cpu"},
      {"gpus_per_node: 16", "gpus_per_node: 0", "key 'node.gpus_per_node': value 0 is out of range"},
      {"host_memory: 1.5TB", "host_memory: 1.5 tb", "key 'node.host_memory': '1.5 tb': unknown size unit 'tb'"},
      {"h2d: 3.0 GB/s", "h2d: 3.0 GB", "key 'bandwidth.h2d'"},
      {"h2d: 3.0 GB/s", "h2d: -3 GB/s", "key 'bandwidth.h2d'"},
      {"achievable_flops: 70 TFLOP/s", "achievable_flops: 170 TFLOP/s",
       "key 'device.achievable_flops': must not exceed device.peak_flops"},
      {"dtype: fp16", "dtype: int8", "key 'device.dtype'"},
      {"block_size: 1048576", "block_size: 1000000", "key 'nvme.block_size': must be a multiple of 4096"},
      {"queue_depth: 8", "queue_depth: 8\n  ring: 2", "unknown key 'nvme.ring'"},
      {"latency_s: 20e-6", "latency: 20e-6", "unknown key 'network.latency'"},
      {"cpu:\n  adam_params_per_s: 1e9\n", "", "key 'cpu': missing (required)"},
      {"intra_node: 150 GB/s", "intra_node: 150 GB/s\n  allgather_curve: [{x: 2, y: 1}, {x: 1, y: 1}]",
       "key 'network.allgather_curve': points must be sorted by strictly increasing x"},
      {"memory: 32GiB", "memory: 32GiB\n  gemm_curve: [{x: 1e9}]", "key 'device.gemm_curve[0].y': missing"},
      {"memory: 32GiB", "memory: 32GiB\n  shared_core_curve: [{x: 1e6, y: 1.5}]", "key 'device.shared_core_curve': y is a ratio"},
      {"provenance:", "provenance: [a, b]\nold_provenance:", "key 'provenance': must be a mapping"},
      {"node.cpu_cores: ", "node.cpu_cores: [1, 2]\n  x: ", "key 'provenance.node.cpu_cores': must be a string"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.to);
    std::string p = dir.Write("bad.yaml", ReplaceOnce(good, c.from, c.to));
    Result<HwProfile> hw = LoadHwProfile(p);
    ASSERT_FALSE(hw.ok());
    EXPECT_EQ(hw.status().code(), Code::kInvalidArgument);
    EXPECT_NE(hw.status().message().find(p), std::string::npos) << hw.status().message();
    EXPECT_NE(hw.status().message().find(c.expect), std::string::npos) << hw.status().message();
  }
}

TEST(HwProfile, EmptyProvenanceIsAccepted) {
  ScratchDir dir;
  std::string text = testing::ReadText(HwPath("h200-single"));
  text = text.substr(0, text.find("provenance:")) + "provenance:\n";
  HwProfile hw = Load(dir.Write("p.yaml", text));
  EXPECT_TRUE(hw.provenance.empty());
}

TEST(HwProfile, TruncatedFilesAreRejected) {
  ScratchDir dir;
  const std::string good = testing::ReadText(HwPath("dgx-a100-80g"));
  size_t end = good.find("\ncpu:");  // everything before the last required section
  ASSERT_NE(end, std::string::npos);
  for (size_t cut : {size_t{0}, size_t{10}, good.size() / 4, good.size() / 2, end}) {
    SCOPED_TRACE(cut);
    std::string p = dir.Write("t.yaml", good.substr(0, cut));
    Result<HwProfile> hw = LoadHwProfile(p);
    ASSERT_FALSE(hw.ok());
    EXPECT_NE(hw.status().message().find(p), std::string::npos) << hw.status().message();
  }
}

}  // namespace
}  // namespace zinf
