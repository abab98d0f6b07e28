// DriveCheck: zrun's check of the drive's speed between steps, against the profile's lane
// curves: a check moves real bytes and reports positive ratios, the ratio is the profile's
// seconds over the measured ones, the check file goes with the check, and a profile without
// lane curves (or a bad size) is refused.
#include "executor/storage/drive_check.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "tests/executor/storage/storage_test_util.h"

namespace zinf {
namespace {

HwProfile WithLaneCurves(double read_bw, double write_bw) {
  HwProfile hw;
  hw.nvme_lane_read_curve = {{1 << 16, read_bw}, {1 << 22, read_bw}};
  hw.nvme_lane_write_curve = {{1 << 16, write_bw}, {1 << 22, write_bw}};
  return hw;
}

DriveCheckOptions Small(const std::string& dir) {
  DriveCheckOptions o;
  o.dir = dir;
  o.io.block_size_bytes = 1 << 16;
  o.io.queue_depth = 4;
  o.transfer_bytes = 1 << 18;
  o.transfers = 3;
  o.file_bytes = 1 << 21;
  return o;
}

bool Exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

TEST(DriveCheck, MeasuresReadsAndWritesAgainstTheLaneCurves) {
  testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  auto c = DriveCheck::Create(Small(dir.path()), WithLaneCurves(1e9, 5e8));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE(*c);
  const std::string path = (*c)->path();
  EXPECT_TRUE(Exists(path));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE((*c)->Run().ok());
  const SpeedTotals& r = (*c)->read_totals();
  const SpeedTotals& w = (*c)->write_totals();
  EXPECT_EQ(r.checks, 3);
  EXPECT_EQ(w.checks, 3);
  // Expected seconds: 3 transfers of 256 KiB a check at the curves' rates.
  EXPECT_NEAR(r.expected_s, 3 * 3 * (1 << 18) / 1e9, 1e-12);
  EXPECT_NEAR(w.expected_s, 3 * 3 * (1 << 18) / 5e8, 1e-12);
  EXPECT_GT(r.measured_s, 0);
  EXPECT_GT(w.measured_s, 0);
  EXPECT_DOUBLE_EQ(r.Ratio(), r.expected_s / r.measured_s);
  EXPECT_LE(r.min, r.Ratio());
  EXPECT_GE(r.max, r.Ratio());
  c->reset();
  EXPECT_FALSE(Exists(path)) << "the check file outlived the check";
}

TEST(DriveCheck, NothingToCheckWithoutLaneCurves) {
  testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  auto c = DriveCheck::Create(Small(dir.path()), HwProfile{});
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(*c);
}

TEST(DriveCheck, RefusesBadSizesAndMissingDirectories) {
  testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  DriveCheckOptions o = Small(dir.path());
  o.transfer_bytes = 1000;  // not a multiple of 4096
  EXPECT_FALSE(DriveCheck::Create(o, WithLaneCurves(1e9, 1e9)).ok());
  o = Small(dir.path());
  o.file_bytes = o.transfer_bytes;  // room for one transfer only
  EXPECT_FALSE(DriveCheck::Create(o, WithLaneCurves(1e9, 1e9)).ok());
  o = Small(dir.path() + "/missing");
  auto c = DriveCheck::Create(o, WithLaneCurves(1e9, 1e9));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().ToString().find("missing"), std::string::npos) << c.status().ToString();
}

}  // namespace
}  // namespace zinf
