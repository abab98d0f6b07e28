// NvmeStore: the per-rank swap space of ZeRO-Infinity's NVMe tier.
//
// One file per rank, DIR/zinf-rank{r}.swap (created/truncated on Create, removed on
// destruction), opened through OpenStore (uring -> posix-direct -> posix fallback). A
// second store on the same file (another job, same directory and rank) is refused: the
// file is guarded by an exclusive flock on DIR/zinf-rank{r}.swap.lock.
// Named tensors get extents [offset, offset + padded_bytes) from a first-fit allocator;
// offsets and padded sizes are multiples of 4096 so O_DIRECT always works. Reads and
// writes move the whole padded extent: the caller's buffer must hold padded_bytes and,
// for direct I/O backends, be 4096-aligned (PinnedHostPool buffers are).
//
// Integrity: every write records a CRC-32C of the extent's first `bytes` bytes (computed
// when the write is submitted; the buffer must not change until it is waited); every read
// verifies it when waited (verify_checksums) and a mismatch is Corrupt naming the file
// and the tensor. A failed write leaves the extent without data (reading it is an error).
// At most one write, or any number of reads, may be in flight per tensor.
// Not thread-safe (one owner thread, like Storage).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "executor/storage/fault_store.h"
#include "executor/storage/pinned_host_pool.h"
#include "executor/storage/range_allocator.h"
#include "executor/storage/storage.h"
#include "executor/storage/store_factory.h"

namespace zinf {

struct NvmeStoreOptions {
  std::string dir;                  // must exist and be writable
  int rank = 0;
  StorageOptions io;                // queue depth, block size (from the plan)
  StoreBackend backend = StoreBackend::kAuto;
  uint64_t capacity_bytes = 0;      // 0: limited only by the filesystem (ENOSPC -> NoSpace)
  bool verify_checksums = true;
  bool keep_file = false;           // leave the swap file behind on destruction (debugging)
  std::optional<FaultSpec> inject_faults;  // tests: wrap the store in a FaultStore
};

struct SwapExtent {
  uint64_t offset = 0;
  uint64_t bytes = 0;         // logical size (checksummed)
  uint64_t padded_bytes = 0;  // I/O size = bytes rounded up to 4096
  uint32_t crc = 0;           // of the last completed write
  bool has_data = false;
};

class NvmeStore {
 public:
  static constexpr uint64_t kExtentAlignment = 4096;

  static std::string SwapPath(const std::string& dir, int rank);
  // Errors: missing dir -> NotFound, not a directory -> InvalidArgument, read-only or
  // unwritable dir -> Io; all name the path.
  static Result<std::unique_ptr<NvmeStore>> Create(const NvmeStoreOptions& options,
                                                   const PinnedHostPool* pool = nullptr);
  ~NvmeStore();
  NvmeStore(const NvmeStore&) = delete;
  NvmeStore& operator=(const NvmeStore&) = delete;

  Result<SwapExtent> Allocate(const std::string& name, uint64_t bytes);
  Status Release(const std::string& name);
  const SwapExtent* Find(const std::string& name) const;

  Result<IoTicket> WriteAsync(const std::string& name, const void* buf);
  Result<IoTicket> ReadAsync(const std::string& name, void* buf);
  Status Wait(IoTicket ticket, double timeout_s = -1);
  Status WaitAll();
  Status Write(const std::string& name, const void* buf);
  Status Read(const std::string& name, void* buf);

  const std::string& path() const { return path_; }
  const char* backend() const { return storage_->kind(); }
  const std::string& backend_note() const { return backend_note_; }  // fallbacks taken
  Storage& storage() { return *storage_; }
  uint64_t allocated_bytes() const { return alloc_.used_bytes(); }
  uint64_t peak_allocated_bytes() const { return alloc_.peak_bytes(); }
  uint64_t file_extent_bytes() const { return alloc_.high_water(); }
  size_t num_tensors() const { return tensors_.size(); }

 private:
  struct Entry {
    SwapExtent ext;
    int reads_inflight = 0;
    bool write_inflight = false;
  };
  using EntryMap = std::map<std::string, Entry, std::less<>>;
  struct Pending {
    EntryMap::iterator entry;
    IoOp op;
    void* buf;
    uint32_t crc;
  };

  NvmeStore(NvmeStoreOptions options, std::string path, uint64_t capacity);
  Result<EntryMap::iterator> Lookup(const std::string& name, const char* what);

  NvmeStoreOptions options_;
  std::string path_;
  int lock_fd_ = -1;  // flock'ed DIR/zinf-rank{r}.swap.lock: one owner per swap file
  std::unique_ptr<Storage> storage_;
  std::string backend_note_;
  RangeAllocator alloc_;
  EntryMap tensors_;
  std::unordered_map<IoTicket, Pending> pending_;
};

}  // namespace zinf
