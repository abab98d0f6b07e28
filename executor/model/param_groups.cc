#include "executor/model/param_groups.h"

#include <fmt/format.h>

#include <cmath>

namespace zinf {

size_t TensorSpec::numel() const {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

size_t TensorSpec::row_elems() const {
  size_t n = 1;
  for (size_t i = 1; i < shape.size(); ++i) n *= static_cast<size_t>(shape[i]);
  return n;
}

namespace {

class LayoutBuilder {
 public:
  explicit LayoutBuilder(GptParamLayout* out) : out_(out) {}

  int Group(std::string name, int layer, int tile, int tiles) {
    ParamGroup g;
    g.name = std::move(name);
    g.layer = layer;
    g.tile = tile;
    g.tiles = tiles;
    out_->groups.push_back(std::move(g));
    return static_cast<int>(out_->groups.size()) - 1;
  }
  // Appends a slice [row_begin, row_begin + shape[0]) of a logical tensor.
  void Tensor(int group, std::string name, std::vector<int64_t> shape, int64_t row_begin,
              int64_t logical_rows, TensorInit init, float std) {
    ParamGroup& g = out_->groups[group];
    TensorSpec t;
    t.name = std::move(name);
    t.shape = std::move(shape);
    t.offset = g.numel;
    t.row_begin = row_begin;
    t.logical_rows = logical_rows;
    t.init = init;
    t.init_std = std;
    g.numel += t.numel();
    g.tensors.push_back(std::move(t));
  }
  int LayerNorm(const std::string& name, int layer, int64_t C) {
    const int g = Group(name, layer, 0, 1);
    Tensor(g, name + ".weight", {C}, 0, C, TensorInit::kOnes, 0.0f);
    Tensor(g, name + ".bias", {C}, 0, C, TensorInit::kZeros, 0.0f);
    return g;
  }
  // Linear y = x W^T + b, W: [out, in], split into `tiles` groups along out.
  std::vector<int> Linear(const std::string& name, int layer, int64_t out, int64_t in,
                          int tiles, float std) {
    std::vector<int> ids;
    const int64_t rows = out / tiles;
    for (int j = 0; j < tiles; ++j) {
      const std::string gname = tiles == 1 ? name : fmt::format("{}.tile{}", name, j);
      const int g = Group(gname, layer, j, tiles);
      Tensor(g, name + ".weight", {rows, in}, j * rows, out, TensorInit::kNormal, std);
      Tensor(g, name + ".bias", {rows}, j * rows, out, TensorInit::kZeros, 0.0f);
      ids.push_back(g);
    }
    return ids;
  }

 private:
  GptParamLayout* out_;
};

// splitmix64: a counter-based generator (value depends only on the input).
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t HashName(uint64_t seed, const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull ^ Mix(seed);
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return Mix(h);
}

// Standard normal for element `index` of the stream `key` (Box-Muller).
double NormalAt(uint64_t key, uint64_t index) {
  const uint64_t r = Mix(key ^ Mix(index));
  const double u1 = (static_cast<double>(r >> 40) + 1.0) / 16777217.0;  // (0, 1]
  const double u2 = static_cast<double>(r & 0xffffffull) / 16777216.0;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

}  // namespace

Result<GptParamLayout> BuildGptParamLayout(const GptConfig& cfg) {
  ZINF_RETURN_IF_ERROR(cfg.Validate());
  GptParamLayout L;
  LayoutBuilder b(&L);
  const int64_t C = cfg.n_embd, V = cfg.vocab, T = cfg.seq_len;
  const int t = cfg.tile;
  const float std = 0.02f;
  const float resid_std = 0.02f / std::sqrt(2.0f * cfg.n_layer);
  L.ids.embed = b.Group("embed", -1, 0, 1);
  b.Tensor(L.ids.embed, "wte", {V, C}, 0, V, TensorInit::kNormal, std);
  b.Tensor(L.ids.embed, "wpe", {T, C}, 0, T, TensorInit::kNormal, std);
  for (int i = 0; i < cfg.n_layer; ++i) {
    const std::string p = fmt::format("h{}", i);
    GptGroupIds::Layer ly;
    ly.ln1 = b.LayerNorm(p + ".ln1", i, C);
    ly.qkv = b.Linear(p + ".attn.qkv", i, 3 * C, C, t, std);
    ly.attn_proj = b.Linear(p + ".attn.proj", i, C, C, t, resid_std);
    ly.ln2 = b.LayerNorm(p + ".ln2", i, C);
    ly.fc = b.Linear(p + ".mlp.fc", i, 4 * C, C, t, std);
    ly.mlp_proj = b.Linear(p + ".mlp.proj", i, C, 4 * C, t, resid_std);
    L.ids.layers.push_back(std::move(ly));
  }
  L.ids.ln_f = b.LayerNorm("ln_f", -1, C);
  for (const ParamGroup& g : L.groups) L.total_numel += g.numel;
  return L;
}

void InitParamGroup(const ParamGroup& group, uint64_t seed, float* host_out) {
  for (const TensorSpec& t : group.tensors) {
    float* dst = host_out + t.offset;
    const size_t n = t.numel();
    switch (t.init) {
      case TensorInit::kZeros:
        for (size_t i = 0; i < n; ++i) dst[i] = 0.0f;
        break;
      case TensorInit::kOnes:
        for (size_t i = 0; i < n; ++i) dst[i] = 1.0f;
        break;
      case TensorInit::kNormal: {
        const uint64_t key = HashName(seed, t.name);
        const uint64_t first = static_cast<uint64_t>(t.row_begin) * t.row_elems();
        // Each element is a pure function of its index: parallel and still deterministic.
#pragma omp parallel for schedule(static) if (n > (1u << 16))
        for (size_t i = 0; i < n; ++i) {
          dst[i] = static_cast<float>(t.init_std * NormalAt(key, first + i));
        }
        break;
      }
    }
  }
}

}  // namespace zinf
