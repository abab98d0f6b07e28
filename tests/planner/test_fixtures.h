// Shapes and machines built in code, so planner tests do not depend on shipped files.
#pragma once

#include "core/hw_profile.h"
#include "core/model_spec.h"

namespace zinf::testing {

// The ZeRO-Infinity paper's GPT configs (K = 1024), seq 1024.
inline ModelSpec PaperModel(int64_t layers, int64_t hidden_k, int64_t heads) {
  ModelSpec m;
  m.name = "paper";
  m.family = "gpt";
  m.n_layer = layers;
  m.hidden = hidden_k * 1024;
  m.n_head = heads;
  m.n_kv_head = heads;
  m.ffn_hidden = 4 * m.hidden;
  m.vocab = 50257;
  m.seq_len = 1024;
  return m;
}

inline ModelSpec Gpt(int64_t layers, int64_t hidden, int64_t heads, int64_t seq = 2048) {
  ModelSpec m = PaperModel(layers, 1, heads);
  m.hidden = hidden;
  m.ffn_hidden = 4 * hidden;
  m.seq_len = seq;
  return m;
}

// A DGX-2-like node: 16 x 32 GB, 1.5 TB host, 28 TB NVMe; per-GPU bandwidth with all active.
inline HwProfile Dgx2() {
  HwProfile hw;
  hw.name = "test-dgx2";
  hw.gpus_per_node = 16;
  hw.cpu_cores = 48;
  hw.host_memory_bytes = 1.5e12;
  hw.nvme_capacity_bytes = 28e12;
  hw.device_name = "V100";
  hw.device_memory_bytes = 32.0 * (1 << 30);
  hw.peak_flops = 125e12;
  hw.achievable_flops = 70e12;
  hw.memory_bw = 900e9;
  hw.h2d_bw = hw.d2h_bw = 3e9;
  hw.h2d_bw_alone = hw.d2h_bw_alone = 12e9;
  hw.nvme_read_bw = 1.6e9;
  hw.nvme_write_bw = 1.0e9;
  hw.nvme_read_bw_node = 25.6e9;
  hw.nvme_write_bw_node = 16e9;
  hw.host_mem_bw = 100e9;
  hw.intra_node_bw = 150e9;
  hw.inter_node_bw = 100e9;
  hw.collective_latency_s = 20e-6;
  hw.cpu_adam_params_per_s = 2e9;
  return hw;
}

}  // namespace zinf::testing
