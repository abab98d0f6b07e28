#include "executor/zero3/coordinator.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>

#include "core/cpu_clock.h"
#include "executor/backend/cpu/kernels.h"
#include "executor/zero3/adam_threads.h"

namespace zinf {

struct Zero3Engine::OpFetch {
  int group = -1;
  bool issued[3] = {false, false, false};
  PinnedBuffer host_stage;   // NVMe -> host
  DeviceBuffer dev_shard;    // host -> device (when R > 1)
  DeviceBuffer gathered;     // the full group (absent when the device shard is the group)
  const float* ready_ptr = nullptr;
  SignalPtr last;            // completion of the last issued stage
};

struct Zero3Engine::ParamRead {
  int group = -1;
  float* dst = nullptr;
  IoTicket ticket = 0;
  Status status;  // why it could not start
};

void Zero3Engine::StartParamReads() {
  std::deque<std::shared_ptr<ParamRead>> todo;
  {
    std::lock_guard<std::mutex> l(ahead_mu_);
    todo.swap(ahead_);
  }
  for (const auto& r : todo) {
    const std::string* extent = params_->NvmeExtent(r->group);
    if (extent == nullptr) {
      r->status = Internal(fmt::format("parameters of {} on NVMe without an extent", groups_[static_cast<size_t>(r->group)].name));
      continue;
    }
    Result<IoTicket> t = nvme_->ReadAsync(*extent, r->dst);
    if (t.ok()) r->ticket = *t;
    else r->status = t.status();
  }
}

Zero3Engine::Zero3Engine(const std::vector<ParamGroup>& groups, const std::vector<GroupOp>& schedule, Backend* be,
                         Comm* comm, const Zero3Options& o)
    : groups_(groups), schedule_(schedule), be_(be), comm_(comm), o_(o) {}

Zero3Engine::~Zero3Engine() {
  // Lanes drain before buffers go away.
  if (nvme_lane_) nvme_lane_->Drain();
  if (h2d_lane_) h2d_lane_->Drain();
  if (comm_lane_) comm_lane_->Drain();
}

Result<std::unique_ptr<Zero3Engine>> Zero3Engine::Create(const std::vector<ParamGroup>& groups,
                                                         const std::vector<GroupOp>& schedule, Backend* be, Comm* comm,
                                                         const Zero3Options& o) {
  auto e = std::unique_ptr<Zero3Engine>(new Zero3Engine(groups, schedule, be, comm, o));
  ZINF_RETURN_IF_ERROR(e->Setup());
  return e;
}

Status Zero3Engine::Setup() {
  rank_ = comm_->rank();
  ranks_ = comm_->size();
  da_ = std::max(0, o_.prefetch_allgather);
  dh_ = std::max(da_, o_.prefetch_h2d);
  dn_ = std::max(dh_, o_.prefetch_nvme);
  for (const ParamGroup& g : groups_) {
    shards_.push_back(MakeGroupShard(g.numel, ranks_));
    max_shard_ = std::max(max_shard_, shards_.back().shard);
  }
  const Placement& pl = o_.placement;
  // Pinned staging: NVMe reads in flight (dn + 1), grad read-modify-write (2), optimizer
  // pipeline (3 groups x 4 states: reading, updating, writing).
  size_t pinned = o_.pinned_bytes;
  if (pinned == 0) pinned = (static_cast<size_t>(dn_) + 1 + 2 + 12) * max_shard_ * sizeof(float) + (1 << 20);
  ZINF_ASSIGN_OR_RETURN(pool_, PinnedHostPool::Create(pinned, /*lock=*/true));
  if (pl.params == Tier::kNvme || pl.grads == Tier::kNvme || pl.optimizer == Tier::kNvme) {
    NvmeStoreOptions no;
    no.dir = o_.nvme_dir;
    no.rank = rank_;
    no.io = o_.io;
    no.inject_faults = o_.nvme_faults;
    // The staging pool is registered with io_uring as fixed buffers.
    ZINF_ASSIGN_OR_RETURN(nvme_, NvmeStore::Create(no, pool_.get()));
  }
  auto tier = [&](Tier t, const char* kind) {
    ShardTierOptions so;
    so.kind = kind;
    so.rank = rank_;
    so.nvme = nvme_.get();
    so.nvme_mu = &nvme_mu_;
    return MakeShardTier(t, shards_, be_, so);
  };
  ZINF_ASSIGN_OR_RETURN(params_, tier(pl.params, "params"));
  ZINF_ASSIGN_OR_RETURN(grads_, tier(pl.grads, "grads"));
  ZINF_ASSIGN_OR_RETURN(adam_m_, tier(pl.optimizer, "adam_m"));
  ZINF_ASSIGN_OR_RETURN(adam_v_, tier(pl.optimizer, "adam_v"));
  nvme_lane_ = std::make_unique<Lane>("nvme_read");
  h2d_lane_ = std::make_unique<Lane>("h2d");
  comm_lane_ = std::make_unique<Lane>("network");
  fetch_.resize(schedule_.size());
  return Status::Ok();
}

Status Zero3Engine::InitParams(uint64_t seed) {
  std::vector<float> full;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const GroupShard& s = shards_[g];
    full.assign(s.padded, 0.0f);
    InitParamGroup(groups_[g], seed, full.data());
    ZINF_ASSIGN_OR_RETURN(PinnedBuffer stage, pool_->AllocBuffer(s.shard * sizeof(float)));
    std::memcpy(stage.data(), full.data() + static_cast<size_t>(rank_) * s.shard, s.shard * sizeof(float));
    ZINF_RETURN_IF_ERROR(params_->Write(static_cast<int>(g), stage.as<float>()));
  }
  return Status::Ok();
}

Status Zero3Engine::FailIfError() { return first_error_; }

void Zero3Engine::IssueStage(int stage, int op) {
  if (op < 0 || op >= static_cast<int>(schedule_.size())) return;
  if (!fetch_[static_cast<size_t>(op)]) {
    fetch_[static_cast<size_t>(op)] = std::make_unique<OpFetch>();
    fetch_[static_cast<size_t>(op)]->group = schedule_[static_cast<size_t>(op)].group;
  }
  OpFetch& f = *fetch_[static_cast<size_t>(op)];
  if (f.issued[stage]) return;
  for (int s = 0; s < stage; ++s) IssueStage(s, op);  // chains issue in order
  f.issued[stage] = true;
  const int g = f.group;
  const GroupShard& sh = shards_[static_cast<size_t>(g)];
  const size_t bytes = sh.shard * sizeof(float);
  const Tier pt = o_.placement.params;
  auto fail = [this](const Status& s) {
    if (!s.ok() && first_error_.ok()) first_error_ = s;
  };
  if (stage == 0 && pt == Tier::kNvme) {
    Result<PinnedBuffer> b = pool_->AllocBuffer(bytes);
    if (!b.ok()) return fail(b.status().WithContext("NVMe staging"));
    f.host_stage = std::move(*b);
    float* dst = f.host_stage.as<float>();
    auto r = std::make_shared<ParamRead>();
    r->group = g;
    r->dst = dst;
    {
      std::lock_guard<std::mutex> l(ahead_mu_);
      ahead_.push_back(r);
    }
    {
      // Start it now when no one is using the store (a submit costs the compute thread a
      // system call); else the NVMe lane starts it with its next job.
      std::unique_lock<std::mutex> l(nvme_mu_, std::try_to_lock);
      if (l.owns_lock()) StartParamReads();
    }
    f.last = nvme_lane_->Submit([this, r, bytes]() -> Status {
      Count(&Zero3Stats::nvme_read_bytes, static_cast<double>(bytes));
      std::lock_guard<std::mutex> l(nvme_mu_);
      StartParamReads();  // this read and those queued after it
      if (!r->status.ok()) return r->status;
      return nvme_->Wait(r->ticket);
    }, trace_ ? groups_[static_cast<size_t>(g)].name + " nvme read" : std::string());
  }
  if (stage == 1 && pt != Tier::kDevice) {
    // R == 1: the copy lands in the gathered buffer itself; else in a device shard slot.
    Result<DeviceBuffer> b = be_->AllocBuffer(bytes, 4096);
    if (!b.ok()) return fail(b.status().WithContext(fmt::format("fetching {}", groups_[static_cast<size_t>(g)].name)));
    float* dst = b->as<float>();
    if (ranks_ == 1) {
      f.gathered = std::move(*b);
      f.ready_ptr = dst;
    } else {
      f.dev_shard = std::move(*b);
    }
    const float* src = pt == Tier::kNvme ? f.host_stage.as<float>() : params_->Resident(g);
    SignalPtr prev = f.last;
    f.last = h2d_lane_->Submit([this, prev, dst, src, bytes] {
      if (prev) ZINF_RETURN_IF_ERROR(prev->Wait());
      Count(&Zero3Stats::h2d_bytes, static_cast<double>(bytes));
      return be_->CopyH2D(dst, src, bytes);
    }, trace_ ? groups_[static_cast<size_t>(g)].name + " h2d" : std::string());
  }
  if (stage == 2) {
    if (ranks_ == 1) {
      if (pt == Tier::kDevice) f.ready_ptr = params_->Resident(g);
      return;
    }
    Result<DeviceBuffer> b = be_->AllocBuffer(sh.padded * sizeof(float), 4096);
    if (!b.ok()) return fail(b.status().WithContext(fmt::format("gathering {}", groups_[static_cast<size_t>(g)].name)));
    f.gathered = std::move(*b);
    f.ready_ptr = f.gathered.as<float>();
    const float* src = pt == Tier::kDevice ? params_->Resident(g) : f.dev_shard.as<float>();
    float* dst = f.gathered.as<float>();
    SignalPtr prev = f.last;
    const size_t count = sh.shard;
    f.last = comm_lane_->Submit([this, prev, src, dst, count] {
      if (prev) ZINF_RETURN_IF_ERROR(prev->Wait());
      Count(&Zero3Stats::network_bytes, static_cast<double>(count * sizeof(float)) * (ranks_ - 1));
      return comm_->AllGather(src, count, dst);
    }, trace_ ? groups_[static_cast<size_t>(g)].name + " allgather" : std::string());
  }
}

void Zero3Engine::OnOpBegin(int op) {
  if (op == 0) {
    for (auto& f : fetch_) f.reset();
  }
  cur_op_ = op;
  const int depth[3] = {dn_, dh_, da_};
  for (int st = 0; st < 3; ++st)
    for (int j = op; j <= op + depth[st]; ++j) IssueStage(st, j);
}

Result<const float*> Zero3Engine::Acquire(int group) {
  if (cur_op_ < 0 || schedule_[static_cast<size_t>(cur_op_)].group != group)
    return Internal(fmt::format("Acquire({}) does not match op {} of the schedule", group, cur_op_));
  for (int st = 0; st < 3; ++st) IssueStage(st, cur_op_);
  ZINF_RETURN_IF_ERROR(FailIfError());
  OpFetch& f = *fetch_[static_cast<size_t>(cur_op_)];
  if (f.last) {
    auto t0 = std::chrono::steady_clock::now();
    ZINF_RETURN_IF_ERROR(f.last->Wait());
    Count(&Zero3Stats::wait_s, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  f.host_stage.reset();
  f.dev_shard.reset();
  if (trace_) op_span_ = BeginSpan();
  return f.ready_ptr;
}

Status Zero3Engine::Release(int group) {
  if (trace_ && cur_op_ >= 0) {
    const GroupOp& op = schedule_[static_cast<size_t>(cur_op_)];
    EndSpan(op_span_, groups_[static_cast<size_t>(group)].name, PhaseName(op.phase), 0);
  }
  if (cur_op_ >= 0 && fetch_[static_cast<size_t>(cur_op_)]) fetch_[static_cast<size_t>(cur_op_)].reset();
  return Status::Ok();
}

Zero3Engine::TraceSpan Zero3Engine::BeginSpan() const {
  TraceSpan s;
  s.us = trace_->NowUs();
  s.cpu_s = CurrentThreadCpuSeconds();
  return s;
}

void Zero3Engine::EndSpan(const TraceSpan& span, std::string name, const char* cat, int tid) const {
  const double cpu = CurrentThreadCpuSeconds() - span.cpu_s;
  trace_->Complete(std::move(name), cat, span.us, trace_->NowUs() - span.us, trace_pid_, tid,
                   {{"cpu_us", cpu * 1e6}, {"cpu_at_us", span.cpu_s * 1e6}});
}

void Zero3Engine::OnKernelBegin() {
  if (trace_) kernel_span_ = BeginSpan();
}

void Zero3Engine::OnKernelEnd(const char* kind, int layer, Phase phase) {
  if (!trace_) return;
  EndSpan(kernel_span_, layer >= 0 ? fmt::format("h{}.{}", layer, kind) : std::string(kind), PhaseName(phase), 0);
}

Result<float*> Zero3Engine::AcquireGrad(int group) {
  const GroupShard& sh = shards_[static_cast<size_t>(group)];
  ZINF_ASSIGN_OR_RETURN(DeviceBuffer b, be_->AllocBuffer(sh.padded * sizeof(float), 4096));
  ZINF_RETURN_IF_ERROR(be_->Memset(b.data(), 0, sh.padded * sizeof(float)));
  float* p = b.as<float>();
  grad_bufs_[group] = std::move(b);
  return p;
}

Status Zero3Engine::ReleaseGrad(int group) {
  auto it = grad_bufs_.find(group);
  if (it == grad_bufs_.end()) return Internal(fmt::format("ReleaseGrad({}) without AcquireGrad", group));
  auto buf = std::make_shared<DeviceBuffer>(std::move(it->second));
  grad_bufs_.erase(it);
  const GroupShard sh = shards_[static_cast<size_t>(group)];
  // Back-pressure: at most the bucket's bytes of gradients wait on the device (the lane runs
  // its jobs in order, so the oldest finishes first).
  const size_t bytes = sh.padded * sizeof(float);
  const size_t bucket = o_.grad_bucket_bytes > 0 ? static_cast<size_t>(o_.grad_bucket_bytes) : max_shard_ * ranks_ * sizeof(float);
  if (!grad_inflight_.empty() && grad_inflight_bytes_ + bytes > bucket) {
    auto t0 = std::chrono::steady_clock::now();
    while (!grad_inflight_.empty() && grad_inflight_bytes_ + bytes > bucket) {
      Status st = grad_inflight_.front().first->Wait();
      grad_inflight_bytes_ -= grad_inflight_.front().second;
      grad_inflight_.pop_front();
      ZINF_RETURN_IF_ERROR(st);
    }
    Count(&Zero3Stats::wait_s, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  const float scale = grad_scale_;
  // The step's first contribution to a group overwrites its shard (no zeroing pass, no
  // read-back from NVMe); later ones (tied embedding, grad accumulation) add to it.
  const bool first = !grad_written_[static_cast<size_t>(group)];
  grad_written_[static_cast<size_t>(group)] = true;
  pending_.push_back(comm_lane_->Submit([this, buf, sh, group, scale, first]() -> Status {
    // This rank's part of the summed gradient. One rank: the gathered buffer is the part (a
    // copy would be one more pass over it); several: the reduce-scatter's output, which it
    // overwrites whole (so it is not zero-filled first).
    std::unique_ptr<float[]> reduced;
    const float* part = buf->as<float>();
    if (ranks_ > 1) {
      reduced.reset(new float[sh.shard]);
      ZINF_RETURN_IF_ERROR(comm_->ReduceScatter(buf->as<float>(), sh.shard, reduced.get()));
      Count(&Zero3Stats::network_bytes, static_cast<double>(sh.shard * sizeof(float)) * (ranks_ - 1));
      part = reduced.get();
      buf->reset();
    }
    float* dst = grads_->Resident(group);
    PinnedBuffer stage;
    if (!dst) {  // NVMe: (read,) add, write
      ZINF_ASSIGN_OR_RETURN(stage, pool_->AllocBuffer(sh.shard * sizeof(float)));
      if (!first) {
        ZINF_RETURN_IF_ERROR(grads_->Read(group, stage.as<float>()));
        Count(&Zero3Stats::nvme_read_bytes, static_cast<double>(sh.shard * sizeof(float)));
      }
      dst = stage.as<float>();
    }
    if (grads_->tier() != Tier::kDevice) Count(&Zero3Stats::d2h_bytes, static_cast<double>(sh.shard * sizeof(float)));
    if (first) {
      for (size_t i = 0; i < sh.shard; ++i) dst[i] = 0.0f + part[i] * scale;  // as if added to a zeroed shard
    } else {
      for (size_t i = 0; i < sh.shard; ++i) dst[i] += part[i] * scale;
    }
    buf->reset();  // one rank: read until here
    if (stage) {
      Count(&Zero3Stats::nvme_write_bytes, static_cast<double>(sh.shard * sizeof(float)));
      return grads_->Write(group, stage.as<float>());
    }
    return Status::Ok();
  }, trace_ ? groups_[static_cast<size_t>(group)].name + " reduce-scatter" : std::string()));
  grad_inflight_.emplace_back(pending_.back(), bytes);
  grad_inflight_bytes_ += bytes;
  return Status::Ok();
}

Status Zero3Engine::BeginStep(float grad_scale) {
  grad_scale_ = grad_scale;
  for (auto& f : fetch_) f.reset();
  cur_op_ = -1;
  grad_written_.assign(groups_.size(), false);
  return first_error_;
}

Status Zero3Engine::FinishBackward() {
  Status st = first_error_;
  for (const SignalPtr& s : pending_) {
    Status r = s->Wait();
    if (st.ok() && !r.ok()) st = r;
  }
  pending_.clear();
  grad_inflight_.clear();
  grad_inflight_bytes_ = 0;
  nvme_lane_->Drain();
  h2d_lane_->Drain();
  comm_lane_->Drain();
  for (auto& f : fetch_) f.reset();
  // A group no op produced a gradient for this step: zeros, as Adam expects.
  for (size_t g = 0; g < groups_.size() && st.ok(); ++g) {
    if (grad_written_[g]) continue;
    Result<PinnedBuffer> zero = pool_->AllocBuffer(shards_[g].shard * sizeof(float));
    if (!zero.ok()) return zero.status();
    std::memset(zero->data(), 0, zero->bytes());
    st = grads_->Write(static_cast<int>(g), zero->as<float>());
    grad_written_[g] = true;
  }
  return st;
}

// One group's optimizer states in flight: each state in place where it is resident, else in
// pinned staging filled by a read on the NVMe lane and written back after the update.
struct Zero3Engine::OptGroup {
  PinnedBuffer stage[4];
  float* ptr[4] = {nullptr, nullptr, nullptr, nullptr};
  bool zeroed[4] = {false, false, false, false};  // staged as zeros without a read
  SignalPtr read;
};

// Several whole-extent transfers of the NVMe store in flight at once (one queue, no drain
// between extents); waits for all, returns the first error.
Status Zero3Engine::NvmeBatch(const std::vector<NvmeXfer>& xfers) {
  std::lock_guard<std::mutex> l(nvme_mu_);
  std::vector<IoTicket> tickets;
  Status st;
  for (const NvmeXfer& x : xfers) {
    Result<IoTicket> t = x.write ? nvme_->WriteAsync(*x.name, x.buf) : nvme_->ReadAsync(*x.name, x.buf);
    if (!t.ok()) {
      st = t.status();
      break;
    }
    tickets.push_back(*t);
  }
  for (IoTicket t : tickets) {
    Status w = nvme_->Wait(t);
    if (st.ok() && !w.ok()) st = w;
  }
  return st;
}

Result<std::shared_ptr<Zero3Engine::OptGroup>> Zero3Engine::StageOptGroup(int g) {
  auto og = std::make_shared<OptGroup>();
  const size_t bytes = shards_[static_cast<size_t>(g)].shard * sizeof(float);
  ShardTier* tiers[4] = {params_.get(), grads_.get(), adam_m_.get(), adam_v_.get()};
  bool any = false;
  for (int s = 0; s < 4; ++s) {
    og->ptr[s] = tiers[s]->Resident(g);
    if (tiers[s]->tier() == Tier::kDevice && be_->name() != "cpu") og->ptr[s] = nullptr;  // GPU memory: copy
    if (og->ptr[s]) continue;
    ZINF_ASSIGN_OR_RETURN(og->stage[s], pool_->AllocBuffer(bytes));
    og->ptr[s] = og->stage[s].as<float>();
    if (s >= 2 && adam_step_ == 1) {  // the first step's m and v are zeros: nothing to read
      std::memset(og->ptr[s], 0, bytes);
      og->zeroed[s] = true;
      continue;
    }
    any = true;
  }
  if (!any) return og;
  og->read = nvme_lane_->Submit([this, og, g, bytes, tiers]() -> Status {
    std::vector<NvmeXfer> batch;
    for (int s = 0; s < 4; ++s) {
      if (!og->stage[s] || og->zeroed[s]) continue;
      if (const std::string* name = tiers[s]->NvmeExtent(g)) {
        batch.push_back({name, og->stage[s].data(), false});
        Count(&Zero3Stats::nvme_read_bytes, static_cast<double>(bytes));
      } else {
        ZINF_RETURN_IF_ERROR(tiers[s]->Read(g, og->stage[s].as<float>()));
      }
    }
    return NvmeBatch(batch);
  }, trace_ ? groups_[static_cast<size_t>(g)].name + " optimizer states read" : std::string());
  return og;
}

Status Zero3Engine::OptimizerStep(const AdamParams& hp_in) {
  auto t0 = std::chrono::steady_clock::now();
  AdamParams hp = hp_in;
  hp.step = ++adam_step_;
  ShardTier* tiers[4] = {params_.get(), grads_.get(), adam_m_.get(), adam_v_.get()};
  // A group's Adam threads: AdamThreads (adam_threads.h), one fewer for a small staged group.
  const bool staged = std::any_of(std::begin(tiers), std::end(tiers), [](const ShardTier* t) { return t->tier() == Tier::kNvme; });
  // Pipeline: group g+1's states are read while group g is updated; g's are written after
  // (the NVMe lane runs read g+1, write g, read g+2, ... in that order).
  std::vector<SignalPtr> writes;
  std::shared_ptr<OptGroup> next;
  if (!groups_.empty()) {
    ZINF_ASSIGN_OR_RETURN(next, StageOptGroup(0));
  }
  for (size_t g = 0; g < groups_.size(); ++g) {
    const int gi = static_cast<int>(g);
    const size_t n = shards_[g].shard, bytes = n * sizeof(float);
    std::shared_ptr<OptGroup> cur = std::move(next);
    if (g + 1 < groups_.size()) {
      ZINF_ASSIGN_OR_RETURN(next, StageOptGroup(gi + 1));
    }
    if (cur->read) ZINF_RETURN_IF_ERROR(cur->read->Wait());
    const TraceSpan adam = trace_ ? BeginSpan() : TraceSpan{};
    const int threads = AdamThreads(be_->threads(), staged, n);
    cpu::AdamStep(cur->ptr[0], cur->ptr[1], cur->ptr[2], cur->ptr[3], n, hp, threads);
    if (trace_) EndSpan(adam, groups_[g].name + " adam", "optimizer", 4);
    if (cur->stage[0] || cur->stage[2] || cur->stage[3]) {
      writes.push_back(nvme_lane_->Submit([this, cur, gi, bytes, tiers]() -> Status {
        std::vector<NvmeXfer> batch;
        for (int s : {0, 2, 3}) {
          if (!cur->stage[s]) continue;
          if (const std::string* name = tiers[s]->NvmeExtent(gi)) {
            batch.push_back({name, cur->stage[s].data(), true});
            Count(&Zero3Stats::nvme_write_bytes, static_cast<double>(bytes));
          } else {
            ZINF_RETURN_IF_ERROR(tiers[s]->Write(gi, cur->stage[s].as<float>()));
          }
        }
        return NvmeBatch(batch);
      }, trace_ ? groups_[g].name + " optimizer states write" : std::string()));
    }
  }
  Status st;
  for (const SignalPtr& w : writes) {
    Status r = w->Wait();
    if (st.ok() && !r.ok()) st = r;
  }
  Count(&Zero3Stats::optimizer_s, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return st;
}

Status Zero3Engine::ReadShard(int group, bool grads, std::vector<float>* out) {
  const GroupShard& sh = shards_[static_cast<size_t>(group)];
  ZINF_ASSIGN_OR_RETURN(PinnedBuffer stage, pool_->AllocBuffer(sh.shard * sizeof(float)));
  ZINF_RETURN_IF_ERROR((grads ? grads_ : params_)->Read(group, stage.as<float>()));
  out->assign(stage.as<float>(), stage.as<float>() + sh.shard);
  return Status::Ok();
}

namespace {
ShardTier* StateTier(ShardState s, ShardTier* params, ShardTier* m, ShardTier* v) {
  return s == ShardState::kParams ? params : s == ShardState::kAdamM ? m : v;
}
}  // namespace

Status Zero3Engine::ReadState(int group, ShardState state, float* out) {
  const size_t bytes = shards_[static_cast<size_t>(group)].shard * sizeof(float);
  if (state != ShardState::kParams && adam_step_ == 0) {  // before the first step: zeros (never written)
    std::memset(out, 0, bytes);
    return Status::Ok();
  }
  ZINF_ASSIGN_OR_RETURN(PinnedBuffer stage, pool_->AllocBuffer(bytes));
  ZINF_RETURN_IF_ERROR(StateTier(state, params_.get(), adam_m_.get(), adam_v_.get())->Read(group, stage.as<float>()));
  std::memcpy(out, stage.data(), bytes);
  return Status::Ok();
}

Status Zero3Engine::WriteState(int group, ShardState state, const float* in) {
  const size_t bytes = shards_[static_cast<size_t>(group)].shard * sizeof(float);
  ZINF_ASSIGN_OR_RETURN(PinnedBuffer stage, pool_->AllocBuffer(bytes));
  std::memcpy(stage.data(), in, bytes);
  return StateTier(state, params_.get(), adam_m_.get(), adam_v_.get())->Write(group, stage.as<float>());
}

Status Zero3Engine::GatherAllParams(std::vector<std::vector<float>>* out) {
  out->clear();
  for (size_t g = 0; g < groups_.size(); ++g) {
    std::vector<float> shard;
    ZINF_RETURN_IF_ERROR(ReadShard(static_cast<int>(g), false, &shard));
    std::vector<float> full(shards_[g].padded);
    if (ranks_ > 1) ZINF_RETURN_IF_ERROR(comm_->AllGather(shard.data(), shard.size(), full.data()));
    else full = shard;
    full.resize(groups_[g].numel);
    out->push_back(std::move(full));
  }
  return Status::Ok();
}

void Zero3Engine::Count(double Zero3Stats::*field, double v) const {
  std::lock_guard<std::mutex> l(stats_mu_);
  stats_.*field += v;
}

void Zero3Engine::SetTrace(reports::ChromeTraceWriter* trace, int64_t pid) {
  trace_ = trace;
  trace_pid_ = pid;
  nvme_lane_->SetTrace(trace, pid, 1);
  h2d_lane_->SetTrace(trace, pid, 2);
  comm_lane_->SetTrace(trace, pid, 3);
  if (!trace) return;
  trace->SetProcessName(pid, "rank " + std::to_string(pid));
  trace->SetThreadName(pid, 0, "compute");
  trace->SetThreadName(pid, 4, "cpu_optimizer");
}

Zero3Stats Zero3Engine::stats() const {
  Zero3Stats s;
  {
    std::lock_guard<std::mutex> l(stats_mu_);
    s = stats_;
  }
  s.nvme_busy_s = nvme_lane_->busy_s();
  s.h2d_busy_s = h2d_lane_->busy_s();
  s.comm_busy_s = comm_lane_->busy_s();
  s.nvme_cpu_s = nvme_lane_->cpu_s();
  s.h2d_cpu_s = h2d_lane_->cpu_s();
  s.comm_cpu_s = comm_lane_->cpu_s();
  return s;
}

double Zero3Engine::host_bytes() const {
  double b = static_cast<double>(pool_->capacity_bytes());  // pinned whether used or not
  for (const ShardTier* t : {params_.get(), grads_.get(), adam_m_.get(), adam_v_.get()})
    if (t->tier() == Tier::kHost) b += t->bytes();
  return b;
}

double Zero3Engine::nvme_bytes() const {
  double b = 0;
  for (const ShardTier* t : {params_.get(), grads_.get(), adam_m_.get(), adam_v_.get()})
    if (t->tier() == Tier::kNvme) b += t->bytes();
  return b;
}

}  // namespace zinf
