#include "planner/model/op_graph.h"

#include <fmt/format.h>

#include "planner/model/memory_model.h"

namespace zinf {

double CpuRankShare(const HwProfile& hw, const PlanKnobs& k) {
  if (hw.backend != "cpu" || k.gpus_per_node <= hw.gpus_per_node || k.gpus_per_node <= 0) return 1.0;
  return static_cast<double>(hw.gpus_per_node) / static_cast<double>(k.gpus_per_node);
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
  auto gemm_s = [&](double M, double K, double N) {
    double flop = 2.0 * M * K * N;
    return flop / hw.GemmRate(flop);
  };
  std::vector<Op> ops;
  // CPU backend: the profile measured the whole CPU as its device(s); more ranks per node
  // than that share its cores, each at its share of the rate.
  const double share = CpuRankShare(hw, k);
  ops.reserve(static_cast<size_t>(m.n_layer) * (3 + 4 * static_cast<size_t>(tiles)) + 2);
  const double pos = m.position == "learned" ? s * h : 0.0;
  ops.push_back({"embed", -1, V * h + pos, bs * h * w * 3 / std::max(hw.memory_bw, 1.0), false});
  // A linear (K -> N) tiled along N: t ops, each gathering 1/t of the weight.
  auto linear = [&](int layer, const char* lname, double K, double N, double extra_s) {
    for (int t = 0; t < tiles; ++t) {
      Op op;
      op.name = !with_names ? std::string() : tiles > 1 ? fmt::format("h{}.{}.tile{}", layer, lname, t) : fmt::format("h{}.{}", layer, lname);
      op.layer = layer;
      op.params = (K * N + bias * N) / tiles;
      op.fwd_s = gemm_s(bs, K, N / tiles) + extra_s / tiles;
      op.in_block = true;
      ops.push_back(op);
    }
  };
  const double norm_params = (m.norm == "layernorm" ? 2.0 : 1.0) * h;
  const double ew_bw = std::max(hw.memory_bw, 1.0);
  for (int l = 0; l < static_cast<int>(m.n_layer); ++l) {
    // Norm params ride with the next linear's fetch; elementwise passes at memory bandwidth.
    ops.push_back({name("ln1", l), l, norm_params, 4 * bs * h * w / ew_bw, true, true});
    linear(l, "attn.qkv", h, h + 2 * kv, 0);
    const double att_flop = 2.0 * s * hdim * s;
    const double att_fwd_flop = 2.0 * static_cast<double>(k.micro_batch) * heads * att_flop;
    const double att_rate = hw.AttentionRate(2.0 * att_flop);  // measured kernel (by one head's size), where profiled
    const double att_s = att_rate > 0 ? att_fwd_flop / att_rate
                                      : att_fwd_flop / hw.GemmRate(att_flop) +
                                            (3.0 * static_cast<double>(k.micro_batch) * heads * s * s * w + 4 * bs * h * w) / ew_bw;
    ops.push_back({name("attn.core", l), l, 0, att_s, true});
    linear(l, "attn.proj", h, h, 2 * bs * h * w / ew_bw);
    ops.push_back({name("ln2", l), l, norm_params, 4 * bs * h * w / ew_bw, true});
    if (m.mlp == "swiglu") {
      linear(l, "mlp.gate_up", h, 2 * f, 3 * bs * f * w / ew_bw);
    } else {
      // GELU: at the measured kernel rate where profiled (tanh is compute-bound on CPUs).
      linear(l, "mlp.fc", h, f, hw.gelu_elems_per_s > 0 ? bs * f / hw.gelu_elems_per_s : 2 * bs * f * w / ew_bw);
    }
    linear(l, "mlp.proj", f, h, 2 * bs * h * w / ew_bw);
  }
  // Tied LM head gathers the embedding again; an untied head has its own weight.
  ops.push_back({"head", -1, V * h + norm_params, gemm_s(bs, h, V) + 4 * bs * V * 4 / ew_bw, false});
  // Measured per-op overhead of the executor (profile), for ops that are executor ops
  // (attention runs inside the layer's ops there).
  if (hw.op_overhead_s > 0)
    for (Op& op : ops)
      if (op.params > 0) op.fwd_s += hw.op_overhead_s;
  if (share < 1.0)
    for (Op& op : ops) op.fwd_s /= share;
  return ops;
}

}  // namespace zinf
