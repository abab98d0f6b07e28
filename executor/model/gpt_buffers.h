// Internal to gpt.cc / gpt_block.cc: the carved activation and workspace
// buffers (all device pointers into two arena blocks). N = batch * seq_len.
#pragma once

#include <cstdint>
#include <vector>

#include "executor/model/gpt.h"

namespace zinf {

struct Gpt::LayerActs {
  float* ln1;    // [N, C]
  float* mean1;  // [N]
  float* rstd1;  // [N]
  float* qkv;    // [N, 3C]
  float* probs;  // [B, H, T, T]
  float* att;    // [N, C]   attention output before proj
  float* x2;     // [N, C]   x + attn
  float* ln2;    // [N, C]
  float* mean2;  // [N]
  float* rstd2;  // [N]
  float* fc;     // [N, 4C]  pre-GELU
  float* gl;     // [N, 4C]  GELU output
  float* out;    // [N, C]   block output
};

struct Gpt::Buffers {
  // activations
  float* seg_in = nullptr;  // [N, C] input of the current segment
  std::vector<LayerActs> slots;  // one per layer of a segment
  float* lnf = nullptr;     // [N, C]
  float* meanf = nullptr;   // [N]
  float* rstdf = nullptr;   // [N]
  float* logits = nullptr;  // [N, V] (dlogits in place during backward)
  // workspace
  int32_t* tokens = nullptr;   // [N]
  int32_t* targets = nullptr;  // [N]
  float* row_loss = nullptr;   // [N]
  float* loss = nullptr;       // [1]
  float* dres = nullptr;       // [N, C] gradient of the residual stream
  float* dln = nullptr;        // [N, C] gradient of a LayerNorm output
  float* datt = nullptr;       // [N, C]
  float* dqkv = nullptr;       // [N, 3C]
  float* dfc = nullptr;        // [N, 4C]
  float* attn_ws = nullptr;    // AttentionWorkspaceBytes
};

}  // namespace zinf
