// ShmComm: Comm for ranks that are processes of one node, through a POSIX shared-memory
// segment: each rank copies its part into its own slot, the ranks meet at a futex barrier
// (they sleep while they wait: no polling), then each reads what it needs from the slots.
// Large ops run in slot-sized chunks, one barrier a chunk (two sets of slots, used by
// alternate rounds, so nobody waits for the others to finish reading). Same semantics as MpiComm and
// ThreadComm, bit for bit (rank-order sums; every element of an AllReduce is summed over
// the ranks in rank order), plus ThreadComm's check that all ranks issued the same
// collective. A rank that does not arrive within the timeout breaks the group: every
// rank's collectives end with Aborted naming the missing ranks, now and later.
//
// Why: MPI has no progress of its own, so an MpiComm polls; with more ranks than cores
// (the CPU backend, several ranks per node) four polling comm threads took ~40% of two
// cores from the ranks' compute, and every collective needed each rank's poller to be
// scheduled in turn for each of its rounds. Here a collective costs one futex wake.
//
//   rank 0: auto c = ShmComm::Open(name, 0, n, /*create=*/true);   // then tell the others
//   others: auto c = ShmComm::Open(name, r, n, /*create=*/false);
//   after all opened: ShmComm::Unlink(name) (the mapping lives on; nothing is left behind)
// ConnectOverComm does exactly that over an existing communicator (zrun: MpiComm).
#pragma once

#include <memory>
#include <string>

#include "executor/comm/comm.h"

namespace zinf {

namespace detail {
struct ShmHeader;
}

class ShmComm : public Comm {
 public:
  // Default slot: 1 MiB per rank (a chunk of an AllGather or Broadcast; a ReduceScatter
  // chunk is slot / size per destination).
  static constexpr size_t kDefaultSlotBytes = size_t{1} << 20;

  // Opens (create: creates, exclusively, and initialises) the segment `name` ("/..."),
  // for rank `rank` of `size`. Errors: InvalidArgument (bad rank/size/name), IoError
  // (shm_open/ftruncate/mmap, naming errno), InvalidArgument when an existing segment was
  // made for another size.
  static Result<std::unique_ptr<ShmComm>> Open(const std::string& name, int rank, int size, bool create,
                                               const CommOptions& options = {},
                                               size_t slot_bytes = kDefaultSlotBytes);
  static Status Unlink(const std::string& name);
  // Over `boot` (all ranks of one node): rank 0 creates a uniquely named segment and
  // broadcasts its name, the others open it, and rank 0 unlinks it after a barrier.
  static Result<std::unique_ptr<ShmComm>> ConnectOverComm(Comm& boot, const CommOptions& options = {});

  ~ShmComm() override;
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "shm"; }

 protected:
  Status Execute(const CollArgs& args) override;

 private:
  ShmComm(void* base, size_t bytes, int rank, int size, size_t slot_bytes, const CommOptions& options);
  Status Arrive(const CollArgs& a);
  static size_t SegmentBytes(int size, size_t slot_bytes);  // header + two sets of slots
  char* Slot(int set, int q) const;

  void* base_;
  size_t bytes_;
  detail::ShmHeader* h_;
  int rank_, size_;
  size_t slot_bytes_;
};

}  // namespace zinf
