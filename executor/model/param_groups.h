// Parameter groups: the ZeRO-3 "modules" of the GPT. Each group's tensors are
// laid out back to back in one flat fp32 buffer (weight then bias); the
// coordinator shards / fetches whole groups. With tiling t > 1 each big linear
// (attn.qkv, attn.proj, mlp.fc, mlp.proj) becomes t groups "<name>.tile<j>",
// each holding a contiguous block of output rows of the weight and bias.
//
// Group order (== group id): embed, then per layer i: h{i}.ln1, h{i}.attn.qkv*,
// h{i}.attn.proj*, h{i}.ln2, h{i}.mlp.fc*, h{i}.mlp.proj*, then ln_f.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "executor/model/gpt_config.h"

namespace zinf {

enum class TensorInit { kNormal, kZeros, kOnes };

struct TensorSpec {
  std::string name;            // logical tensor: "wte", "h0.mlp.fc.weight", ...
  std::vector<int64_t> shape;  // this group's slice, e.g. {4C/t, C}
  size_t offset = 0;           // elements from the start of the group's flat buffer
  int64_t row_begin = 0;       // first row of the logical tensor held here
  int64_t logical_rows = 0;    // rows of the whole logical tensor
  TensorInit init = TensorInit::kZeros;
  float init_std = 0.0f;       // for kNormal
  size_t numel() const;
  size_t row_elems() const;    // elements per row (product of shape[1:])
};

struct ParamGroup {
  std::string name;  // "embed", "h3.mlp.fc.tile1", "ln_f"
  std::vector<TensorSpec> tensors;
  size_t numel = 0;
  int layer = -1;    // -1 for embed / ln_f
  int tile = 0;      // tile index within its linear
  int tiles = 1;
};

// Group ids the model uses.
struct GptGroupIds {
  struct Layer {
    int ln1 = -1, ln2 = -1;
    std::vector<int> qkv, attn_proj, fc, mlp_proj;  // one id per tile
  };
  int embed = -1;
  int ln_f = -1;
  std::vector<Layer> layers;
};

struct GptParamLayout {
  std::vector<ParamGroup> groups;
  GptGroupIds ids;
  size_t total_numel = 0;  // sum of group numels
};

Result<GptParamLayout> BuildGptParamLayout(const GptConfig& cfg);

// Deterministic init of one group into host memory (group.numel floats). Each
// element's value depends only on (seed, logical tensor name, element index in
// the logical tensor), so it is the same for any tiling, sharding or rank count.
// GPT-2 style: N(0, 0.02) weights and embeddings, residual projections
// (attn.proj, mlp.proj) N(0, 0.02 / sqrt(2 * n_layer)), biases 0, LN gamma 1.
void InitParamGroup(const ParamGroup& group, uint64_t seed, float* host_out);

}  // namespace zinf
