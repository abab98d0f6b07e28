// zinf::Storage: one file-like extent space (a swap file, an in-memory image) with
// asynchronous reads and writes at byte offsets into caller buffers.
//
// Model (liburing-like, single owner):
//   * Submit{Read,Write} queues a request and returns a ticket at once. The request is
//     split into chunks of at most options().block_size_bytes; at most
//     options().queue_depth chunks (over all requests) are in flight on the device.
//     Requests are issued in submission order; a request's chunks may complete out of
//     order.
//   * Progress happens inside Poll(), IsDone(), Wait() and WaitAll() (and Submit, which
//     issues what fits). The caller's buffer must stay alive, and for writes unmodified,
//     until the ticket is waited.
//   * Every ticket must be waited exactly once (Wait or WaitAll) to release it; Wait
//     returns that request's Status.
//   * Short transfers are retried until the request completes; EINTR/EAGAIN are retried.
//     A real error ends the request (its other in-flight chunks are drained first) with a
//     Status naming the path, the failing chunk's offset and length and the request's
//     offset and length (ENOSPC -> NoSpace, EIO and others -> Io, EOF on read -> Corrupt).
//   * alignment() > 1 (O_DIRECT stores: 4096) requires offsets, lengths and buffer
//     addresses to be multiples of it; violations fail Submit with InvalidArgument.
//
// Destroying a store waits for its outstanding requests (errors are dropped).
// Not thread-safe: one thread owns a Storage (the NVMe pipeline thread). Implementations
// may use threads internally (PosixStore) but the interface is called from one thread.
//
// Implementations: UringStore (io_uring, O_DIRECT, fixed buffers/file), PosixStore
// (pread/pwrite, optional O_DIRECT), MemStore (in-memory), FaultStore (fault injection).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"

namespace zinf {

enum class IoOp : uint8_t { kRead, kWrite };
const char* IoOpName(IoOp op);  // "read" / "write"

inline constexpr size_t kDirectIoAlignment = 4096;

struct StorageOptions {
  uint32_t queue_depth = 8;               // chunks in flight, 1..4096
  uint64_t block_size_bytes = 1u << 20;   // chunk size, >= alignment, multiple of it
};

using IoTicket = uint64_t;  // 0 is never a valid ticket

struct IoStats {
  uint64_t requests = 0;
  uint64_t chunks = 0;          // device ops issued (including retries)
  uint64_t retries = 0;         // short transfers / EAGAIN resubmitted
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
  uint32_t max_inflight = 0;    // highest number of chunks in flight seen
};

// One device op (device layer, <= block size). `cookie` identifies it on completion.
struct ChunkOp {
  IoOp op;
  uint64_t offset;
  void* buf;
  uint32_t len;
  uint64_t cookie;
};
// Completion of a ChunkOp: result = bytes transferred (may be short) or -errno.
struct ChunkDone {
  uint64_t cookie;
  int64_t result;
};

class Storage {
 public:
  virtual ~Storage() = default;
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  const std::string& path() const { return path_; }
  const StorageOptions& options() const { return options_; }
  size_t alignment() const { return alignment_; }
  virtual const char* kind() const = 0;  // "uring", "posix", "posix-direct", "mem", "fault"

  Result<IoTicket> SubmitRead(uint64_t offset, void* buf, uint64_t len);
  Result<IoTicket> SubmitWrite(uint64_t offset, const void* buf, uint64_t len);

  // Non-blocking progress. Returns only device-level failures (request errors are
  // reported by Wait).
  Status Poll();
  bool IsDone(IoTicket ticket);
  // Waits for one request and releases the ticket. timeout_s < 0: no limit; on timeout
  // returns Aborted (the request stays in flight and the ticket stays valid).
  Status Wait(IoTicket ticket, double timeout_s = -1);
  // Waits for every outstanding request, releases all tickets, returns the first error.
  Status WaitAll(double timeout_s = -1);

  // Synchronous helpers (Submit + Wait).
  Status Read(uint64_t offset, void* buf, uint64_t len);
  Status Write(uint64_t offset, const void* buf, uint64_t len);
  // Makes written data durable (fdatasync); no-op in memory.
  virtual Status Flush() = 0;

  size_t outstanding_requests() const { return requests_.size(); }
  uint32_t inflight_chunks() const { return inflight_; }
  const IoStats& stats() const { return stats_; }

 protected:
  // Validates options (queue depth, block size vs alignment): call from factories.
  static Status ValidateOptions(const std::string& path, const StorageOptions& options,
                                size_t alignment);
  Storage(std::string path, StorageOptions options, size_t alignment);

  // Device layer, called from the owning thread only. DeviceSubmit queues and starts the
  // ops (never more than queue_depth in flight in total); per-op failures come back as
  // ChunkDone with a negative result. DeviceReap fills `out` with completions and
  // returns how many; timeout_ms: 0 = do not block, < 0 = block until at least one.
  virtual Status DeviceSubmit(std::span<const ChunkOp> ops) = 0;
  virtual Result<size_t> DeviceReap(std::span<ChunkDone> out, int timeout_ms) = 0;

 private:
  friend class FaultStore;  // a decorator driving another store's device layer

  struct Request {
    IoOp op;
    uint64_t offset;
    char* buf;
    uint64_t len;
    uint64_t issued = 0;    // bytes handed out as chunks (first pass)
    uint64_t done = 0;      // bytes completed
    uint32_t inflight = 0;  // chunks in flight
    bool done_flag = false;
    Status status;
  };
  struct Slot {  // one in-flight chunk
    IoTicket ticket = 0;
    ChunkOp op{};
    bool busy = false;
  };

  Result<IoTicket> Submit(IoOp op, uint64_t offset, void* buf, uint64_t len);
  Status Pump();                       // issue chunks while slots are free
  Status Reap(int timeout_ms);         // collect completions
  void Complete(const ChunkDone& done);
  void Finish(Request& r);
  Status ChunkError(const Request& r, const ChunkOp& op, int64_t result) const;
  uint32_t AcquireSlot();

  std::string path_;
  StorageOptions options_;
  size_t alignment_;
  IoTicket next_ticket_ = 1;
  std::unordered_map<IoTicket, Request> requests_;
  std::deque<IoTicket> to_issue_;      // requests with bytes not yet issued, FIFO
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
  std::vector<ChunkOp> batch_;         // scratch for DeviceSubmit
  std::vector<ChunkOp> resubmit_;      // retries (short transfers) to issue first
  std::vector<ChunkDone> reaped_;      // scratch for DeviceReap
  uint32_t inflight_ = 0;
  IoStats stats_;
};

inline bool IsAligned(uint64_t v, size_t a) { return a <= 1 || v % a == 0; }
inline uint64_t AlignUp(uint64_t v, size_t a) { return a <= 1 ? v : (v + a - 1) / a * a; }

}  // namespace zinf
