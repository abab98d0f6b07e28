// Helpers for model tests: the tiny GPT, deterministic token batches, a
// provider that records the call sequence, logical-tensor gathering.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "executor/backend/cpu/cpu_backend.h"
#include "executor/model/gpt.h"

namespace zinf::testing {

inline GptConfig TinyConfig(int n_layer = 2, int tile = 1) {
  GptConfig c;
  c.vocab = 32;
  c.seq_len = 8;
  c.n_layer = n_layer;
  c.n_embd = 16;
  c.n_head = 2;
  c.tile = tile;
  return c;
}

inline std::unique_ptr<Backend> ModelBackend(size_t capacity = size_t{64} << 20) {
  auto r = MakeCpuBackend(capacity, 2);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return std::move(r).value();
}

struct Batch {
  std::vector<int32_t> tokens, targets;
};

// A pseudo-random batch; targets are the next token of the sequence.
inline Batch RandomBatch(const GptConfig& c, int batch, uint32_t seed) {
  Batch b;
  uint32_t s = seed * 2654435761u + 12345u;
  std::vector<int32_t> seq(static_cast<size_t>(batch) * (c.seq_len + 1));
  for (auto& t : seq) {
    s = s * 1664525u + 1013904223u;
    t = static_cast<int32_t>((s >> 8) % c.vocab);
  }
  for (int i = 0; i < batch; ++i)
    for (int t = 0; t < c.seq_len; ++t) {
      b.tokens.push_back(seq[i * (c.seq_len + 1) + t]);
      b.targets.push_back(seq[i * (c.seq_len + 1) + t + 1]);
    }
  return b;
}

inline std::unique_ptr<ResidentParamProvider> MakeProvider(Backend* be, const Gpt& model,
                                                           uint64_t seed = 1234) {
  auto r = ResidentParamProvider::Create(be, model.groups());
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  auto p = std::move(r).value();
  EXPECT_TRUE(p->Init(seed).ok());
  return p;
}

// Logical tensors (name -> full row-major data) from a flat provider buffer.
inline std::map<std::string, std::vector<float>> Logical(const ResidentParamProvider& p,
                                                         const std::vector<float>& flat) {
  std::map<std::string, std::vector<float>> out;
  for (size_t g = 0; g < p.groups().size(); ++g) {
    for (const TensorSpec& t : p.groups()[g].tensors) {
      auto& v = out[t.name];
      v.resize(static_cast<size_t>(t.logical_rows) * t.row_elems());
      const float* src = flat.data() + p.offset(static_cast<int>(g)) + t.offset;
      std::copy(src, src + t.numel(), v.begin() + t.row_begin * t.row_elems());
    }
  }
  return out;
}

// Wraps a provider and records every call as "kind:group" (+ "op:i").
class RecordingProvider final : public ParamProvider {
 public:
  explicit RecordingProvider(ParamProvider* inner) : inner_(inner) {}
  void OnOpBegin(int op) override { ops.push_back(op); }
  Result<const float*> Acquire(int g) override {
    acquires.push_back(g);
    Log("A", g);
    return inner_->Acquire(g);
  }
  Status Release(int g) override {
    Log("R", g);
    return inner_->Release(g);
  }
  Result<float*> AcquireGrad(int g) override {
    grad_acquires.push_back(g);
    Log("AG", g);
    return inner_->AcquireGrad(g);
  }
  Status ReleaseGrad(int g) override {
    Log("RG", g);
    return inner_->ReleaseGrad(g);
  }
  std::vector<int> ops, acquires, grad_acquires;
  std::vector<std::string> log;

 private:
  void Log(const char* kind, int g) {
    std::string s(kind);
    s += std::to_string(g);
    log.push_back(std::move(s));
  }
  ParamProvider* inner_;
};

}  // namespace zinf::testing
