#include "executor/storage/nvme_store.h"

#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/units.h"
#include "executor/storage/crc32c.h"

namespace zinf {

std::string NvmeStore::SwapPath(const std::string& dir, int rank) {
  std::string d = dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  return fmt::format("{}/zinf-rank{}.swap", d, rank);
}

NvmeStore::NvmeStore(NvmeStoreOptions options, std::string path, uint64_t capacity)
    : options_(std::move(options)), path_(std::move(path)), alloc_(capacity, kExtentAlignment) {}

Result<std::unique_ptr<NvmeStore>> NvmeStore::Create(const NvmeStoreOptions& options,
                                                     const PinnedHostPool* pool) {
  if (options.dir.empty()) return InvalidArgument("nvme store: --nvme-dir is empty");
  if (options.rank < 0) return InvalidArgument(fmt::format("nvme store: rank {} < 0", options.rank));
  struct stat st;
  if (::stat(options.dir.c_str(), &st) != 0) {
    int err = errno;
    if (err == ENOENT)
      return NotFound(fmt::format("nvme dir '{}' does not exist; allowed: an existing, writable directory", options.dir));
    return ErrnoStatus(err, fmt::format("nvme dir '{}' (allowed: an existing, writable directory)", options.dir),
                       __FILE__, __LINE__);
  }
  if (!S_ISDIR(st.st_mode))
    return InvalidArgument(
        fmt::format("nvme dir '{}' is not a directory; allowed: an existing, writable directory", options.dir));

  uint64_t capacity = options.capacity_bytes ? options.capacity_bytes : (1ull << 62);
  std::unique_ptr<NvmeStore> s(new NvmeStore(options, SwapPath(options.dir, options.rank), capacity));
  if (options.backend != StoreBackend::kMem) {
    // One owner per swap file: a second job on the same directory and rank would truncate
    // and overwrite this one's states (found when two test binaries shared /tmp).
    const std::string lock = s->path_ + ".lock";
    s->lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (s->lock_fd_ < 0) {
      const int err = errno;
      if (err == EACCES || err == EROFS || err == EPERM)
        return IoError(fmt::format("cannot create the swap file {}: nvme dir '{}' is not writable ({}); allowed: an "
                                   "existing, writable directory", s->path_, options.dir, std::strerror(err)));
      return ErrnoStatus(err, fmt::format("nvme swap lock '{}'", lock), __FILE__, __LINE__);
    }
    if (::flock(s->lock_fd_, LOCK_EX | LOCK_NB) != 0) {
      ::close(s->lock_fd_);
      s->lock_fd_ = -1;
      return InvalidArgument(fmt::format("nvme swap file '{}' is in use by another process (its lock {} is held); "
                                         "allowed: an --nvme-dir no other running job uses",
                                         s->path_, lock));
    }
  }
  auto opened = OpenStore(s->path_, options.io, options.backend, pool, /*truncate=*/true);
  if (!opened.ok()) {
    return opened.status().WithContext(fmt::format("nvme swap file for rank {}", options.rank));
  }
  s->storage_ = std::move(opened->store);
  if (options.inject_faults) {
    ZINF_ASSIGN_OR_RETURN(s->storage_, FaultStore::Wrap(std::move(s->storage_), *options.inject_faults));
  }
  s->backend_note_ = std::move(opened->note);
  return s;
}

NvmeStore::~NvmeStore() {
  if (storage_) (void)storage_->WaitAll();
  storage_.reset();
  if (!options_.keep_file && options_.backend != StoreBackend::kMem) ::unlink(path_.c_str());
  if (lock_fd_ >= 0) {
    ::unlink((path_ + ".lock").c_str());
    ::close(lock_fd_);
  }
}

Result<SwapExtent> NvmeStore::Allocate(const std::string& name, uint64_t bytes) {
  if (tensors_.count(name)) {
    return InvalidArgument(fmt::format("{}: tensor '{}' already has an extent", path_, name));
  }
  auto off = alloc_.Allocate(bytes);
  if (!off) {
    return NoSpace(fmt::format("{}: swap capacity {} exhausted: tensor '{}' needs {}, {} in use, "
                               "largest free extent {}",
                               path_, FormatBytes(double(alloc_.capacity())), name, FormatBytes(double(bytes)),
                               FormatBytes(double(alloc_.used_bytes())), FormatBytes(double(alloc_.largest_free()))));
  }
  Entry e;
  e.ext.offset = *off;
  e.ext.bytes = bytes;
  e.ext.padded_bytes = AlignUp(bytes, kExtentAlignment);
  tensors_.emplace(name, e);
  return e.ext;
}

Status NvmeStore::Release(const std::string& name) {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) return NotFound(fmt::format("{}: no tensor '{}'", path_, name));
  if (it->second.write_inflight || it->second.reads_inflight > 0) {
    return InvalidArgument(fmt::format("{}: tensor '{}' has I/O in flight", path_, name));
  }
  alloc_.Free(it->second.ext.offset);
  tensors_.erase(it);
  return Status::Ok();
}

const SwapExtent* NvmeStore::Find(const std::string& name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second.ext;
}

Result<NvmeStore::EntryMap::iterator> NvmeStore::Lookup(const std::string& name, const char* what) {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) return NotFound(fmt::format("{}: {} of unknown tensor '{}'", path_, what, name));
  if (it->second.write_inflight) {
    return InvalidArgument(fmt::format("{}: {} of tensor '{}' while a write of it is in flight", path_, what, name));
  }
  return it;
}

Result<IoTicket> NvmeStore::WriteAsync(const std::string& name, const void* buf) {
  ZINF_ASSIGN_OR_RETURN(auto it, Lookup(name, "write"));
  Entry& e = it->second;
  if (e.reads_inflight > 0) {
    return InvalidArgument(fmt::format("{}: write of tensor '{}' while reads of it are in flight", path_, name));
  }
  uint32_t crc = Crc32c(buf, e.ext.bytes);
  auto t = storage_->SubmitWrite(e.ext.offset, buf, e.ext.padded_bytes);
  if (!t.ok()) return t.status().WithContext(fmt::format("swap write of tensor '{}'", name));
  e.write_inflight = true;
  e.ext.has_data = false;
  pending_.emplace(*t, Pending{it, IoOp::kWrite, const_cast<void*>(buf), crc});
  return *t;
}

Result<IoTicket> NvmeStore::ReadAsync(const std::string& name, void* buf) {
  ZINF_ASSIGN_OR_RETURN(auto it, Lookup(name, "read"));
  Entry& e = it->second;
  if (!e.ext.has_data) {
    return InvalidArgument(fmt::format("{}: read of tensor '{}' which holds no data (never written, "
                                       "or its last write failed)", path_, name));
  }
  auto t = storage_->SubmitRead(e.ext.offset, buf, e.ext.padded_bytes);
  if (!t.ok()) return t.status().WithContext(fmt::format("swap read of tensor '{}'", name));
  ++e.reads_inflight;
  pending_.emplace(*t, Pending{it, IoOp::kRead, buf, 0});
  return *t;
}

Status NvmeStore::Wait(IoTicket ticket, double timeout_s) {
  auto pit = pending_.find(ticket);
  if (pit == pending_.end()) return InvalidArgument(fmt::format("{}: unknown swap ticket {}", path_, ticket));
  Status st = storage_->Wait(ticket, timeout_s);
  if (st.code() == Code::kAborted) return st;  // timed out: still in flight
  Pending p = pit->second;
  pending_.erase(pit);
  const std::string& name = p.entry->first;
  Entry& e = p.entry->second;
  if (p.op == IoOp::kWrite) {
    e.write_inflight = false;
    if (!st.ok()) return st.WithContext(fmt::format("swap write of tensor '{}'", name));
    e.ext.crc = p.crc;
    e.ext.has_data = true;
    return Status::Ok();
  }
  --e.reads_inflight;
  if (!st.ok()) return st.WithContext(fmt::format("swap read of tensor '{}'", name));
  if (options_.verify_checksums) {
    uint32_t got = Crc32c(p.buf, e.ext.bytes);
    if (got != e.ext.crc) {
      return Corrupt(fmt::format("{}: tensor '{}' extent [{}, {}): checksum mismatch (crc32c written "
                                 "{:#010x}, read {:#010x})",
                                 path_, name, e.ext.offset, e.ext.offset + e.ext.padded_bytes, e.ext.crc, got));
    }
  }
  return Status::Ok();
}

Status NvmeStore::WaitAll() {
  Status first;
  while (!pending_.empty()) {
    IoTicket t = pending_.begin()->first;
    Status st = Wait(t);
    if (st.code() == Code::kAborted) return st;
    if (first.ok() && !st.ok()) first = st;
  }
  return first;
}

Status NvmeStore::Write(const std::string& name, const void* buf) {
  ZINF_ASSIGN_OR_RETURN(IoTicket t, WriteAsync(name, buf));
  return Wait(t);
}

Status NvmeStore::Read(const std::string& name, void* buf) {
  ZINF_ASSIGN_OR_RETURN(IoTicket t, ReadAsync(name, buf));
  return Wait(t);
}

}  // namespace zinf
