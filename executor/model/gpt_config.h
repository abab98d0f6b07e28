// GPT-style decoder configuration.
#pragma once

#include <cstdint>

#include "core/status.h"

namespace zinf {

struct GptConfig {
  int vocab = 0;
  int seq_len = 0;   // T: the context length (wpe rows) and the sequence length used
  int n_layer = 0;
  int n_embd = 0;    // C
  int n_head = 0;    // H, divides C
  int tile = 1;      // memory-centric tiling factor of the big linears; divides C
  float ln_eps = 1e-5f;

  Status Validate() const;
  int64_t NumParams() const;  // logical parameter count (tied LM head counted once)
};

}  // namespace zinf
