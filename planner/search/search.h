// Schedule search: placement x micro-batch x checkpoint interval and tier x tiling x prefetch
// depths (buffers derived). Infeasible candidates (by memory at any tier) are rejected; the
// rest are ranked by predicted tokens/s.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/hw_profile.h"
#include "core/model_spec.h"
#include "core/plan.h"

namespace zinf {

struct Strategy {
  std::string name;  // "none", "opt:host", ...
  Placement placement;
};
// The placements the planner knows, from nothing offloaded to everything on NVMe.
const std::vector<Strategy>& Strategies();
Result<Strategy> FindStrategy(const std::string& name);

struct SearchOptions {
  int64_t nodes = 1;
  int64_t gpus_per_node = 0;       // 0 -> the profile's
  int64_t global_batch = 0;        // sequences per step; 0 -> free (grad_accum = 1)
  int64_t micro_batch = 0;         // 0 -> searched
  int64_t max_micro_batch = 64;
  int64_t seq_len = 0;             // 0 -> the model's
  std::string dtype;               // "" -> the profile's
  std::string accounting = "zero";
  std::vector<std::string> strategies;  // empty -> all
  std::string nvme_dir = "/tmp/zinf-nvme";
  double device_budget_bytes = 0;  // 0 -> the profile's device memory less the reserve
  double host_budget_bytes = 0;
  double nvme_budget_bytes = 0;
  bool search_tiling = true;
  bool search_prefetch = true;
  int64_t tile_factor = 0;         // > 0: only this tiling factor
  int64_t ckpt_interval = -1;      // >= 0: only this checkpoint interval (0: no checkpoints)
  std::string ckpt_tier;           // "device" / "host": only checkpoints there; "" searched
  int top_k = 10;
};

struct Candidate {
  PlanKnobs knobs;
  Prediction prediction;
};

struct SearchResult {
  std::vector<Candidate> top;   // best first
  int64_t evaluated = 0;
  int64_t feasible = 0;
  std::map<std::string, int64_t> rejected;  // overflowing tier -> count
  std::map<std::string, Candidate> best_per_strategy;
};

// Ranking: faster first; within 0.1% (noise for a model) the simpler schedule: no tiling,
// shallower prefetch, then less device memory.
bool BetterCandidate(const Candidate& a, const Candidate& b);

// Base knobs from options (everything but the searched dimensions).
PlanKnobs BaseKnobs(const ModelSpec& m, const HwProfile& hw, const SearchOptions& o);

Result<SearchResult> SearchPlans(const ModelSpec& m, const HwProfile& hw, const SearchOptions& o);

Plan MakePlan(const ModelSpec& m, const HwProfile& hw, const std::string& hw_path, const Candidate& c);

}  // namespace zinf
