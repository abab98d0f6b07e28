// DriveCheck: how fast the NVMe drive serves zrun now, against the profile the plan was made
// from. Between steps, zrun reads and writes a few transfers of one size through a store of
// the plan's block size and queue depth, alternating and CRC-32C'd as the profile's lane
// curves were measured (nvme.lane_read_curve / lane_write_curve), and prices the same
// transfers at those curves; expected time / measured time is the drive's speed relative to
// the profile, for reads and for writes. A virtual machine's disk drifts like its cores do
// (v34's NVMe plans: the drive read 0.88-1.05 GB/s in refreshes minutes apart); the check
// separates that drift from the model's own error, as the compute-speed check does for the
// cores (docs/performance-model.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/hw_profile.h"
#include "core/speed_totals.h"
#include "core/status.h"
#include "executor/storage/pinned_host_pool.h"
#include "executor/storage/storage.h"
#include "executor/storage/store_factory.h"

namespace zinf {

struct DriveCheckOptions {
  std::string dir;               // the plan's NVMe directory
  StorageOptions io;             // the plan's block size and queue depth
  StoreBackend backend = StoreBackend::kAuto;
  uint64_t transfer_bytes = 4ull << 20;  // one read or write (a point of the profile's lane curves)
  int transfers = 4;                     // reads and writes a check, each
  uint64_t file_bytes = 64ull << 20;     // the check file, laid out once, untimed
};

class DriveCheck {
 public:
  // Null (and no error) where the profile has no lane curves to check against. The check
  // file (dir/zinf-drive-check-<pid>.dat) is laid out here and removed by the destructor.
  static Result<std::unique_ptr<DriveCheck>> Create(const DriveCheckOptions& o, const HwProfile& hw);
  ~DriveCheck();
  DriveCheck(const DriveCheck&) = delete;
  DriveCheck& operator=(const DriveCheck&) = delete;

  // One check: an untimed pair to wake the lane, then `transfers` reads and writes
  // alternating at scattered offsets; adds the reads to read_totals() and the writes to
  // write_totals(). An I/O error or a read that differs from what was written is returned.
  Status Run();
  const SpeedTotals& read_totals() const { return read_; }
  const SpeedTotals& write_totals() const { return write_; }
  const std::string& path() const { return path_; }

 private:
  DriveCheck() = default;
  DriveCheckOptions o_;
  std::string path_;
  std::unique_ptr<PinnedHostPool> pool_;
  PinnedBuffer wbuf_, rbuf_;
  std::unique_ptr<Storage> store_;
  double expected_read_s_ = 0, expected_write_s_ = 0;  // one transfer at the profile's curves
  uint64_t round_ = 0;
  SpeedTotals read_, write_;
};

}  // namespace zinf
