// FaultStore: a Storage decorator for tests that injects faults between the request
// engine and another store's device layer (so the engine's retry and error paths run
// exactly as they would against a failing disk):
//   * ENOSPC after N bytes written (the crossing write is first short, like a full disk)
//   * short reads/writes (every n-th chunk transfers half, then is resumed by the engine)
//   * EIO on the k-th chunk op
//   * silent corruption: a read covering file offset X sees that byte flipped
// The inner store keeps its path, alignment and options; its own request engine is idle.
#pragma once

#include <memory>
#include <unordered_map>
#include <vector>

#include "executor/storage/storage.h"

namespace zinf {

struct FaultSpec {
  int64_t enospc_after_bytes = -1;  // < 0: off
  uint32_t short_every = 0;         // every n-th chunk op is short; 0: off
  int64_t eio_on_op = -1;           // 0-based index of the chunk op that fails with EIO; < 0: off
  IoOp eio_only = IoOp::kRead;      // with eio_any=false, count only ops of this kind
  bool eio_any = true;
  int64_t corrupt_offset = -1;      // file offset of the byte flipped on read; < 0: off
};

struct FaultCounts {
  uint64_t ops = 0, shorts = 0, enospc = 0, eio = 0, corrupted = 0;
};

class FaultStore : public Storage {
 public:
  static Result<std::unique_ptr<FaultStore>> Wrap(std::unique_ptr<Storage> inner, const FaultSpec& spec);
  ~FaultStore() override { (void)WaitAll(); }
  const char* kind() const override { return "fault"; }
  Status Flush() override { return inner_->Flush(); }
  FaultSpec& spec() { return spec_; }  // may be changed between requests
  const FaultCounts& counts() const { return counts_; }
  Storage& inner() { return *inner_; }

 protected:
  Status DeviceSubmit(std::span<const ChunkOp> ops) override;
  Result<size_t> DeviceReap(std::span<ChunkDone> out, int timeout_ms) override;

 private:
  FaultStore(std::unique_ptr<Storage> inner, const FaultSpec& spec);

  std::unique_ptr<Storage> inner_;
  FaultSpec spec_;
  FaultCounts counts_;
  uint64_t eio_counter_ = 0;
  uint64_t write_budget_used_ = 0;
  std::vector<ChunkDone> injected_;               // synthesized completions
  std::unordered_map<uint64_t, ChunkOp> reads_;   // forwarded reads by cookie
  std::vector<ChunkOp> forward_;
};

}  // namespace zinf
