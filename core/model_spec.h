// ModelSpec: a decoder-only transformer's shape (GPT or LLaMA family), read from
// zinf YAML (format zinf.model/v1) or a Hugging Face config.json (GPT-2, LLaMA, Mistral).
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace zinf {

struct ModelSpec {
  std::string name;
  std::string family = "gpt";        // gpt | llama
  int64_t n_layer = 0;
  int64_t hidden = 0;                // hd
  int64_t n_head = 0;
  int64_t n_kv_head = 0;             // == n_head unless GQA
  int64_t ffn_hidden = 0;            // 4*hd for GPT
  int64_t vocab = 0;
  int64_t seq_len = 0;               // training sequence length
  std::string mlp = "gelu";          // gelu | swiglu
  std::string norm = "layernorm";    // layernorm | rmsnorm
  std::string position = "learned";  // learned | rope
  bool bias = true;                  // linear and norm biases (GPT) or none (LLaMA)
  bool tied_embeddings = true;
  std::string source;                // provenance: paper, HF config path, ...

  int64_t head_dim() const { return hidden / n_head; }
};

// Parameter counts (elements), per component.
struct ParamCounts {
  double per_layer = 0;       // one transformer block
  double blocks = 0;          // n_layer * per_layer
  double embeddings = 0;      // token (+ learned position) embeddings
  double lm_head = 0;         // 0 when tied
  double final_norm = 0;
  double total = 0;
  double largest_op = 0;      // the largest single linear (params), for working memory
  double paper_blocks = 0;    // 12 * n_layer * hd^2: the paper's block-stack formula
};

ParamCounts CountParams(const ModelSpec& m);

// Checks cross-field constraints; `file` and `key_prefix` ("model." inside a plan) are used in
// messages.
Status ValidateModelSpec(const ModelSpec& m, const std::string& file, const std::string& key_prefix = "");

// Reads a zinf model YAML or (by content: has "model_type" or "architectures") an HF config.
// seq_len_override > 0 replaces the file's training sequence length.
Result<ModelSpec> LoadModelSpec(const std::string& path, int64_t seq_len_override = 0);
std::string ModelSpecToYaml(const ModelSpec& m);
// Building blocks for files that embed a model (plan.yaml).
class FieldReader;
class YamlOut;
Result<ModelSpec> ReadModelSpec(FieldReader& r);  // zinf.model/v1 keys; calls r.Finish()
void WriteModelSpec(YamlOut& y, const ModelSpec& m);
Status SaveModelSpec(const ModelSpec& m, const std::string& path);

}  // namespace zinf
