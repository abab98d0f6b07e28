#include "executor/comm/shm_comm.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <random>
#include <vector>

namespace zinf {

namespace detail {

constexpr uint32_t kShmMagic = 0x7a696e66;  // "zinf"
constexpr int kShmMaxRanks = 256;

struct ShmPosted {
  uint8_t op, dtype;
  int32_t root;
  uint64_t count;
};

// Lives at the start of the segment, shared by every rank's process. Its atomics are
// lock-free and address-free, so they work across processes.
struct ShmHeader {
  uint32_t magic;
  int32_t size;
  uint64_t slot_bytes;
  std::atomic<uint32_t> count;   // ranks arrived at the current barrier
  std::atomic<uint32_t> gen;     // barrier generation: the futex word
  std::atomic<uint32_t> broken;  // 0 ok, 2 a rank is writing the message, 1 broken
  char broken_msg[512];
  std::atomic<uint64_t> arrivals[kShmMaxRanks];  // barriers entered, per rank
  ShmPosted posted[2][kShmMaxRanks];             // per round parity (see Execute)
};

}  // namespace detail

namespace {
using Clock = std::chrono::steady_clock;
using detail::ShmHeader;

size_t HeaderBytes() { return (sizeof(ShmHeader) + 4095) / 4096 * 4096; }

long Futex(std::atomic<uint32_t>* word, int op, uint32_t val, const timespec* timeout) {
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "futex word");
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, val, timeout, nullptr, 0);
}

std::string Describe(const detail::ShmPosted& p) {
  const CollOp op = static_cast<CollOp>(p.op);
  return fmt::format("{}({} {} elements{})", CollOpName(op), p.dtype == static_cast<uint8_t>(CommDType::kF32) ? "f32" : "byte",
                     p.count, op == CollOp::kBroadcast ? fmt::format(", root {}", p.root) : "");
}

// Marks the group broken (the first message wins) and wakes every waiting rank.
void Break(ShmHeader* h, const std::string& msg) {
  uint32_t expected = 0;
  if (h->broken.compare_exchange_strong(expected, 2, std::memory_order_acq_rel)) {
    const size_t n = std::min(msg.size(), sizeof(h->broken_msg) - 1);
    std::memcpy(h->broken_msg, msg.data(), n);
    h->broken_msg[n] = '\0';
    h->broken.store(1, std::memory_order_release);
  }
  Futex(&h->gen, FUTEX_WAKE, INT_MAX, nullptr);
}

Status BrokenStatus(const ShmHeader* h) {
  while (h->broken.load(std::memory_order_acquire) == 2) {
  }
  return Aborted(fmt::format("shm communicator unusable: {}", h->broken_msg));
}
}  // namespace

ShmComm::ShmComm(void* base, size_t bytes, int rank, int size, size_t slot_bytes, const CommOptions& options)
    : Comm(options), base_(base), bytes_(bytes), h_(static_cast<ShmHeader*>(base)), rank_(rank), size_(size),
      slot_bytes_(slot_bytes) {}

ShmComm::~ShmComm() {
  StopWorker();
  ::munmap(base_, bytes_);
}

size_t ShmComm::SegmentBytes(int size, size_t slot_bytes) {
  return HeaderBytes() + 2 * static_cast<size_t>(size) * slot_bytes;
}

char* ShmComm::Slot(int set, int q) const {
  const size_t index = static_cast<size_t>(set) * static_cast<size_t>(size_) + static_cast<size_t>(q);
  return static_cast<char*>(base_) + HeaderBytes() + index * slot_bytes_;
}

Result<std::unique_ptr<ShmComm>> ShmComm::Open(const std::string& name, int rank, int size, bool create,
                                               const CommOptions& options, size_t slot_bytes) {
  if (size < 1 || size > detail::kShmMaxRanks || rank < 0 || rank >= size)
    return InvalidArgument(fmt::format("ShmComm: rank {} of {} (1..{} ranks)", rank, size, detail::kShmMaxRanks));
  if (name.size() < 2 || name[0] != '/' || name.find('/', 1) != std::string::npos || name.size() > 200)
    return InvalidArgument(fmt::format("ShmComm: segment name '{}' must be '/' and a file name", name));
  if (slot_bytes < 4096 || slot_bytes % 4096 != 0)
    return InvalidArgument(fmt::format("ShmComm: slot of {} bytes (a multiple of 4096 is needed)", slot_bytes));
  const size_t total = SegmentBytes(size, slot_bytes);
  const int fd = ::shm_open(name.c_str(), O_RDWR | O_CLOEXEC | (create ? O_CREAT | O_EXCL : 0), 0600);
  if (fd < 0) return IoError(fmt::format("shm_open {}: {}", name, std::strerror(errno)));
  struct stat st {};
  if (create && ::ftruncate(fd, static_cast<off_t>(total)) != 0) {
    const int e = errno;
    ::close(fd);
    ::shm_unlink(name.c_str());
    return IoError(fmt::format("ftruncate {} to {} bytes: {}", name, total, std::strerror(e)));
  }
  if (!create && (::fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) != total)) {
    ::close(fd);
    return InvalidArgument(fmt::format("ShmComm: segment {} holds {} bytes, not the {} of {} ranks with {}-byte slots",
                                       name, static_cast<long long>(st.st_size), total, size, slot_bytes));
  }
  void* base = ::mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int e = errno;
  ::close(fd);
  if (base == MAP_FAILED) {
    if (create) ::shm_unlink(name.c_str());
    return IoError(fmt::format("mmap {} ({} bytes): {}", name, total, std::strerror(e)));
  }
  auto* h = static_cast<ShmHeader*>(base);
  if (create) {  // the pages are zero: the atomics start at 0
    h->size = size;
    h->slot_bytes = slot_bytes;
    std::atomic_thread_fence(std::memory_order_release);
    h->magic = detail::kShmMagic;
  } else if (h->magic != detail::kShmMagic || h->size != size || h->slot_bytes != slot_bytes) {
    ::munmap(base, total);
    return InvalidArgument(fmt::format("ShmComm: segment {} was not made for {} ranks with {}-byte slots", name, size,
                                       slot_bytes));
  }
  return std::unique_ptr<ShmComm>(new ShmComm(base, total, rank, size, slot_bytes, options));
}

Status ShmComm::Unlink(const std::string& name) {
  if (::shm_unlink(name.c_str()) != 0 && errno != ENOENT)
    return IoError(fmt::format("shm_unlink {}: {}", name, std::strerror(errno)));
  return Status::Ok();
}

Result<std::unique_ptr<ShmComm>> ShmComm::ConnectOverComm(Comm& boot, const CommOptions& options) {
  const int r = boot.rank(), n = boot.size();
  char name[64] = {};
  Result<std::unique_ptr<ShmComm>> mine = Internal("not opened");
  if (r == 0) {
    std::random_device rd;
    const std::string s = fmt::format("/zinf-comm-{}-{:08x}", ::getpid(), rd());
    std::snprintf(name, sizeof(name), "%s", s.c_str());
    mine = Open(name, 0, n, /*create=*/true, options);
  }
  ZINF_RETURN_IF_ERROR(boot.BroadcastBytes(name, sizeof(name), 0));
  if (r != 0) mine = Open(name, r, n, /*create=*/false, options);
  // Everyone learns whether everyone opened it, so no rank waits on a group that is not there.
  std::vector<char> ok(static_cast<size_t>(n));
  const char me = mine.ok() ? 1 : 0;
  Status st = boot.AllGatherBytes(&me, 1, ok.data());
  if (r == 0) ZINF_RETURN_IF_ERROR(Unlink(name));
  ZINF_RETURN_IF_ERROR(st);
  if (!mine.ok()) return mine.status();
  for (int q = 0; q < n; ++q)
    if (!ok[static_cast<size_t>(q)])
      return IoError(fmt::format("ShmComm: rank {} could not open the shared segment {}", q, name));
  return mine;
}

Status ShmComm::Arrive(const CollArgs& a) {
  ShmHeader* h = h_;
  if (h->broken.load(std::memory_order_acquire)) return BrokenStatus(h);
  const uint32_t gen = h->gen.load(std::memory_order_acquire);
  const uint64_t mine = h->arrivals[rank_].fetch_add(1, std::memory_order_relaxed) + 1;
  if (h->count.fetch_add(1, std::memory_order_acq_rel) + 1 == static_cast<uint32_t>(size_)) {
    h->count.store(0, std::memory_order_relaxed);
    h->gen.fetch_add(1, std::memory_order_acq_rel);
    Futex(&h->gen, FUTEX_WAKE, INT_MAX, nullptr);
    return Status::Ok();
  }
  const bool has_deadline = a.timeout_s > 0;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(has_deadline ? a.timeout_s : 0));
  for (int spin = 0; spin < 64; ++spin)  // a peer already on its way: cheaper than a sleep
    if (h->gen.load(std::memory_order_acquire) != gen) return Status::Ok();
  for (;;) {
    // The barrier completed (Break never moves gen); a break after it shows at the next one.
    if (h->gen.load(std::memory_order_acquire) != gen) return Status::Ok();
    if (h->broken.load(std::memory_order_acquire)) return BrokenStatus(h);
    double wait_s = 0.05;  // wake now and then to see the deadline
    if (has_deadline) {
      const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
      if (left <= 0) {
        std::string missing;
        for (int q = 0; q < size_; ++q) {
          if (h->arrivals[q].load(std::memory_order_relaxed) >= mine) continue;
          if (!missing.empty()) missing.push_back(',');
          missing.append(std::to_string(q));
        }
        const std::string msg = fmt::format("ShmComm rank {} of {}: {} (count {}) timed out after {} s waiting for rank(s) {}",
                                            rank_, size_, CollOpName(a.op), a.count, a.timeout_s, missing);
        Break(h, msg);
        return Aborted(msg);
      }
      wait_s = std::min(wait_s, left);
    }
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(wait_s);
    ts.tv_nsec = static_cast<long>((wait_s - static_cast<double>(ts.tv_sec)) * 1e9);
    Futex(&h->gen, FUTEX_WAIT, gen, &ts);  // returns at once if gen moved on
  }
}

Status ShmComm::Execute(const CollArgs& a) {
  ShmHeader* h = h_;
  const int n = size_, r = rank_;
  const detail::ShmPosted me{static_cast<uint8_t>(a.op), static_cast<uint8_t>(a.dtype), static_cast<int32_t>(a.root),
                             static_cast<uint64_t>(a.count)};
  // Every op runs in rounds of one barrier each (a chunk of `per` units out of `total`; a
  // Barrier is one empty round): each rank posts its op and fills its slot with put(set,
  // off, c), the ranks meet, each checks the posts (first round) and reads what it needs with
  // take(set, off, c). Round k uses descriptor and slot set k % 2, so a rank may start round
  // k + 1 while slower ones still read round k: set k % 2 is next written in round k + 2,
  // which nobody enters before every rank has finished reading round k (entered round k + 1).
  auto chunked = [&](size_t total, size_t per, auto put, auto take) -> Status {
    size_t off = 0;
    do {
      const size_t c = std::min(per, total - off);
      const int set = static_cast<int>(h->arrivals[r].load(std::memory_order_relaxed) & 1);
      h->posted[set][r] = me;
      put(set, off, c);
      ZINF_RETURN_IF_ERROR(Arrive(a));
      if (off == 0) {
        const detail::ShmPosted f = h->posted[set][0];
        for (int q = 0; q < n; ++q) {  // every rank sees the same mismatch, after the same one barrier
          const detail::ShmPosted b = h->posted[set][q];
          if (b.op != f.op || b.dtype != f.dtype || b.count != f.count ||
              (static_cast<CollOp>(f.op) == CollOp::kBroadcast && b.root != f.root))
            return InvalidArgument(fmt::format("collective mismatch: rank 0 called {} but rank {} called {}",
                                               Describe(f), q, Describe(b)));
        }
      }
      take(set, off, c);
      off += c;
    } while (off < total);
    return Status::Ok();
  };
  const size_t es = DTypeBytes(a.dtype), bytes = a.count * es;
  std::vector<const float*> parts(static_cast<size_t>(n));
  auto slot_f = [&](int set, int q) { return reinterpret_cast<float*>(Slot(set, q)); };
  switch (a.op) {
    case CollOp::kAllGather: {
      const char* send = static_cast<const char*>(a.send);
      char* recv = static_cast<char*>(a.recv);
      return chunked(
          bytes, slot_bytes_, [&](int set, size_t off, size_t c) { std::memcpy(Slot(set, r), send + off, c); },
          [&](int set, size_t off, size_t c) {
            for (int q = 0; q < n; ++q) std::memcpy(recv + static_cast<size_t>(q) * bytes + off, Slot(set, q), c);
          });
    }
    case CollOp::kReduceScatter: {
      // Chunk c of each destination's block: rank q's part for rank d at slot q + d*c.
      const float* send = static_cast<const float*>(a.send);
      float* recv = static_cast<float*>(a.recv);
      return chunked(
          a.count, std::max<size_t>(1, slot_bytes_ / sizeof(float) / static_cast<size_t>(n)),
          [&](int set, size_t off, size_t c) {
            for (int d = 0; d < n; ++d)
              std::memcpy(slot_f(set, r) + static_cast<size_t>(d) * c, send + static_cast<size_t>(d) * a.count + off,
                          c * sizeof(float));
          },
          [&](int set, size_t off, size_t c) {
            for (int q = 0; q < n; ++q) parts[static_cast<size_t>(q)] = slot_f(set, q) + static_cast<size_t>(r) * c;
            SumInRankOrder(parts.data(), n, c, recv + off);
          });
    }
    case CollOp::kAllReduce: {
      // Every rank sums every element over the ranks in rank order: the same floats as
      // MpiComm's and ThreadComm's block-by-rank reduction.
      float* data = static_cast<float*>(a.recv);
      return chunked(
          a.count, slot_bytes_ / sizeof(float),
          [&](int set, size_t off, size_t c) { std::memcpy(slot_f(set, r), data + off, c * sizeof(float)); },
          [&](int set, size_t off, size_t c) {
            for (int q = 0; q < n; ++q) parts[static_cast<size_t>(q)] = slot_f(set, q);
            SumInRankOrder(parts.data(), n, c, data + off);
          });
    }
    case CollOp::kBroadcast: {
      char* data = static_cast<char*>(a.recv);
      return chunked(
          bytes, slot_bytes_,
          [&](int set, size_t off, size_t c) {
            if (r == a.root) std::memcpy(Slot(set, a.root), data + off, c);
          },
          [&](int set, size_t off, size_t c) {
            if (r != a.root) std::memcpy(data + off, Slot(set, a.root), c);
          });
    }
    case CollOp::kBarrier:
      return chunked(
          0, 1, [](int, size_t, size_t) {}, [](int, size_t, size_t) {});
  }
  return Internal("ShmComm: unknown collective");
}

}  // namespace zinf
