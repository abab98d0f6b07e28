#include "executor/storage/storage.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <limits>

namespace zinf {

namespace {
using Clock = std::chrono::steady_clock;

// Milliseconds left until `deadline` for a blocking reap (>= 1), or -1 for no deadline.
int RemainingMs(bool has_deadline, Clock::time_point deadline) {
  if (!has_deadline) return -1;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::clamp<int64_t>(left.count() + 1, 1, 1000));
}
}  // namespace

const char* IoOpName(IoOp op) { return op == IoOp::kRead ? "read" : "write"; }

Status Storage::ValidateOptions(const std::string& path, const StorageOptions& o,
                                size_t alignment) {
  if (o.queue_depth < 1 || o.queue_depth > 4096) {
    return InvalidArgument(fmt::format("{}: queue_depth {} out of range (allowed 1..4096)",
                                       path, o.queue_depth));
  }
  if (o.block_size_bytes == 0 || o.block_size_bytes > (1u << 30) ||
      !IsAligned(o.block_size_bytes, alignment)) {
    return InvalidArgument(fmt::format(
        "{}: block_size_bytes {} invalid (allowed: 1..1GiB, a multiple of the alignment {})",
        path, o.block_size_bytes, alignment));
  }
  return Status::Ok();
}

Storage::Storage(std::string path, StorageOptions options, size_t alignment)
    : path_(std::move(path)), options_(options), alignment_(alignment) {
  slots_.resize(options_.queue_depth);
  free_slots_.reserve(options_.queue_depth);
  for (uint32_t i = options_.queue_depth; i-- > 0;) free_slots_.push_back(i);
  batch_.reserve(options_.queue_depth);
  resubmit_.reserve(options_.queue_depth);
  reaped_.resize(std::max<uint32_t>(options_.queue_depth, 16));
  requests_.reserve(64);
}

Result<IoTicket> Storage::SubmitRead(uint64_t offset, void* buf, uint64_t len) {
  return Submit(IoOp::kRead, offset, buf, len);
}

Result<IoTicket> Storage::SubmitWrite(uint64_t offset, const void* buf, uint64_t len) {
  // The device never writes into a write buffer; the cast only unifies the request type.
  return Submit(IoOp::kWrite, offset, const_cast<void*>(buf), len);
}

Result<IoTicket> Storage::Submit(IoOp op, uint64_t offset, void* buf, uint64_t len) {
  if (len > 0 && buf == nullptr) {
    return InvalidArgument(fmt::format("{} {}: null buffer for {} bytes", IoOpName(op), path_, len));
  }
  if (offset > std::numeric_limits<uint64_t>::max() - len ||
      offset + len > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return InvalidArgument(fmt::format("{} {}: offset {} + len {} overflows", IoOpName(op),
                                       path_, offset, len));
  }
  if (alignment_ > 1) {
    auto addr = reinterpret_cast<uintptr_t>(buf);
    if (!IsAligned(offset, alignment_) || !IsAligned(len, alignment_) ||
        !IsAligned(addr, alignment_)) {
      return InvalidArgument(fmt::format(
          "{} {}: direct I/O needs {}-byte alignment of offset, length and buffer; got "
          "offset {}{} len {}{} buffer {:#x}{}",
          IoOpName(op), path_, alignment_, offset, IsAligned(offset, alignment_) ? "" : " (misaligned)",
          len, IsAligned(len, alignment_) ? "" : " (misaligned)", addr,
          IsAligned(addr, alignment_) ? "" : " (misaligned)"));
    }
  }
  IoTicket t = next_ticket_++;
  Request& r = requests_[t];
  r.op = op;
  r.offset = offset;
  r.buf = static_cast<char*>(buf);
  r.len = len;
  ++stats_.requests;
  if (len == 0) {
    r.done_flag = true;
    return t;
  }
  to_issue_.push_back(t);
  ZINF_RETURN_IF_ERROR(Pump());
  return t;
}

uint32_t Storage::AcquireSlot() {
  uint32_t s = free_slots_.back();
  free_slots_.pop_back();
  slots_[s].busy = true;
  ++inflight_;
  return s;
}

Status Storage::Pump() {
  batch_.clear();
  batch_.insert(batch_.end(), resubmit_.begin(), resubmit_.end());  // slots still held
  resubmit_.clear();
  while (!free_slots_.empty() && !to_issue_.empty()) {
    IoTicket t = to_issue_.front();
    auto it = requests_.find(t);
    if (it == requests_.end() || !it->second.status.ok() || it->second.issued == it->second.len) {
      to_issue_.pop_front();
      continue;
    }
    Request& r = it->second;
    uint64_t n = std::min<uint64_t>(options_.block_size_bytes, r.len - r.issued);
    uint32_t s = AcquireSlot();
    slots_[s].ticket = t;
    slots_[s].op = ChunkOp{r.op, r.offset + r.issued, r.buf + r.issued, static_cast<uint32_t>(n), s};
    r.issued += n;
    ++r.inflight;
    batch_.push_back(slots_[s].op);
    if (r.issued == r.len) to_issue_.pop_front();
  }
  if (batch_.empty()) return Status::Ok();
  stats_.chunks += batch_.size();
  stats_.max_inflight = std::max(stats_.max_inflight, inflight_);
  Status st = DeviceSubmit(batch_);
  if (!st.ok()) {
    // The device took none of them: fail the chunks (their requests end with `st`).
    for (const ChunkOp& op : batch_) {
      Slot& slot = slots_[op.cookie];
      Request& r = requests_.at(slot.ticket);
      if (r.status.ok()) r.status = st.WithContext(path_);
      slot.busy = false;
      free_slots_.push_back(static_cast<uint32_t>(op.cookie));
      --inflight_;
      --r.inflight;
      Finish(r);
    }
  }
  return Status::Ok();
}

Status Storage::ChunkError(const Request& r, const ChunkOp& op, int64_t result) const {
  std::string what = fmt::format("{} {} at offset {} len {} (request offset {} len {})",
                                 IoOpName(op.op), path_, op.offset, op.len, r.offset, r.len);
  if (result == 0) {
    if (op.op == IoOp::kRead) return Corrupt(what + ": unexpected end of file (truncated?)");
    return IoError(what + ": device wrote 0 bytes");
  }
  return ErrnoStatus(static_cast<int>(-result), what, __FILE__, __LINE__);
}

void Storage::Finish(Request& r) {
  if (r.inflight == 0 && (r.issued == r.len || !r.status.ok())) r.done_flag = true;
}

void Storage::Complete(const ChunkDone& done) {
  if (done.cookie >= slots_.size() || !slots_[done.cookie].busy) return;  // stale: ignore
  Slot& slot = slots_[done.cookie];
  Request& r = requests_.at(slot.ticket);
  ChunkOp& op = slot.op;
  int64_t res = done.result;
  if (res == -EINTR || res == -EAGAIN) {
    ++stats_.retries;
    if (r.status.ok()) {
      resubmit_.push_back(op);
      return;
    }
  } else if (res <= 0) {
    if (r.status.ok()) r.status = ChunkError(r, op, res);
  } else {
    uint64_t n = std::min<uint64_t>(static_cast<uint64_t>(res), op.len);
    r.done += n;
    (op.op == IoOp::kRead ? stats_.bytes_read : stats_.bytes_written) += n;
    if (n < op.len && r.status.ok()) {  // short transfer: continue where it stopped
      ++stats_.retries;
      op.offset += n;
      op.buf = static_cast<char*>(op.buf) + n;
      op.len -= static_cast<uint32_t>(n);
      resubmit_.push_back(op);
      return;
    }
  }
  slot.busy = false;
  free_slots_.push_back(static_cast<uint32_t>(done.cookie));
  --inflight_;
  --r.inflight;
  Finish(r);
}

Status Storage::Reap(int timeout_ms) {
  ZINF_ASSIGN_OR_RETURN(size_t n, DeviceReap(reaped_, timeout_ms));
  for (size_t i = 0; i < n; ++i) Complete(reaped_[i]);
  return Status::Ok();
}

Status Storage::Poll() {
  ZINF_RETURN_IF_ERROR(Pump());
  if (inflight_ > 0) ZINF_RETURN_IF_ERROR(Reap(0));
  return Pump();
}

bool Storage::IsDone(IoTicket ticket) {
  auto it = requests_.find(ticket);
  if (it == requests_.end()) return false;
  if (!it->second.done_flag) (void)Poll();
  it = requests_.find(ticket);
  return it != requests_.end() && it->second.done_flag;
}

Status Storage::Wait(IoTicket ticket, double timeout_s) {
  if (requests_.find(ticket) == requests_.end()) {
    return InvalidArgument(fmt::format("{}: unknown or already waited I/O ticket {}", path_, ticket));
  }
  bool has_deadline = timeout_s >= 0 && std::isfinite(timeout_s);
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(has_deadline ? timeout_s : 0));
  for (;;) {
    ZINF_RETURN_IF_ERROR(Pump());
    Request& r = requests_.at(ticket);
    if (r.done_flag) break;
    if (has_deadline && Clock::now() >= deadline) {
      return Aborted(fmt::format("{} {} offset {} len {}: timed out after {} s ({} of {} bytes done)",
                                 IoOpName(r.op), path_, r.offset, r.len, timeout_s, r.done, r.len));
    }
    if (inflight_ == 0) {
      return Internal(fmt::format("{}: request {} not done but nothing in flight", path_, ticket));
    }
    ZINF_RETURN_IF_ERROR(Reap(RemainingMs(has_deadline, deadline)));
  }
  auto it = requests_.find(ticket);
  Status st = std::move(it->second.status);
  requests_.erase(it);
  return st;
}

Status Storage::WaitAll(double timeout_s) {
  auto start = Clock::now();
  std::vector<IoTicket> tickets;
  tickets.reserve(requests_.size());
  for (const auto& [t, r] : requests_) tickets.push_back(t);
  std::sort(tickets.begin(), tickets.end());
  Status first;
  for (IoTicket t : tickets) {
    double left = -1;
    if (timeout_s >= 0) {
      left = std::max(0.0, timeout_s - std::chrono::duration<double>(Clock::now() - start).count());
    }
    Status st = Wait(t, left);
    if (st.code() == Code::kAborted && requests_.count(t)) return st;  // timed out
    if (first.ok() && !st.ok()) first = st;
  }
  return first;
}

Status Storage::Read(uint64_t offset, void* buf, uint64_t len) {
  ZINF_ASSIGN_OR_RETURN(IoTicket t, SubmitRead(offset, buf, len));
  return Wait(t);
}

Status Storage::Write(uint64_t offset, const void* buf, uint64_t len) {
  ZINF_ASSIGN_OR_RETURN(IoTicket t, SubmitWrite(offset, buf, len));
  return Wait(t);
}

}  // namespace zinf
