// Hugging Face config.json -> ModelSpec (GPT-2, LLaMA, Mistral).
#include <gtest/gtest.h>

#include <string>

#include "core/model_spec.h"
#include "tests/core/test_util.h"

namespace zinf {
namespace {

using testing::DataFile;
using testing::ScratchDir;

ModelSpec LoadOk(const std::string& path, int64_t seq = 0) {
  Result<ModelSpec> m = LoadModelSpec(path, seq);
  EXPECT_TRUE(m.ok()) << path << ": " << m.status().ToString();
  return m.ok() ? *m : ModelSpec{};
}

TEST(HfConfig, Gpt2) {
  std::string p = DataFile("gpt2-medium-config.json");
  ModelSpec m = LoadOk(p);
  EXPECT_EQ(m.family, "gpt");
  EXPECT_EQ(m.name, "gpt2");  // no _name_or_path in the file
  EXPECT_EQ(m.n_layer, 24);
  EXPECT_EQ(m.hidden, 1024);
  EXPECT_EQ(m.n_head, 16);
  EXPECT_EQ(m.n_kv_head, 16);
  EXPECT_EQ(m.ffn_hidden, 4096);  // n_inner: null -> 4 * n_embd
  EXPECT_EQ(m.vocab, 50257);
  EXPECT_EQ(m.seq_len, 1024);
  EXPECT_EQ(m.mlp, "gelu");
  EXPECT_EQ(m.norm, "layernorm");
  EXPECT_EQ(m.position, "learned");
  EXPECT_TRUE(m.bias);
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_NE(m.source.find(p), std::string::npos);
  // GPT-2 medium is the 355M model.
  EXPECT_NEAR(CountParams(m).total, 354.8e6, 1e6);
}

TEST(HfConfig, Llama2) {
  ModelSpec m = LoadOk(DataFile("llama2-7b-config.json"));
  EXPECT_EQ(m.family, "llama");
  EXPECT_EQ(m.name, "llama");
  EXPECT_EQ(m.n_layer, 32);
  EXPECT_EQ(m.hidden, 4096);
  EXPECT_EQ(m.n_head, 32);
  EXPECT_EQ(m.n_kv_head, 32);
  EXPECT_EQ(m.ffn_hidden, 11008);
  EXPECT_EQ(m.vocab, 32000);
  EXPECT_EQ(m.seq_len, 4096);
  EXPECT_EQ(m.mlp, "swiglu");
  EXPECT_EQ(m.norm, "rmsnorm");
  EXPECT_EQ(m.position, "rope");
  EXPECT_FALSE(m.bias);
  EXPECT_FALSE(m.tied_embeddings);
  // Same parameter count as the shipped models/llama2-7b.yaml.
  Result<ModelSpec> shipped = LoadModelSpec(testing::SourceDir() + "/models/llama2-7b.yaml");
  ASSERT_TRUE(shipped.ok());
  EXPECT_EQ(CountParams(m).total, CountParams(*shipped).total);
}

TEST(HfConfig, MistralHasGqaAndCappedSeqLen) {
  ModelSpec m = LoadOk(DataFile("mistral-7b-config.json"));
  EXPECT_EQ(m.family, "llama");
  EXPECT_EQ(m.name, "mistral");
  EXPECT_EQ(m.n_layer, 32);
  EXPECT_EQ(m.hidden, 4096);
  EXPECT_EQ(m.n_head, 32);
  EXPECT_EQ(m.n_kv_head, 8);
  EXPECT_EQ(m.ffn_hidden, 14336);
  EXPECT_EQ(m.vocab, 32000);
  EXPECT_EQ(m.seq_len, 4096);  // max_position_embeddings 32768, capped at 4096 for training
  EXPECT_NEAR(CountParams(m).total, 7.24e9, 0.01 * 7.24e9);
  // --seq-len overrides the cap.
  EXPECT_EQ(LoadOk(DataFile("mistral-7b-config.json"), 16384).seq_len, 16384);
}

TEST(HfConfig, OptionalKeys) {
  ScratchDir dir;
  // No model_type: detected by key names; _name_or_path gives the name; tied embeddings and biases.
  std::string p = dir.Write("c.json", R"({"architectures": ["LlamaForCausalLM"], "_name_or_path": "org/tiny-llama",
    "num_hidden_layers": 2, "hidden_size": 256, "num_attention_heads": 8, "intermediate_size": 688,
    "vocab_size": 1000, "tie_word_embeddings": true, "attention_bias": true, "max_position_embeddings": 512})");
  ModelSpec m = LoadOk(p);
  EXPECT_EQ(m.name, "org/tiny-llama");
  EXPECT_EQ(m.n_kv_head, 8);  // num_key_value_heads absent -> num_attention_heads
  EXPECT_EQ(m.seq_len, 512);
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_TRUE(m.bias);
  // GPT-2 with n_inner set and no n_positions: n_ctx is the context.
  p = dir.Write("g.json", R"({"model_type": "gpt2", "n_layer": 2, "n_embd": 64, "n_head": 4, "n_inner": 100,
    "vocab_size": 256, "n_ctx": 128})");
  m = LoadOk(p);
  EXPECT_EQ(m.ffn_hidden, 100);
  EXPECT_EQ(m.seq_len, 128);
  // No max_position_embeddings: 4096.
  p = dir.Write("n.json", R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 256,
    "num_attention_heads": 8, "intermediate_size": 688, "vocab_size": 1000})");
  EXPECT_EQ(LoadOk(p).seq_len, 4096);
}

void ExpectBad(const std::string& path, const std::string& expect) {
  Result<ModelSpec> m = LoadModelSpec(path);
  ASSERT_FALSE(m.ok()) << path;
  EXPECT_EQ(m.status().code(), Code::kInvalidArgument);
  EXPECT_NE(m.status().message().find(path), std::string::npos) << m.status().message();
  EXPECT_NE(m.status().message().find(expect), std::string::npos) << m.status().message();
}

TEST(HfConfig, Rejected) {
  ScratchDir dir;
  ExpectBad(dir.Write("t5.json", R"({"model_type": "t5", "d_model": 512, "num_layers": 6})"),
            "key 'model_type': 't5' is not supported; allowed: gpt2, llama, mistral");
  ExpectBad(dir.Write("act.json", R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 256,
    "num_attention_heads": 8, "intermediate_size": 688, "vocab_size": 1000, "hidden_act": "gelu"})"),
            "key 'hidden_act': 'gelu' unsupported; allowed: silu");
  ExpectBad(dir.Write("miss.json", R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 256,
    "num_attention_heads": 8, "vocab_size": 1000})"),
            "key 'intermediate_size': missing (required)");
  ExpectBad(dir.Write("heads.json", R"({"model_type": "gpt2", "n_layer": 2, "n_embd": 100, "n_head": 3,
    "vocab_size": 256})"),
            "is not divisible by n_head 3");
  ExpectBad(dir.Write("gqa.json", R"({"model_type": "mistral", "num_hidden_layers": 2, "hidden_size": 256,
    "num_attention_heads": 8, "num_key_value_heads": 3, "intermediate_size": 688, "vocab_size": 1000})"),
            "key 'num_key_value_heads'");
  ExpectBad(dir.Write("neg.json", R"({"model_type": "gpt2", "n_layer": -2, "n_embd": 64, "n_head": 4,
    "vocab_size": 256})"),
            "key 'n_layer'");
}

}  // namespace
}  // namespace zinf
