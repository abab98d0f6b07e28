#include "planner/model/op_graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "executor/backend/cpu/kernels.h"
#include "planner/model/memory_model.h"

namespace zinf {

double CpuRankShare(const HwProfile& hw, const PlanKnobs& k) {
  if (hw.backend != "cpu" || k.gpus_per_node <= hw.gpus_per_node || k.gpus_per_node <= 0) return 1.0;
  return static_cast<double>(hw.gpus_per_node) / static_cast<double>(k.gpus_per_node);
}

bool CpuOversubscribed(const HwProfile& hw, const PlanKnobs& k) {
  return hw.backend == "cpu" && k.gpus_per_node > hw.cpu_cores;
}

double AdamLaunchTime(const ModelSpec& m, const HwProfile& hw, const PlanKnobs& k) {
  if (hw.backend != "cpu" || hw.kernel_launch_s <= 0) return 0.0;
  return hw.kernel_launch_s * ExecutorGroupsOfAtLeast(m, k.seq_len, k.tile_factor, k.dp(), static_cast<double>(cpu::kAdamMinParallel));
}

namespace {
double PerRank(double per_gpu, double node, int64_t ranks_per_node) {
  if (node <= 0 || ranks_per_node <= 0) return per_gpu;
  return std::min(per_gpu, node / static_cast<double>(ranks_per_node));
}
}  // namespace

double NvmeReadBwPerRank(const HwProfile& hw, const PlanKnobs& k) { return PerRank(hw.nvme_read_bw, hw.nvme_read_bw_node, k.gpus_per_node); }
double NvmeWriteBwPerRank(const HwProfile& hw, const PlanKnobs& k) { return PerRank(hw.nvme_write_bw, hw.nvme_write_bw_node, k.gpus_per_node); }

int64_t SavedCheckpoints(const ModelSpec& m, const PlanKnobs& k) {
  if (k.ckpt_interval <= 0 || k.ckpt_interval >= m.n_layer) return 0;
  return (m.n_layer + k.ckpt_interval - 1) / k.ckpt_interval - 1;
}

int64_t RecomputedLayers(const ModelSpec& m, const PlanKnobs& k) { return SavedCheckpoints(m, k) * k.ckpt_interval; }

int64_t ParamGroups(const std::vector<Op>& ops) {
  return std::count_if(ops.begin(), ops.end(), [](const Op& op) { return op.params > 0; });
}

std::vector<Op> BuildForwardOps(const ModelSpec& m, const HwProfile& hw, const PlanKnobs& k, bool with_names) {
  auto name = [&](const char* what, int layer) { return with_names ? fmt::format("h{}.{}", layer, what) : std::string(); };
  const double bs = static_cast<double>(k.micro_batch * k.seq_len);
  const double h = static_cast<double>(m.hidden), f = static_cast<double>(m.ffn_hidden);
  const double kv = static_cast<double>(m.n_kv_head * m.head_dim());
  const double s = static_cast<double>(k.seq_len), V = static_cast<double>(m.vocab);
  const double heads = static_cast<double>(m.n_head), hdim = static_cast<double>(m.head_dim());
  const double w = DtypeBytes(k.dtype);
  const double bias = m.bias ? 1.0 : 0.0;
  const int tiles = static_cast<int>(k.tile_factor);
  const double ew_bw = std::max(hw.memory_bw, 1.0);
  // A pass over tensors the op before it just wrote (the residual stream into a norm, a
  // linear's output initialised before its GEMM, the incoming gradient summed for the bias):
  // at the rate of a pass of that working set over cached data (memory_bw without the curve).
  auto hot_pass_s = [&](double bytes, double working_set) { return bytes / std::max(hw.HotPassBw(working_set), 1.0); };
  std::vector<Op> ops;
  // CPU backend: the profile measured the whole CPU as its device(s); more ranks per node
  // than that share its cores, each at its share of the rate.
  const double share = CpuRankShare(hw, k);
  ops.reserve(static_cast<size_t>(m.n_layer) * (5 + 4 * static_cast<size_t>(tiles)) + 2);
  // CPU backend: a parallel kernel's launch (its thread team woken and joined, measured) for
  // each kernel costed as memory passes or at large-array rates, where the executor runs it in
  // parallel (the ParallelChunks thresholds of executor/backend/cpu); the GEMM and attention
  // rates were measured with it inside.
  const double launch = hw.backend == "cpu" ? hw.kernel_launch_s : 0.0;
  auto par = [&](double n, double min_work) { return n >= std::floor(min_work) ? launch : 0.0; };
  auto rows_par = [&](double cols, double min_elems) { return par(bs, min_elems / (cols + 1)); };  // over token rows
  auto cols_par = [&](double cols, double min_elems) { return par(cols, min_elems / (bs + 1) + 16); };  // over columns
  // More ranks than cores take turns on them: a GEMM runs at the shared-core speed of its
  // working set (its three matrices), the rate the probes timed one thread alone at times that.
  const bool shared_cores = CpuOversubscribed(hw, k);
  auto gemm_s = [&](double flop, double rate, double rows, double in, double out) {
    const double t = flop / rate;
    return shared_cores ? t / hw.SharedCoreSpeed(w * (rows * in + in * out + rows * out)) : t;
  };
  const double pos = m.position == "learned" ? s * h : 0.0;
  const double embed_s = bs * h * w * 3 / ew_bw;
  ops.push_back({"embed", -1, V * h + pos, embed_s + rows_par(h, 16384), 2 * embed_s + cols_par(h, 16384), false});
  // A linear (K -> N) tiled along N: t ops, each gathering 1/t of the weight, at the GEMM
  // rate of its row count (tokens) where the profile has per-token curves. Forward: the
  // bias (and residual) initialisation pass, then the GEMM; backward: dW and dX GEMMs (at the
  // measured backward rate) and the bias gradient's pass over dY.
  auto linear = [&](int layer, const char* lname, double K, double N, bool residual) {
    const double flop = 2.0 * bs * K * N / tiles;
    const double out_bytes = bs * N / tiles * w;
    const double init_s = hot_pass_s((residual ? 2.0 : 1.0) * out_bytes, (residual ? 2.0 : 1.0) * out_bytes) + rows_par(N / tiles, 32768);
    for (int t = 0; t < tiles; ++t) {
      Op op;
      op.name = !with_names ? std::string() : tiles > 1 ? fmt::format("h{}.{}.tile{}", layer, lname, t) : fmt::format("h{}.{}", layer, lname);
      op.layer = layer;
      op.params = (K * N + bias * N) / tiles;
      op.fwd_s = gemm_s(flop, hw.GemmRate(flop, bs), bs, K, N / tiles) + init_s;
      op.bwd_s = gemm_s(2.0 * flop, hw.GemmBwdRate(flop, bs), bs, K, N / tiles) +
                 bias * (hot_pass_s(out_bytes, out_bytes) + cols_par(N / tiles, 32768));
      op.in_block = true;
      ops.push_back(op);
    }
  };
  // A kernel between the parameter ops (no fetch).
  auto kernel = [&](const char* what, int layer, double fwd_s, double bwd_s) {
    Op op;
    op.name = name(what, layer);
    op.layer = layer;
    op.fwd_s = fwd_s;
    op.bwd_s = bwd_s;
    op.in_block = true;
    ops.push_back(op);
  };
  const double norm_params = (m.norm == "layernorm" ? 2.0 : 1.0) * h;
  // LayerNorm: forward over the residual stream just written (x in, y out); the backward
  // reads the x its forward saved a pass earlier besides the incoming gradient, and stays at
  // memory_bw (in zrun it took 0.7-1.3x that, not the hot rate: docs/performance-model.md).
  const double norm_s = 4 * bs * h * w / ew_bw;
  const double norm_fwd_s = hot_pass_s(4 * bs * h * w, 2 * bs * h * w) + rows_par(h, 16384);
  const double norm_bwd_s = 2 * norm_s + rows_par(h, 16384) + cols_par(h, 16384);
  // Attention core, by one head's size: the measured kernel where profiled.
  const double att_flop = 2.0 * s * hdim * s;
  const double att_fwd_flop = 2.0 * static_cast<double>(k.micro_batch) * heads * att_flop;
  const double att_rate = hw.AttentionRate(2.0 * att_flop), att_fwd_rate = hw.AttentionFwdRate(2.0 * att_flop);
  double att_fwd_s = 0, att_bwd_s = 0;
  if (att_rate > 0) {
    const double total = 3.0 * att_fwd_flop / att_rate;  // forward + backward
    att_fwd_s = att_fwd_rate > 0 ? std::min(att_fwd_flop / att_fwd_rate, 0.5 * total) : total / 3.0;
    att_bwd_s = total - att_fwd_s;
  } else {
    att_fwd_s = att_fwd_flop / hw.GemmRate(att_flop) +
                (3.0 * static_cast<double>(k.micro_batch) * heads * s * s * w + 4 * bs * h * w) / ew_bw;
    att_bwd_s = 2.0 * att_fwd_s;
  }
  for (int l = 0; l < static_cast<int>(m.n_layer); ++l) {
    // Norm params ride with the next linear's fetch; elementwise passes at memory bandwidth.
    ops.push_back({name("ln1", l), l, norm_params, norm_fwd_s, norm_bwd_s, true, true});
    linear(l, "attn.qkv", h, h + 2 * kv, false);
    kernel("attn.core", l, att_fwd_s, att_bwd_s);
    linear(l, "attn.proj", h, h, true);
    ops.push_back({name("ln2", l), l, norm_params, norm_fwd_s, norm_bwd_s, true});
    if (m.mlp == "swiglu") {
      linear(l, "mlp.gate_up", h, 2 * f, false);
      kernel("mlp.act", l, 3 * bs * f * w / ew_bw + par(bs * f, 32768), 6 * bs * f * w / ew_bw + par(bs * f, 32768));
    } else {
      linear(l, "mlp.fc", h, f, false);
      // GELU: at the measured kernel rates where profiled (tanh is compute-bound on CPUs).
      const double gelu_s = hw.gelu_elems_per_s > 0 ? bs * f / hw.gelu_elems_per_s : 2 * bs * f * w / ew_bw;
      kernel("mlp.gelu", l, gelu_s + par(bs * f, 32768),
             (hw.gelu_bwd_elems_per_s > 0 ? bs * f / hw.gelu_bwd_elems_per_s : 2 * gelu_s) + par(bs * f, 32768));
    }
    linear(l, "mlp.proj", f, h, true);
  }
  // Tied LM head gathers the embedding again; an untied head has its own weight. Forward:
  // the final norm, the logits GEMM and the softmax cross-entropy (fp32 logits; at the
  // measured kernel rates where profiled); backward: the cross-entropy's gradient, dX and dW
  // GEMMs, the final norm's backward.
  const double head_flop = 2.0 * bs * h * V;
  const double ce_s = hw.cross_entropy_elems_per_s > 0 ? bs * V / hw.cross_entropy_elems_per_s : 4 * bs * V * 4 / ew_bw;
  const double ce_bwd_s =
      hw.cross_entropy_bwd_elems_per_s > 0 ? bs * V / hw.cross_entropy_bwd_elems_per_s : 2 * bs * V * 4 / ew_bw;
  ops.push_back({"head", -1, V * h + norm_params,
                 gemm_s(head_flop, hw.GemmRate(head_flop, bs), bs, h, V) + norm_fwd_s + ce_s + rows_par(V, 16384),
                 gemm_s(2.0 * head_flop, hw.GemmBwdRate(head_flop, bs), bs, h, V) + norm_bwd_s + ce_bwd_s + rows_par(V, 16384), false});
  // Measured per-op overhead of the executor (profile), for ops that are executor ops; a
  // backward op pays it twice (its gradient hand-off).
  if (hw.op_overhead_s > 0)
    for (Op& op : ops)
      if (op.params > 0) {
        op.fwd_s += hw.op_overhead_s;
        op.bwd_s += 2.0 * hw.op_overhead_s;
      }
  if (share < 1.0)
    for (Op& op : ops) {
      op.fwd_s /= share;
      op.bwd_s /= share;
    }
  return ops;
}

}  // namespace zinf
