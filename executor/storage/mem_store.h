// MemStore: an in-memory Storage for tests. Behaves like a file: it grows on write,
// reads past the end are short (then Corrupt "unexpected end of file"), and writes past
// capacity_bytes are short and then fail with ENOSPC (-> NoSpace). alignment > 1
// emulates O_DIRECT's rules. Completions are immediate (on submit).
#pragma once

#include <memory>
#include <vector>

#include "executor/storage/storage.h"

namespace zinf {

class MemStore : public Storage {
 public:
  static Result<std::unique_ptr<MemStore>> Create(std::string name, const StorageOptions& options,
                                                  uint64_t capacity_bytes = UINT64_MAX,
                                                  size_t alignment = 1);
  const char* kind() const override { return "mem"; }
  Status Flush() override { return Status::Ok(); }
  const std::vector<char>& contents() const { return data_; }
  std::vector<char>& mutable_contents() { return data_; }

 protected:
  Status DeviceSubmit(std::span<const ChunkOp> ops) override;
  Result<size_t> DeviceReap(std::span<ChunkDone> out, int timeout_ms) override;

 private:
  MemStore(std::string name, StorageOptions options, uint64_t capacity, size_t alignment)
      : Storage(std::move(name), options, alignment), capacity_(capacity) {}

  uint64_t capacity_;
  std::vector<char> data_;
  std::vector<ChunkDone> done_;
  size_t done_head_ = 0;
};

}  // namespace zinf
