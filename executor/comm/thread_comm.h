// ThreadComm: R ranks as threads of one process, meeting at a shared-memory rendezvous,
// so multi-rank logic is unit-tested without mpirun. Same semantics as MpiComm, bit for
// bit (rank-order sums, AllReduce block q reduced by rank q), plus a check that all
// ranks issued the same collective (op, dtype, count, root): a mismatch fails on every
// rank with InvalidArgument naming both calls. A rank that does not arrive within the
// timeout breaks the group: the waiting ranks get Aborted naming the missing ranks.
//
//   ThreadCommGroup group(4);
//   Status st = group.Run([&](Comm& c) { return c.AllReduce(buf[c.rank()], n); });
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "executor/comm/comm.h"

namespace zinf {

namespace detail {
struct ThreadRendezvous;
}

class ThreadComm : public Comm {
 public:
  ThreadComm(std::shared_ptr<detail::ThreadRendezvous> shared, int rank, const CommOptions& options);
  ~ThreadComm() override;
  int rank() const override { return rank_; }
  int size() const override;
  std::string name() const override { return "thread"; }

 protected:
  Status Execute(const CollArgs& args) override;

 private:
  std::shared_ptr<detail::ThreadRendezvous> shared_;
  int rank_;
};

class ThreadCommGroup {
 public:
  explicit ThreadCommGroup(int size, const CommOptions& options = {});
  ~ThreadCommGroup();
  int size() const { return static_cast<int>(comms_.size()); }
  Comm& comm(int rank) { return *comms_[static_cast<size_t>(rank)]; }
  // Runs fn on one thread per rank with that rank's Comm, joins them, and returns the
  // first failure by rank order, preferring a root cause over Aborted (OK if all succeeded).
  // A rank whose fn fails breaks the group: its peers' collectives end with Aborted.
  Status Run(const std::function<Status(Comm&)>& fn);

 private:
  std::shared_ptr<detail::ThreadRendezvous> shared_;
  std::vector<std::unique_ptr<ThreadComm>> comms_;
};

}  // namespace zinf
