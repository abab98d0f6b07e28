#include "planner/model/memory_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <tuple>
#include <vector>

namespace zinf {

double DtypeBytes(const std::string& dtype) { return dtype == "fp32" ? 4.0 : 2.0; }

StateBytes StateBytesFor(const std::string& dtype, const std::string& accounting) {
  StateBytes s;
  s.param = DtypeBytes(dtype);
  s.grad = DtypeBytes(dtype);
  // fp32 training keeps no separate master copy: the working params are the master.
  double master = dtype == "fp32" ? 0.0 : 4.0;
  s.optimizer = master + 8.0 + (accounting == "paper" ? 4.0 : 0.0);
  return s;
}

double OptimizerExtraNvmeReadBytes(const PlanKnobs& k, const StateBytes& sb) {
  if (k.placement.optimizer == Tier::kDevice) return 0.0;
  double b = 0;
  if (k.placement.grads == Tier::kNvme) b += sb.grad;
  if (k.placement.params == Tier::kNvme && k.dtype == "fp32") b += sb.param;
  return b;
}

namespace {

// The executor's parameter groups (executor/model/param_groups.cc): numel of each kind, the
// linears per tile.
struct ExecutorGroupNumels {
  double embed, ln, qkv, proj, fc, mproj;
};

ExecutorGroupNumels GroupNumels(const ModelSpec& m, int64_t seq_len, int64_t tile) {
  const double C = static_cast<double>(m.hidden), t = static_cast<double>(std::max<int64_t>(tile, 1));
  return {static_cast<double>(m.vocab) * C + static_cast<double>(seq_len) * C,  // wte + wpe
          2 * C, 3 * C / t * C + 3 * C / t, C / t * C + C / t, 4 * C / t * C + 4 * C / t, C / t * 4 * C + C / t};
}

// One rank's shard of a group of `numel`: ceil(numel / dp), padded to a multiple of 1024.
double ShardElems(double numel, int64_t dp) {
  const double per = std::ceil(numel / static_cast<double>(dp));
  return std::max(1.0, std::ceil(per / 1024.0)) * 1024.0;
}

}  // namespace

std::vector<double> ExecutorGroupShards(const ModelSpec& m, int64_t seq_len, int64_t tile, int64_t dp) {
  const ExecutorGroupNumels g = GroupNumels(m, seq_len, tile);
  const int64_t t = std::max<int64_t>(tile, 1);
  std::vector<double> out{ShardElems(g.embed, dp)};
  for (int64_t l = 0; l < m.n_layer; ++l) {
    out.push_back(ShardElems(g.ln, dp));
    out.insert(out.end(), static_cast<size_t>(t), ShardElems(g.qkv, dp));
    out.insert(out.end(), static_cast<size_t>(t), ShardElems(g.proj, dp));
    out.push_back(ShardElems(g.ln, dp));
    out.insert(out.end(), static_cast<size_t>(t), ShardElems(g.fc, dp));
    out.insert(out.end(), static_cast<size_t>(t), ShardElems(g.mproj, dp));
  }
  out.push_back(ShardElems(g.ln, dp));  // ln_f
  return out;
}

ExecutorShards ExecutorShardElems(const ModelSpec& m, int64_t seq_len, int64_t tile, int64_t dp) {
  ExecutorShards s;
  for (double shard : ExecutorGroupShards(m, seq_len, tile, dp)) {
    s.total_elems += shard;
    s.max_elems = std::max(s.max_elems, shard);
  }
  return s;
}

double ExecutorGroupsOfAtLeast(const ModelSpec& m, int64_t seq_len, int64_t tile, int64_t dp, double min_elems) {
  const std::vector<double> shards = ExecutorGroupShards(m, seq_len, tile, dp);
  return static_cast<double>(std::count_if(shards.begin(), shards.end(), [&](double e) { return e >= min_elems; }));
}

namespace {

// The executor's step schedule (Gpt::Forward / Backward): every op that fetches a parameter
// group, as its gathered elements, forward then backward (backward ops also take a gradient
// buffer of the group's size).
struct ScheduledOp {
  double gathered;
  bool backward;
};

std::vector<ScheduledOp> ExecutorSchedule(const ModelSpec& m, int64_t seq_len, int64_t tile, int64_t dp) {
  const int64_t t = std::max<int64_t>(tile, 1);
  const ExecutorGroupNumels n = GroupNumels(m, seq_len, tile);
  auto gathered = [&](double numel) { return ShardElems(numel, dp) * static_cast<double>(dp); };
  const double embed = gathered(n.embed), ln = gathered(n.ln), qkv = gathered(n.qkv), proj = gathered(n.proj);
  const double fc = gathered(n.fc), mproj = gathered(n.mproj);
  std::vector<ScheduledOp> ops;
  bool bwd = false;
  auto op = [&](double size) { ops.push_back({size, bwd}); };
  auto linear = [&](double size) {
    for (int64_t j = 0; j < t; ++j) op(size);
  };
  op(embed);  // forward: embed, blocks, ln_f, LM head (the embedding)
  for (int64_t l = 0; l < m.n_layer; ++l) {
    op(ln);
    linear(qkv);
    linear(proj);
    op(ln);
    linear(fc);
    linear(mproj);
  }
  op(ln);
  op(embed);
  bwd = true;
  op(embed);  // backward: LM head, ln_f, blocks in reverse, token embedding
  op(ln);
  for (int64_t l = 0; l < m.n_layer; ++l) {
    linear(mproj);
    linear(fc);
    op(ln);
    linear(proj);
    linear(qkv);
    op(ln);
  }
  op(embed);
  return ops;
}

double WindowSum(const std::vector<ScheduledOp>& ops, size_t i, int64_t window) {
  double sum = 0;
  for (size_t j = i; j < ops.size() && j < i + static_cast<size_t>(std::max<int64_t>(window, 0)); ++j) sum += ops[j].gathered;
  return sum;
}

}  // namespace

double ExecutorFetchWindowElems(const ModelSpec& m, int64_t seq_len, int64_t tile, int64_t dp, int64_t window) {
  const std::vector<ScheduledOp> ops = ExecutorSchedule(m, seq_len, tile, dp);
  const int64_t w = std::clamp<int64_t>(window, 1, static_cast<int64_t>(ops.size()));
  double best = 0;
  for (size_t i = 0; i < ops.size(); ++i) best = std::max(best, WindowSum(ops, i, w));
  return best;
}

ExecutorWorkingSet ExecutorWorkingElems(const ModelSpec& m, int64_t seq_len, int64_t tile, int64_t dp, int64_t window,
                                        double bucket_elems, int64_t shard_window) {
  // The search asks for the same few (tile, window, bucket) many times: keep the last answers.
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, double, int64_t>;
  thread_local std::map<Key, ExecutorWorkingSet> memo;
  const Key key{m.n_layer, m.hidden, m.ffn_hidden, m.vocab, seq_len, tile, dp, window, bucket_elems, shard_window};
  if (auto it = memo.find(key); it != memo.end()) return it->second;
  if (memo.size() > 4096) memo.clear();
  const std::vector<ScheduledOp> ops = ExecutorSchedule(m, seq_len, tile, dp);
  ExecutorWorkingSet best;
  std::deque<double> inflight;  // released gradients, oldest first, none finished (the worst case)
  double inflight_sum = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    ExecutorWorkingSet here{WindowSum(ops, i, window), 0.0, WindowSum(ops, i + 1, shard_window) / static_cast<double>(dp)};
    if (ops[i].backward) here.grad_elems = ops[i].gathered + inflight_sum;
    auto total = [](const ExecutorWorkingSet& w) { return w.fetched_elems + w.grad_elems + w.shard_elems; };
    if (total(here) > total(best)) best = here;
    if (!ops[i].backward) continue;
    // Zero3Engine::ReleaseGrad: wait for the oldest until this one fits the bucket beside them.
    while (!inflight.empty() && inflight_sum + ops[i].gathered > bucket_elems) {
      inflight_sum -= inflight.front();
      inflight.pop_front();
    }
    inflight.push_back(ops[i].gathered);
    inflight_sum += ops[i].gathered;
  }
  memo.emplace(key, best);
  return best;
}

double ExecutorPinnedPoolBytes(const ExecutorShards& s, const PlanKnobs& k) {
  const int64_t da = std::max<int64_t>(0, k.prefetch_allgather), dh = std::max(da, k.prefetch_h2d);
  const int64_t dn = std::max(dh, k.prefetch_nvme);
  const double bytes = static_cast<double>(dn + 1 + 2 + 12) * s.max_elems * 4.0 + (1 << 20);
  return std::ceil(bytes / 4096.0) * 4096.0;
}

double PaperModelStateBytes(const ModelSpec& m) { return 20.0 * CountParams(m).paper_blocks; }

double PaperCheckpointBytes(const ModelSpec& m, double bsz, double ci) {
  return 2.0 * bsz * static_cast<double>(m.seq_len) * static_cast<double>(m.hidden) *
         static_cast<double>(m.n_layer) / ci;
}

double PaperModelStateWorkingBytes(const ModelSpec& m) {
  double hd = static_cast<double>(m.hidden);
  return 4.0 * hd * 4.0 * hd;
}

double PaperActivationWorkingBytes(const ModelSpec& m, double bsz, double ci) {
  double hd = static_cast<double>(m.hidden), seq = static_cast<double>(m.seq_len);
  return bsz * seq * ci * (16.0 * hd + 2.0 * static_cast<double>(m.n_head) * seq);
}

OpSizes ComputeOpSizes(const ModelSpec& m) {
  OpSizes o;
  double h = static_cast<double>(m.hidden), f = static_cast<double>(m.ffn_hidden);
  double kv = static_cast<double>(m.n_kv_head * m.head_dim());
  o.largest_linear = std::max(h * f, h * (h + 2 * kv));
  o.embedding = static_cast<double>(m.vocab) * h;
  o.layer = CountParams(m).per_layer;
  return o;
}

namespace {

struct Acc {
  bool detail = true;
  MemoryEstimate est;
  // Formula text only when details are wanted (the search skips it: it is the hot path).
  template <typename... Args>
  std::string F(std::string_view f, const Args&... args) const {
    return detail ? fmt::vformat(f, fmt::make_format_args(args...)) : std::string();
  }
  void Add(Tier tier, double bytes, const std::string& name, const std::string& formula) {
    if (bytes <= 0) return;
    if (detail) est.items.push_back({TierName(tier), name, bytes, formula});
    if (tier == Tier::kDevice) est.device_bytes += bytes;
    if (tier == Tier::kHost) est.host_bytes += bytes;
    if (tier == Tier::kNvme) est.nvme_bytes += bytes;
  }
};

}  // namespace

MemoryEstimate EstimateMemory(const ModelSpec& m, const HwProfile& hw, const PlanKnobs& k, bool detail) {
  Acc a;
  a.detail = detail;
  const ParamCounts pc = CountParams(m);
  const OpSizes ops = ComputeOpSizes(m);
  const StateBytes sb = StateBytesFor(k.dtype, k.accounting);
  const double P = pc.total, dp = static_cast<double>(k.dp());
  const double g = static_cast<double>(k.gpus_per_node);
  const double w = DtypeBytes(k.dtype);
  const double b = static_cast<double>(k.micro_batch), s = static_cast<double>(k.seq_len);
  const double hd = static_cast<double>(m.hidden), nl = static_cast<double>(m.n_layer);
  const double heads = static_cast<double>(m.n_head), V = static_cast<double>(m.vocab);
  const double t = static_cast<double>(k.tile_factor);
  // Per-node multiplier for host/NVMe-resident per-GPU items.
  auto per_tier = [&](Tier tier) { return tier == Tier::kDevice ? 1.0 : g; };
  auto shard_formula = [&](const char* what, double bpp, Tier tier) {
    return a.F("{} B/param x {} params / dp {}{}", bpp, P, dp, tier == Tier::kDevice ? "" : a.F(" x {} GPUs/node", g));
  };

  // 1. Model states, sharded 1/dp.
  const Placement& pl = k.placement;
  const bool cpu = hw.backend == "cpu";
  // On the CPU executor every group is sharded and padded on its own (see ExecutorShardElems).
  const ExecutorShards xs = cpu ? ExecutorShardElems(m, k.seq_len, k.tile_factor, k.dp()) : ExecutorShards{};
  const double shard_params = cpu ? xs.total_elems : P / dp;
  auto shard_text = [&](const char* what, double bpp, Tier tier) {
    return cpu ? a.F("{} B/param x {} padded shard elements (per group: ceil(numel / dp {}) to 1024){}", bpp,
                     xs.total_elems, dp, tier == Tier::kDevice ? "" : a.F(" x {} GPUs/node", g))
               : shard_formula(what, bpp, tier);
  };
  a.Add(pl.params, sb.param * shard_params * per_tier(pl.params), a.F("parameter shards ({})", k.dtype),
        shard_text("param", sb.param, pl.params));
  a.Add(pl.grads, sb.grad * shard_params * per_tier(pl.grads), a.F("gradient shards ({})", k.dtype),
        shard_text("grad", sb.grad, pl.grads));
  a.Add(pl.optimizer, sb.optimizer * shard_params * per_tier(pl.optimizer),
        k.accounting == "paper" ? "optimizer states (fp32 master, grad, m, v)" : "optimizer states (fp32 master, m, v)",
        shard_text("optimizer", sb.optimizer, pl.optimizer));

  if (cpu) {
    // zinf's executor (executor/zero3/coordinator.cc): a fetched op's params live from the
    // issue of its fetch to its Release, so the current op and its prefetched successors hold
    // gathered buffers (one rank: the H2D copy lands in it; params on the device with one rank
    // are used in place); with several ranks, shards copied ahead wait in their own buffers.
    // The current op's gradient buffer, and gradients in flight up to the bucket.
    const int64_t da = std::max<int64_t>(0, k.prefetch_allgather), dh = std::max(da, k.prefetch_h2d);
    const bool one = k.dp() == 1;
    const int64_t window = one ? (pl.params == Tier::kDevice ? 0 : dh + 1) : da + 1;
    // Zero3Engine::ReleaseGrad's bucket: buffers.reduce_bucket, or the largest group if unset.
    const double bucket = k.reduce_bucket_bytes > 0 ? k.reduce_bucket_bytes / 4.0 : xs.max_elems * dp;
    const bool shards_ahead = !one && pl.params != Tier::kDevice;
    const ExecutorWorkingSet ws = ExecutorWorkingElems(m, k.seq_len, k.tile_factor, k.dp(), window, bucket, shards_ahead ? dh : 0);
    a.Add(Tier::kDevice, 4.0 * ws.fetched_elems, "fetched parameter buffers (executor)",
          a.F("4 B x the padded group elements of {} consecutive ops, at the op with the most fetched and gradient buffers", window));
    if (shards_ahead)
      a.Add(Tier::kDevice, 4.0 * ws.shard_elems, "H2D prefetch (param shards)",
            a.F("4 B x the padded shards of the h2d_depth {} ops after that op (copied ahead, waiting for their allgather)", dh));
    a.Add(Tier::kDevice, 4.0 * ws.grad_elems, "gradient buffers (executor: the current op's and those in flight)",
          a.F("4 B x (the op's padded group + released ones not yet reduced, within the bucket of {} B), at that op", 4.0 * bucket));
  } else {
    // 2. Model-state working memory: the largest op's gathered params + grads (tiled linears / t).
    const double op_params = std::max(ops.largest_linear / t, ops.embedding);
    a.Add(Tier::kDevice, 2 * w * op_params, "model-state working memory (largest op p+g)",
          a.F("2 x {} B x max(largest linear {} / tile {}, embedding {})", w, ops.largest_linear, t, ops.embedding));
    // Gathered parameters prefetched ahead of use (allgather depth ops, each one op).
    const double op_bytes = w * std::max(ops.largest_linear / t, ops.layer / 6.0);
    a.Add(Tier::kDevice, static_cast<double>(k.prefetch_allgather) * op_bytes, "allgather prefetch buffers",
          a.F("allgather_depth {} x op {} B", k.prefetch_allgather, op_bytes));
    if (pl.params != Tier::kDevice) {
      a.Add(Tier::kDevice, static_cast<double>(k.prefetch_h2d) * op_bytes / dp, "H2D prefetch (param shards)",
            a.F("h2d_depth {} x op {} B / dp", k.prefetch_h2d, op_bytes));
    }
    a.Add(Tier::kDevice, k.reduce_bucket_bytes, "gradient reduce-scatter bucket", "buffers.reduce_bucket");
  }

  // 3. Activations.
  if (hw.backend == "cpu") {
    // zinf's own CPU executor (fp32), mirroring executor/model/gpt.cc's buffer layout: per
    // layer slot ln1, qkv, attn, x2, ln2, out (8 C) + fc and gelu (8 C) + norm stats (4) per
    // token, and the softmax probabilities B*H*T^2; one slot per layer of a segment; the
    // segment input, the final norm and the logits; gradient scratch (10 C + 3 per token).
    const double N = b * s, C = hd;
    const double seg = k.ckpt_interval > 0 && k.ckpt_interval < m.n_layer ? static_cast<double>(k.ckpt_interval) : nl;
    const double slot = 4.0 * (16 * N * C + 4 * N) + 4.0 * b * heads * s * s;
    a.Add(Tier::kDevice, seg * slot, "activations (executor: one segment of layers)",
          a.F("{} layers x (4 B x (16 C + 4) x {} tokens + 4 B x bsz x heads x seq^2)", seg, N));
    a.Add(Tier::kDevice, 4.0 * (2 * N * C + 2 * N) + 4.0 * N * V, "segment input, final norm, logits (fp32)",
          a.F("4 B x (2 C + 2) x {} tokens + 4 B x {} tokens x vocab {}", N, N, V));
    a.Add(Tier::kDevice, 4.0 * (10 * N * C + 3 * N) + 4.0 * 2 * 64 * s, "gradient scratch (executor)",
          a.F("4 B x (10 C + 3) x {} tokens + attention workspace", N));
    if (k.ckpt_interval > 0 && k.ckpt_interval < m.n_layer) {
      const double saved = std::ceil(nl / static_cast<double>(k.ckpt_interval)) - 1;  // the last segment stays live
      a.Add(k.ckpt_tier, 4.0 * N * C * saved * (k.ckpt_tier == Tier::kDevice ? 1.0 : g), "activation checkpoints",
            a.F("4 B x {} tokens x C x {} saved segment inputs", N, saved));
    }
  } else {
    const double awm_scale = w / 2.0;  // the paper's coefficients are fp16 bytes
    if (k.ckpt_interval > 0) {
      const double ci = static_cast<double>(k.ckpt_interval);
      const double n_ckpt = std::ceil(nl / ci);
      const double ckpt = w * b * s * hd * n_ckpt;
      a.Add(k.ckpt_tier, ckpt * (k.ckpt_tier == Tier::kDevice ? 1.0 : g), "activation checkpoints",
            a.F("{} B x bsz {} x seq {} x hd {} x ceil(nl {} / ci {}){}", w, b, s, hd, nl, ci,
                k.ckpt_tier == Tier::kDevice ? "" : " x GPUs/node"));
      a.Add(Tier::kDevice, awm_scale * b * s * ci * (16 * hd + 2 * heads * s), "activation working memory (one segment)",
            a.F("({}/2) x bsz {} x seq {} x ci {} x (16 hd + 2 heads seq)", w, b, s, ci));
    } else {
      a.Add(Tier::kDevice, awm_scale * b * s * nl * (16 * hd + 2 * heads * s), "activations (no checkpointing)",
            a.F("({}/2) x bsz {} x seq {} x nl {} x (16 hd + 2 heads seq)", w, b, s, nl));
    }
    a.Add(Tier::kDevice, 2 * 4.0 * b * s * V, "logits and their gradient (fp32)", a.F("2 x 4 B x bsz {} x seq {} x vocab {}", b, s, V));
  }

  // 4. Host buffers (pinned): staging and NVMe swap buffers, per GPU x GPUs/node.
  if (cpu) {  // the CPU executor's one pinned pool per rank serves every transfer
    a.Add(Tier::kHost, ExecutorPinnedPoolBytes(xs, k) * g, "pinned staging pool (executor)",
          a.F("(prefetch depth {} + 15) x largest shard {} floats x 4 B + 1 MiB, x {} GPUs/node",
              std::max({k.prefetch_nvme, k.prefetch_h2d, k.prefetch_allgather}), xs.max_elems, g));
    return a.est;
  }
  const bool any_offload = pl.params != Tier::kDevice || pl.grads != Tier::kDevice ||
                           pl.optimizer != Tier::kDevice || k.ckpt_tier == Tier::kHost;
  if (any_offload) a.Add(Tier::kHost, k.staging_bytes * g, "pinned staging buffers", "buffers.staging x GPUs/node");
  const bool any_nvme = pl.params == Tier::kNvme || pl.grads == Tier::kNvme || pl.optimizer == Tier::kNvme;
  if (any_nvme)
    a.Add(Tier::kHost, k.nvme_swap_buffer_bytes * static_cast<double>(k.nvme_swap_buffers) * g, "NVMe swap buffers",
          a.F("{} buffers x {} B x GPUs/node", k.nvme_swap_buffers, k.nvme_swap_buffer_bytes));
  if (pl.optimizer != Tier::kDevice && pl.optimizer != Tier::kNvme && pl.grads == Tier::kDevice)
    a.Add(Tier::kHost, sb.grad * P / dp * g, "gradient shards copied for the CPU optimizer", "grad B/param x params / dp x GPUs/node");
  return a.est;
}

}  // namespace zinf
