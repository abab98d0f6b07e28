// ShardTier: where one kind of a rank's shards (params, grads, Adam m, Adam v) lives, as
// the plan places it: the device arena, host memory, or an NVMe swap file. Each group's
// shard is one contiguous extent (shard floats), so NVMe extents are byte ranges.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/plan.h"
#include "core/status.h"
#include "executor/backend/backend.h"
#include "executor/storage/pinned_host_pool.h"
#include "executor/storage/nvme_store.h"
#include "executor/zero3/shard_layout.h"

namespace zinf {

class ShardTier {
 public:
  virtual ~ShardTier() = default;
  virtual Tier tier() const = 0;
  // The shard in memory (device or host tiers), or nullptr (NVMe).
  virtual float* Resident(int group) = 0;
  // Copies of a whole shard into / from `buf` (shard floats). NVMe tiers need `buf`
  // 4096-aligned (pinned staging).
  virtual Status Read(int group, float* buf) = 0;
  virtual Status Write(int group, const float* buf) = 0;
  virtual double bytes() const = 0;  // bytes this tier holds
  // NVMe tiers: the store's extent name of group g's shard (for batched async I/O); else null.
  virtual const std::string* NvmeExtent(int group) const { return nullptr; }
};

struct ShardTierOptions {
  std::string kind;        // "params", "grads", "adam_m", "adam_v" (file and message names)
  int rank = 0;
  NvmeStore* nvme = nullptr;     // the rank's swap file (NVMe tiers); shared by the tiers
  std::mutex* nvme_mu = nullptr; // guards it: NvmeStore has one owner at a time
  bool nvme_zero_fill = false;   // write zeros into every NVMe extent at creation (else an
                                 // extent must be written before it is read)
};

// Creates the tier for `tier` over `shards` (one per group). Device tiers allocate from the
// backend's arena; host tiers from 4096-aligned host memory; NVMe tiers allocate extents
// "<kind>/<group>" in the rank's NvmeStore (one swap file per rank, checksummed). Device
// and host shards start as zeros.
Result<std::unique_ptr<ShardTier>> MakeShardTier(Tier tier, const std::vector<GroupShard>& shards, Backend* backend,
                                                 const ShardTierOptions& o);

}  // namespace zinf
