#include "planner/search/search.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "planner/model/time_model.h"
#include "planner/search/evaluate.h"

namespace zinf {

const std::vector<Strategy>& Strategies() {
  using T = Tier;
  static const std::vector<Strategy> s = {
      {"none", {T::kDevice, T::kDevice, T::kDevice}},
      {"opt:host", {T::kDevice, T::kHost, T::kHost}},
      {"opt:nvme", {T::kDevice, T::kHost, T::kNvme}},
      {"params+opt:host", {T::kHost, T::kHost, T::kHost}},
      {"params+opt:nvme", {T::kNvme, T::kHost, T::kNvme}},
      {"all:nvme", {T::kNvme, T::kNvme, T::kNvme}},
  };
  return s;
}

Result<Strategy> FindStrategy(const std::string& name) {
  std::string names;
  for (const auto& s : Strategies()) {
    if (s.name == name) return s;
    names += (names.empty() ? "" : ", ") + s.name;
  }
  return InvalidArgument(fmt::format("unknown strategy '{}'; allowed: {}", name, names));
}

PlanKnobs BaseKnobs(const ModelSpec& m, const HwProfile& hw, const SearchOptions& o) {
  PlanKnobs k;
  k.nodes = o.nodes;
  k.gpus_per_node = o.gpus_per_node > 0 ? o.gpus_per_node : hw.gpus_per_node;
  k.seq_len = o.seq_len > 0 ? o.seq_len : m.seq_len;
  k.dtype = o.dtype.empty() ? hw.dtype : o.dtype;
  k.accounting = o.accounting;
  k.nvme_dir = o.nvme_dir;
  k.nvme_block_size = hw.nvme_block_size;
  k.nvme_queue_depth = hw.nvme_queue_depth;
  Capacity cap = CapacityFor(hw, k);
  k.device_budget_bytes = o.device_budget_bytes > 0 ? o.device_budget_bytes : cap.device;
  k.host_budget_bytes = o.host_budget_bytes > 0 ? o.host_budget_bytes : cap.host;
  k.nvme_budget_bytes = o.nvme_budget_bytes > 0 ? o.nvme_budget_bytes : cap.nvme;
  return k;
}

namespace {

std::vector<int64_t> PowersOfTwoUpTo(int64_t max) {
  std::vector<int64_t> v;
  for (int64_t x = 1; x <= max; x *= 2) v.push_back(x);
  return v;
}

}  // namespace

bool BetterCandidate(const Candidate& a, const Candidate& b) {
  const double ta = a.prediction.tokens_per_s, tb = b.prediction.tokens_per_s;
  if (std::fabs(ta - tb) > 1e-3 * std::max(ta, tb)) return ta > tb;
  if (a.knobs.tile_factor != b.knobs.tile_factor) return a.knobs.tile_factor < b.knobs.tile_factor;
  const int64_t da = a.knobs.prefetch_nvme + a.knobs.prefetch_h2d + a.knobs.prefetch_allgather;
  const int64_t db = b.knobs.prefetch_nvme + b.knobs.prefetch_h2d + b.knobs.prefetch_allgather;
  if (da != db) return da < db;
  if (a.prediction.device_bytes != b.prediction.device_bytes) return a.prediction.device_bytes < b.prediction.device_bytes;
  return ta > tb;
}

namespace {
const auto Better = BetterCandidate;
}  // namespace

Result<SearchResult> SearchPlans(const ModelSpec& m, const HwProfile& hw, const SearchOptions& o) {
  std::vector<Strategy> strategies;
  if (o.strategies.empty()) {
    strategies = Strategies();
  } else {
    for (const auto& n : o.strategies) {
      ZINF_ASSIGN_OR_RETURN(Strategy s, FindStrategy(n));
      strategies.push_back(s);
    }
  }
  const PlanKnobs base = BaseKnobs(m, hw, o);
  const int64_t dp = base.dp();
  std::vector<int64_t> mbs;
  if (o.micro_batch > 0) {
    mbs = {o.micro_batch};
  } else if (o.global_batch > 0) {
    for (int64_t b : PowersOfTwoUpTo(o.max_micro_batch))
      if (o.global_batch % (b * dp) == 0) mbs.push_back(b);
    if (mbs.empty())
      return InvalidArgument(fmt::format("--global-batch {} is not a multiple of micro_batch x dp ({} GPUs) for any micro_batch <= {}",
                                         o.global_batch, dp, o.max_micro_batch));
  } else {
    mbs = PowersOfTwoUpTo(o.max_micro_batch);
  }
  std::vector<int64_t> cis = {0};
  for (int64_t c : PowersOfTwoUpTo(m.n_layer)) cis.push_back(c);
  if (o.ckpt_interval >= 0) cis = {o.ckpt_interval};
  std::vector<int64_t> tiles = o.search_tiling ? std::vector<int64_t>{1, 2, 4, 8, 16} : std::vector<int64_t>{1};
  if (o.tile_factor > 0) tiles = {o.tile_factor};
  std::vector<Tier> ckpt_tiers = {Tier::kDevice, Tier::kHost};
  if (o.ckpt_tier == "device") ckpt_tiers = {Tier::kDevice};
  if (o.ckpt_tier == "host") ckpt_tiers = {Tier::kHost};
  std::vector<int64_t> nvme_depths = o.search_prefetch ? std::vector<int64_t>{1, 2, 3, 4} : std::vector<int64_t>{3};
  std::vector<int64_t> h2d_depths = o.search_prefetch ? std::vector<int64_t>{1, 2, 3} : std::vector<int64_t>{2};
  std::vector<int64_t> ag_depths = o.search_prefetch ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{1};

  SearchResult res;
  const int top_k = std::max(o.top_k, 1);
  std::vector<Candidate> top;  // sorted best first, at most top_k
  const Capacity cap{base.device_budget_bytes, base.host_budget_bytes, base.nvme_budget_bytes};
  for (const Strategy& st : strategies) {
    for (int64_t mb : mbs) {
      for (int64_t ci : cis) {
        for (Tier ct : ckpt_tiers) {
          if (ci == 0 && ct != ckpt_tiers.front()) continue;
          for (int64_t t : tiles) {
            for (int64_t nd : nvme_depths) {
              if (st.placement.params != Tier::kNvme && nd != nvme_depths.front()) continue;
              for (int64_t hd : h2d_depths) {
                if (st.placement.params == Tier::kDevice && hd != h2d_depths.front()) continue;
                for (int64_t ad : ag_depths) {
                  PlanKnobs k = base;
                  k.placement = st.placement;
                  k.micro_batch = mb;
                  k.grad_accum = o.global_batch > 0 ? o.global_batch / (mb * dp) : 1;
                  k.ckpt_interval = ci;
                  k.ckpt_tier = ct;
                  k.tile_factor = t;
                  k.prefetch_nvme = nd;
                  k.prefetch_h2d = hd;
                  k.prefetch_allgather = ad;
                  DeriveBuffers(m, k);
                  ++res.evaluated;
                  MemoryEstimate mem = EstimateMemory(m, hw, k, /*detail=*/false);
                  std::string over = OverflowTier(mem, cap);
                  if (!over.empty()) {
                    ++res.rejected[over];
                    continue;
                  }
                  ++res.feasible;
                  // Rank on the time model alone; full predictions only for the winners.
                  Candidate c{k, {}};
                  TimeEstimate te = EstimateTime(m, hw, k);
                  c.prediction.step_time_s = te.step_s;
                  c.prediction.tokens_per_s = static_cast<double>(k.micro_batch * k.seq_len * k.grad_accum * dp) / te.step_s;
                  c.prediction.device_bytes = mem.device_bytes;
                  auto it = res.best_per_strategy.find(st.name);
                  if (it == res.best_per_strategy.end() || Better(c, it->second)) res.best_per_strategy[st.name] = c;
                  if (static_cast<int>(top.size()) < top_k || Better(c, top.back())) {
                    auto pos = std::upper_bound(top.begin(), top.end(), c, Better);
                    top.insert(pos, std::move(c));
                    if (static_cast<int>(top.size()) > top_k) top.pop_back();
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  if (top.empty()) {
    std::string why;
    for (const auto& [tier, n] : res.rejected) why += fmt::format("{}{} too small for {} candidates", why.empty() ? "" : "; ", tier, n);
    return Infeasible(fmt::format("no plan fits: {} candidates evaluated; {}", res.evaluated, why));
  }
  for (Candidate& c : top) c.prediction = Evaluate(m, hw, c.knobs);
  for (auto& [name, c] : res.best_per_strategy) c.prediction = Evaluate(m, hw, c.knobs);
  res.top = std::move(top);
  return res;
}

Plan MakePlan(const ModelSpec& m, const HwProfile& hw, const std::string& hw_path, const Candidate& c) {
  Plan p;
  p.model = m;
  p.model.seq_len = c.knobs.seq_len;
  p.hw_name = hw.name;
  p.hw_path = hw_path;
  p.backend = hw.backend;
  p.knobs = c.knobs;
  p.prediction = c.prediction;
  return p;
}

}  // namespace zinf
