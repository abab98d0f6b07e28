#include "core/model_spec.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/field_reader.h"
#include "core/file_util.h"
#include "core/yaml_emit.h"

namespace zinf {

ParamCounts CountParams(const ModelSpec& m) {
  ParamCounts c;
  const double h = static_cast<double>(m.hidden);
  const double kv = static_cast<double>(m.n_kv_head * m.head_dim());
  const double f = static_cast<double>(m.ffn_hidden);
  const double b = m.bias ? 1.0 : 0.0;
  const double q_o = 2 * h * h + b * 2 * h;            // q and output projections
  const double k_v = 2 * h * kv + b * 2 * kv;          // k and v projections
  const double mlp = (m.mlp == "swiglu") ? 3 * h * f + b * (2 * f + h) : 2 * h * f + b * (f + h);
  const double norm_per = (m.norm == "layernorm") ? 2 * h : h;  // gain (+ bias)
  c.per_layer = q_o + k_v + mlp + 2 * norm_per;
  c.blocks = c.per_layer * static_cast<double>(m.n_layer);
  c.embeddings = static_cast<double>(m.vocab) * h + (m.position == "learned" ? static_cast<double>(m.seq_len) * h : 0);
  c.lm_head = m.tied_embeddings ? 0 : static_cast<double>(m.vocab) * h;
  c.final_norm = norm_per;
  c.total = c.blocks + c.embeddings + c.lm_head + c.final_norm;
  c.largest_op = std::max({h * f, h * (h + 2 * kv), static_cast<double>(m.vocab) * h});
  c.paper_blocks = 12.0 * static_cast<double>(m.n_layer) * h * h;
  return c;
}

Status ValidateModelSpec(const ModelSpec& m, const std::string& file, const std::string& key_prefix) {
  auto bad = [&](const std::string& key, const std::string& what) {
    return InvalidArgument(fmt::format("{}: key '{}{}': {}", file, key_prefix, key, what));
  };
  if (m.n_layer <= 0) return bad("n_layer", "must be > 0");
  if (m.hidden <= 0) return bad("hidden", "must be > 0");
  if (m.n_head <= 0) return bad("n_head", "must be > 0");
  if (m.hidden % m.n_head != 0)
    return bad("hidden", fmt::format("{} is not divisible by n_head {}; must be a multiple of n_head", m.hidden,
                                     m.n_head));
  if (m.n_kv_head <= 0 || m.n_head % m.n_kv_head != 0)
    return bad("n_kv_head", fmt::format("{} must divide n_head {} (allowed: a divisor of n_head)", m.n_kv_head, m.n_head));
  if (m.ffn_hidden <= 0) return bad("ffn_hidden", "must be > 0");
  if (m.vocab <= 0) return bad("vocab", "must be > 0");
  if (m.seq_len <= 0 || m.seq_len > (int64_t{1} << 22))
    return bad("seq_len", fmt::format("{} is out of range; allowed: 1 .. {}", m.seq_len, int64_t{1} << 22));
  if (m.family == "gpt" && m.mlp != "gelu")
    return bad("mlp", "family gpt uses mlp: gelu");
  return Status::Ok();
}

namespace {

constexpr int64_t kMaxDim = int64_t{1} << 24;

}  // namespace

Result<ModelSpec> ReadModelSpec(FieldReader& r) {
  ModelSpec m;
  r.Enum("format", {"zinf.model/v1"}, std::string("zinf.model/v1"));
  m.name = r.String("name");
  m.family = r.Enum("family", {"gpt", "llama"}, std::string("gpt"));
  const bool llama = m.family == "llama";
  m.n_layer = r.Int("n_layer", 1, 100000);
  m.hidden = r.Int("hidden", 1, kMaxDim);
  m.n_head = r.Int("n_head", 1, 1 << 16);
  m.n_kv_head = r.Int("n_kv_head", 1, 1 << 16, m.n_head);
  m.ffn_hidden = r.Int("ffn_hidden", 1, kMaxDim * 8, 4 * m.hidden);
  m.vocab = r.Int("vocab", 1, 1 << 24);
  m.seq_len = r.Int("seq_len", 1, 1 << 22);
  m.mlp = r.Enum("mlp", {"gelu", "swiglu"}, std::string(llama ? "swiglu" : "gelu"));
  m.norm = r.Enum("norm", {"layernorm", "rmsnorm"}, std::string(llama ? "rmsnorm" : "layernorm"));
  m.position = r.Enum("position", {"learned", "rope"}, std::string(llama ? "rope" : "learned"));
  m.bias = r.Bool("bias", !llama);
  m.tied_embeddings = r.Bool("tied_embeddings", !llama);
  m.source = r.String("source", std::string(""));
  ZINF_RETURN_IF_ERROR(r.Finish());
  return m;
}

namespace {

// Hugging Face config.json: GPT-2 (n_layer, n_embd, ...) or LLaMA/Mistral (num_hidden_layers, ...).
Result<ModelSpec> ReadHfConfig(FieldReader& r, const std::string& path) {
  ModelSpec m;
  std::string type = r.String("model_type", std::string(""));
  if (r.failed()) return r.Finish();
  m.source = "Hugging Face config " + path;
  // A model_type that is given decides; only a config without one is recognised by its keys
  // (a "bert" config with num_hidden_layers is not a LLaMA).
  const bool known_type = type == "gpt2" || type == "llama" || type == "mistral";
  if (!type.empty() && !known_type) {
    return InvalidArgument(fmt::format(
        "{}: key 'model_type': '{}' is not supported; allowed: gpt2, llama, mistral (or a zinf model YAML)",
        path, type.size() > 80 ? type.substr(0, 80) + "..." : type));
  }
  // Cross-field checks with the file's own key names.
  auto check_heads = [&](const char* hidden_key, const char* heads_key, const char* kv_key) {
    if (r.failed()) return;
    if (m.hidden % m.n_head != 0)
      r.Fail(hidden_key, fmt::format("{} is not divisible by n_head {} ('{}'); must be a multiple of it", m.hidden,
                                     m.n_head, heads_key));
    else if (kv_key != nullptr && m.n_head % m.n_kv_head != 0)
      r.Fail(kv_key, fmt::format("{} must divide {} {} (allowed: a divisor of it)", m.n_kv_head, heads_key, m.n_head));
  };
  if (type == "gpt2" || (type.empty() && r.Has("n_embd"))) {
    m.family = "gpt";
    m.name = r.String("_name_or_path", std::string("gpt2"));
    m.n_layer = r.Int("n_layer", 1, 100000);
    m.hidden = r.Int("n_embd", 1, kMaxDim);
    m.n_head = r.Int("n_head", 1, 1 << 16);
    m.n_kv_head = m.n_head;
    m.ffn_hidden = r.Has("n_inner") ? r.Int("n_inner", 1, kMaxDim * 8) : 4 * m.hidden;
    m.vocab = r.Int("vocab_size", 1, 1 << 24);
    m.seq_len = r.Int("n_positions", 1, 1 << 22, r.Has("n_ctx") ? r.Int("n_ctx", 1, 1 << 22) : 1024);
    m.mlp = "gelu";
    m.norm = "layernorm";
    m.position = "learned";
    m.bias = true;
    m.tied_embeddings = r.Bool("tie_word_embeddings", true);
    check_heads("n_embd", "n_head", nullptr);
  } else if (type == "llama" || type == "mistral" || (type.empty() && r.Has("num_hidden_layers"))) {
    m.family = "llama";
    m.name = r.String("_name_or_path", type.empty() ? std::string("llama") : type);
    m.n_layer = r.Int("num_hidden_layers", 1, 100000);
    m.hidden = r.Int("hidden_size", 1, kMaxDim);
    m.n_head = r.Int("num_attention_heads", 1, 1 << 16);
    m.n_kv_head = r.Int("num_key_value_heads", 1, 1 << 16, m.n_head);
    m.ffn_hidden = r.Int("intermediate_size", 1, kMaxDim * 8);
    m.vocab = r.Int("vocab_size", 1, 1 << 24);
    // Training length: the context length, capped at 4096 (use --seq-len to change).
    m.seq_len = std::min<int64_t>(r.Int("max_position_embeddings", 1, 1 << 24, 4096), 4096);
    std::string act = r.String("hidden_act", std::string("silu"));
    if (act != "silu" && act != "swiglu") r.Fail("hidden_act", fmt::format("'{}' unsupported; allowed: silu", act));
    m.mlp = "swiglu";
    m.norm = "rmsnorm";
    m.position = "rope";
    m.bias = r.Bool("attention_bias", false) || r.Bool("mlp_bias", false);
    m.tied_embeddings = r.Bool("tie_word_embeddings", false);
    check_heads("hidden_size", "num_attention_heads", "num_key_value_heads");
  } else {
    return InvalidArgument(fmt::format(
        "{}: key 'model_type': '{}' is not supported; allowed: gpt2, llama, mistral (or a zinf model YAML)",
        path, type));
  }
  ZINF_RETURN_IF_ERROR(r.Finish());
  return m;
}

}  // namespace

Result<ModelSpec> LoadModelSpec(const std::string& path, int64_t seq_len_override) {
  ZINF_ASSIGN_OR_RETURN(YAML::Node node, LoadYamlFile(path));
  const bool hf = node["model_type"].IsDefined() || node["architectures"].IsDefined();
  FieldReader r(node, path, "", /*lenient=*/hf);
  Result<ModelSpec> m = hf ? ReadHfConfig(r, path) : ReadModelSpec(r);
  if (!m.ok()) return m.status();
  if (seq_len_override < 0 || seq_len_override > (int64_t{1} << 22))
    return InvalidArgument(fmt::format("{}: sequence length override {} is out of range; allowed: 1 .. {}", path,
                                       seq_len_override, int64_t{1} << 22));
  if (seq_len_override > 0) m->seq_len = seq_len_override;
  ZINF_RETURN_IF_ERROR(ValidateModelSpec(*m, path));
  return m;
}

void WriteModelSpec(YamlOut& y, const ModelSpec& m) {
  y.Key("format", "zinf.model/v1");
  y.Key("name", m.name);
  y.Key("family", m.family);
  y.Key("n_layer", m.n_layer);
  y.Key("hidden", m.hidden);
  y.Key("n_head", m.n_head);
  y.Key("n_kv_head", m.n_kv_head);
  y.Key("ffn_hidden", m.ffn_hidden);
  y.Key("vocab", m.vocab);
  y.Key("seq_len", m.seq_len);
  y.Key("mlp", m.mlp);
  y.Key("norm", m.norm);
  y.Key("position", m.position);
  y.Key("bias", m.bias);
  y.Key("tied_embeddings", m.tied_embeddings);
  if (!m.source.empty()) y.Key("source", m.source);
}

std::string ModelSpecToYaml(const ModelSpec& m) {
  YamlOut y;
  WriteModelSpec(y, m);
  return y.str();
}

Status SaveModelSpec(const ModelSpec& m, const std::string& path) {
  return WriteFileAtomic(path, ModelSpecToYaml(m));
}

}  // namespace zinf
