// zplan profile: a quick profile of this machine parses back exactly, covers every value
// with provenance, leaves no files behind, and rejects bad NVMe directories clearly.
#include "planner/profile/probe.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/hw_profile.h"
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

TEST(Profile, QuickProfileRoundTripsWithProvenance) {
  fs::path dir = fs::path(::testing::TempDir()) / "zinf-profile-test";
  fs::create_directories(dir);
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
  EXPECT_GT(hw->cpu_adam_params_per_s, 1e6);
  EXPECT_GT(hw->host_mem_bw, 1e8);
  EXPECT_FALSE(hw->gemm_curve.empty());
  EXPECT_FALSE(hw->allgather_curve.empty());
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
  o.nvme_dir = file;
  hw = ProfileThisMachine(o);
  ASSERT_FALSE(hw.ok());
  EXPECT_EQ(hw.status().code(), Code::kInvalidArgument);
  EXPECT_NE(hw.status().message().find("not a directory"), std::string::npos);
}

}  // namespace
}  // namespace zinf
