// ModelSpec: the shipped models/*.yaml, round trips, parameter counts, validation.
#include "core/model_spec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>

#include "tests/core/test_util.h"

namespace zinf {
namespace {

using testing::ScratchDir;
using testing::ShippedYaml;
using testing::SourceDir;
using testing::Stem;

std::string ModelPath(const std::string& name) { return SourceDir() + "/models/" + name + ".yaml"; }

ModelSpec Load(const std::string& name) {
  Result<ModelSpec> m = LoadModelSpec(ModelPath(name));
  EXPECT_TRUE(m.ok()) << name << ": " << m.status().ToString();
  return m.ok() ? *m : ModelSpec{};
}

void ExpectSameSpec(const ModelSpec& a, const ModelSpec& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.family, b.family);
  EXPECT_EQ(a.n_layer, b.n_layer);
  EXPECT_EQ(a.hidden, b.hidden);
  EXPECT_EQ(a.n_head, b.n_head);
  EXPECT_EQ(a.n_kv_head, b.n_kv_head);
  EXPECT_EQ(a.ffn_hidden, b.ffn_hidden);
  EXPECT_EQ(a.vocab, b.vocab);
  EXPECT_EQ(a.seq_len, b.seq_len);
  EXPECT_EQ(a.mlp, b.mlp);
  EXPECT_EQ(a.norm, b.norm);
  EXPECT_EQ(a.position, b.position);
  EXPECT_EQ(a.bias, b.bias);
  EXPECT_EQ(a.tied_embeddings, b.tied_embeddings);
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(ModelSpecToYaml(a), ModelSpecToYaml(b));
}

TEST(ShippedModels, TheCatalogIsComplete) {
  std::set<std::string> names;
  for (const auto& p : ShippedYaml("models")) names.insert(Stem(p));
  for (const char* want :
       {"gpt3-125m", "gpt3-350m", "gpt3-760m", "gpt3-1.3b", "gpt3-2.7b", "gpt3-6.7b", "gpt3-13b", "gpt3-175b",
        "llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b", "llama3-70b", "llama3-405b", "zi-0.1t", "zi-0.5t",
        "zi-1t", "zi-10t", "zi-100t", "tiny", "small", "cpu-medium"}) {
    EXPECT_TRUE(names.count(want)) << "models/" << want << ".yaml is missing";
  }
}

TEST(ShippedModels, EveryFileLoadsValidatesAndCitesItsSource) {
  std::vector<std::string> files = ShippedYaml("models");
  ASSERT_GE(files.size(), 22u);
  for (const auto& path : files) {
    SCOPED_TRACE(path);
    Result<ModelSpec> m = LoadModelSpec(path);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    EXPECT_EQ(m->name, Stem(path));
    EXPECT_FALSE(m->source.empty());
    EXPECT_TRUE(ValidateModelSpec(*m, path).ok());
    EXPECT_EQ(m->hidden % m->n_head, 0);
    EXPECT_EQ(m->n_head % m->n_kv_head, 0);
    if (m->family == "llama") {
      EXPECT_EQ(m->mlp, "swiglu");
      EXPECT_EQ(m->norm, "rmsnorm");
      EXPECT_EQ(m->position, "rope");
      EXPECT_FALSE(m->bias);
      EXPECT_FALSE(m->tied_embeddings);
    } else {
      EXPECT_EQ(m->family, "gpt");
      EXPECT_EQ(m->mlp, "gelu");
      EXPECT_EQ(m->ffn_hidden, 4 * m->hidden);
      EXPECT_TRUE(m->tied_embeddings);
    }
  }
}

TEST(ShippedModels, EveryFileRoundTrips) {
  ScratchDir dir;
  for (const auto& path : ShippedYaml("models")) {
    SCOPED_TRACE(path);
    Result<ModelSpec> a = LoadModelSpec(path);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    std::string out = dir.File(Stem(path) + ".yaml");
    ASSERT_TRUE(SaveModelSpec(*a, out).ok());
    Result<ModelSpec> b = LoadModelSpec(out);
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    ExpectSameSpec(*a, *b);
  }
}

TEST(ShippedModels, Shapes) {
  struct Shape {
    const char* name;
    int64_t layers, hidden, heads, kv, ffn, vocab, seq;
  };
  const Shape shapes[] = {
      {"gpt3-125m", 12, 768, 12, 12, 3072, 50257, 2048},
      {"gpt3-350m", 24, 1024, 16, 16, 4096, 50257, 2048},
      {"gpt3-760m", 24, 1536, 16, 16, 6144, 50257, 2048},
      {"gpt3-1.3b", 24, 2048, 16, 16, 8192, 50257, 2048},
      {"gpt3-2.7b", 32, 2560, 32, 32, 10240, 50257, 2048},
      {"gpt3-6.7b", 32, 4096, 32, 32, 16384, 50257, 2048},
      {"gpt3-13b", 40, 5120, 40, 40, 20480, 50257, 2048},
      {"gpt3-175b", 96, 12288, 96, 96, 49152, 50257, 2048},
      {"llama2-7b", 32, 4096, 32, 32, 11008, 32000, 4096},
      {"llama2-13b", 40, 5120, 40, 40, 13824, 32000, 4096},
      {"llama2-70b", 80, 8192, 64, 8, 28672, 32000, 4096},
      {"llama3-8b", 32, 4096, 32, 8, 14336, 128256, 8192},
      {"llama3-70b", 80, 8192, 64, 8, 28672, 128256, 8192},
      {"llama3-405b", 126, 16384, 128, 8, 53248, 128256, 8192},
      {"zi-0.1t", 80, 10 * 1024, 128, 128, 40 * 1024, 50257, 1024},
      {"zi-0.5t", 100, 20 * 1024, 160, 160, 80 * 1024, 50257, 1024},
      {"zi-1t", 128, 25 * 1024, 256, 256, 100 * 1024, 50257, 1024},
      {"zi-10t", 195, 64 * 1024, 512, 512, 256 * 1024, 50257, 1024},
      {"zi-100t", 315, 160 * 1024, 1024, 1024, 640 * 1024, 50257, 1024},
      {"tiny", 2, 64, 4, 4, 256, 256, 64},
      {"small", 4, 128, 4, 4, 512, 256, 128},
      {"cpu-medium", 8, 512, 8, 8, 2048, 256, 256},
  };
  for (const auto& s : shapes) {
    SCOPED_TRACE(s.name);
    ModelSpec m = Load(s.name);
    EXPECT_EQ(m.n_layer, s.layers);
    EXPECT_EQ(m.hidden, s.hidden);
    EXPECT_EQ(m.n_head, s.heads);
    EXPECT_EQ(m.n_kv_head, s.kv);
    EXPECT_EQ(m.ffn_hidden, s.ffn);
    EXPECT_EQ(m.vocab, s.vocab);
    EXPECT_EQ(m.seq_len, s.seq);
  }
}

void ExpectWithin(double actual, double want, double rel, const std::string& what) {
  EXPECT_NEAR(actual, want, want * rel) << what << ": " << actual << " vs " << want << " ("
                                        << 100.0 * (actual - want) / want << "%)";
}

TEST(ParamCounts, PublishedTotals) {
  ExpectWithin(CountParams(Load("gpt3-175b")).total, 175e9, 0.01, "gpt3-175b");
  ExpectWithin(CountParams(Load("llama2-7b")).total, 6.74e9, 0.01, "llama2-7b");
  ExpectWithin(CountParams(Load("llama2-13b")).total, 13.02e9, 0.01, "llama2-13b");
  ExpectWithin(CountParams(Load("llama2-70b")).total, 68.98e9, 0.01, "llama2-70b");
  ExpectWithin(CountParams(Load("llama3-8b")).total, 8.03e9, 0.005, "llama3-8b");
  ExpectWithin(CountParams(Load("llama3-70b")).total, 70.55e9, 0.01, "llama3-70b");
  ExpectWithin(CountParams(Load("llama3-405b")).total, 405.9e9, 0.01, "llama3-405b");
  // The GPT-3 family against the sizes in their names.
  const std::map<std::string, double> gpt3 = {{"gpt3-125m", 125e6}, {"gpt3-350m", 350e6}, {"gpt3-760m", 760e6},
                                              {"gpt3-1.3b", 1.3e9}, {"gpt3-2.7b", 2.7e9}, {"gpt3-6.7b", 6.7e9},
                                              {"gpt3-13b", 13e9}};
  for (const auto& [name, n] : gpt3) ExpectWithin(CountParams(Load(name)).total, n, 0.03, name);
}

TEST(ParamCounts, ExactLlama2_7b) {
  // 32 x (4 h^2 attention + 3 h f SwiGLU + 2 h norms) + 2 x 32000 h (untied) + h final norm.
  const double h = 4096, f = 11008;
  ParamCounts c = CountParams(Load("llama2-7b"));
  EXPECT_EQ(c.per_layer, 4 * h * h + 3 * h * f + 2 * h);
  EXPECT_EQ(c.blocks, 32 * c.per_layer);
  EXPECT_EQ(c.embeddings, 32000 * h);
  EXPECT_EQ(c.lm_head, 32000 * h);
  EXPECT_EQ(c.final_norm, h);
  EXPECT_EQ(c.total, 6738415616.0);
  EXPECT_EQ(c.largest_op, 32000 * h);  // the embedding table is the largest matrix
}

TEST(ParamCounts, ExactGpt3_175b) {
  // GPT block with biases: 12 h^2 + 13 h; learned positions; tied head.
  const double h = 12288;
  ParamCounts c = CountParams(Load("gpt3-175b"));
  EXPECT_EQ(c.per_layer, 12 * h * h + 13 * h);
  EXPECT_EQ(c.embeddings, (50257.0 + 2048.0) * h);
  EXPECT_EQ(c.lm_head, 0);
  EXPECT_EQ(c.final_norm, 2 * h);
  EXPECT_EQ(c.largest_op, 50257.0 * h);
}

TEST(ParamCounts, GroupedQueryAttentionShrinksKv) {
  // llama2-70b: 8 kv heads of 128 -> k and v are 8192 x 1024 each.
  const double h = 8192, kv = 1024, f = 28672;
  ParamCounts c = CountParams(Load("llama2-70b"));
  EXPECT_EQ(c.per_layer, 2 * h * h + 2 * h * kv + 3 * h * f + 2 * h);
}

TEST(ParamCounts, PaperBlocksFormula) {
  EXPECT_EQ(CountParams(Load("zi-1t")).paper_blocks, 12.0 * 128 * 25600.0 * 25600.0);
  EXPECT_EQ(CountParams(Load("zi-1t")).paper_blocks, 1006632960000.0);
  // The paper's configs are named by the 12 nl hd^2 block count.
  ExpectWithin(CountParams(Load("zi-0.1t")).paper_blocks, 0.1e12, 0.01, "zi-0.1t");
  ExpectWithin(CountParams(Load("zi-0.5t")).paper_blocks, 0.5e12, 0.01, "zi-0.5t");
  ExpectWithin(CountParams(Load("zi-1t")).paper_blocks, 1e12, 0.01, "zi-1t");
  ExpectWithin(CountParams(Load("zi-10t")).paper_blocks, 10e12, 0.01, "zi-10t");
  ExpectWithin(CountParams(Load("zi-100t")).paper_blocks, 100e12, 0.02, "zi-100t");
}

TEST(ParamCounts, TinyModels) {
  // tiny: 2 x (12 h^2 + 13 h) + (256 + 64) h + 2 h, h = 64.
  ParamCounts c = CountParams(Load("tiny"));
  const double h = 64;
  EXPECT_EQ(c.total, 2 * (12 * h * h + 13 * h) + (256 + 64) * h + 2 * h);
  EXPECT_LT(CountParams(Load("small")).total, 1e6);
  ExpectWithin(CountParams(Load("cpu-medium")).total, 25.4e6, 0.05, "cpu-medium");
}

TEST(ModelSpec, SeqLenOverride) {
  Result<ModelSpec> m = LoadModelSpec(ModelPath("gpt3-1.3b"), 512);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->seq_len, 512);
  EXPECT_EQ(m->head_dim(), 128);
}

TEST(ModelSpec, DefaultsForFamilies) {
  ScratchDir dir;
  std::string p = dir.Write("m.yaml", "name: mini-llama\nfamily: llama\nn_layer: 2\nhidden: 256\nn_head: 8\n"
                                      "ffn_hidden: 688\nvocab: 1000\nseq_len: 128\n");
  Result<ModelSpec> m = LoadModelSpec(p);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->mlp, "swiglu");
  EXPECT_EQ(m->norm, "rmsnorm");
  EXPECT_EQ(m->position, "rope");
  EXPECT_FALSE(m->bias);
  EXPECT_FALSE(m->tied_embeddings);
  EXPECT_EQ(m->n_kv_head, 8);
  EXPECT_EQ(m->source, "");

  p = dir.Write("g.yaml", "format: zinf.model/v1\nname: mini\nn_layer: 2\nhidden: 64\nn_head: 4\nvocab: 256\nseq_len: 32\n");
  m = LoadModelSpec(p);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->family, "gpt");
  EXPECT_EQ(m->ffn_hidden, 256);
  EXPECT_EQ(m->mlp, "gelu");
  EXPECT_EQ(m->norm, "layernorm");
  EXPECT_EQ(m->position, "learned");
  EXPECT_TRUE(m->bias);
  EXPECT_TRUE(m->tied_embeddings);
}

TEST(ModelSpec, SpecialStringsRoundTrip) {
  ModelSpec m = Load("tiny");
  m.name = "NULL";
  m.source = "a \"quoted\" source: with colon, #hash\nand a newline";
  ScratchDir dir;
  ASSERT_TRUE(SaveModelSpec(m, dir.File("m.yaml")).ok());
  Result<ModelSpec> b = LoadModelSpec(dir.File("m.yaml"));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ExpectSameSpec(m, *b);
}

struct BadCase {
  std::string from, to, expect;
};

TEST(ModelSpec, BadFilesNameFileAndKey) {
  ScratchDir dir;
  const std::string good = testing::ReadText(ModelPath("small"));
  const BadCase cases[] = {
      {"hidden: 128", "hidden: 130", "key 'hidden': 130 is not divisible by n_head 4"},
      {"n_kv_head: 4", "n_kv_head: 3", "key 'n_kv_head'"},
      {"n_layer: 4", "n_layer: 0", "key 'n_layer'"},
      {"n_layer: 4", "n_layer: four", "key 'n_layer'"},
      {"mlp: gelu", "mlp: swiglu", "key 'mlp': family gpt uses mlp: gelu"},
      {"mlp: gelu", "mlp: relu", "'relu' is not allowed; allowed: gelu, swiglu"},
      {"family: gpt", "family: bert", "allowed: gpt, llama"},
      {"format: zinf.model/v1", "format: zinf.model/v2", "key 'format': 'zinf.model/v2' is not allowed"},
      {"vocab: 256", "vocab: 256\nvocab_size: 256", "unknown key 'vocab_size'"},
      {"seq_len: 128\n", "", "key 'seq_len': missing (required)"},
      {"bias: true", "bias: sometimes", "key 'bias': must be true or false"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.to);
    std::string p = dir.Write("bad.yaml", testing::ReplaceOnce(good, c.from, c.to));
    Result<ModelSpec> m = LoadModelSpec(p);
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.status().code(), Code::kInvalidArgument);
    EXPECT_NE(m.status().message().find(p), std::string::npos) << m.status().message();
    EXPECT_NE(m.status().message().find(c.expect), std::string::npos) << m.status().message();
  }
}

TEST(ModelSpec, ValidateGuardsZeroHeads) {
  ModelSpec m;  // all zeros: must be an error, not a division by zero
  EXPECT_FALSE(ValidateModelSpec(m, "x").ok());
  m = Load("tiny");
  m.n_head = 0;
  Status s = ValidateModelSpec(m, "x.yaml");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("x.yaml: key 'n_head'"), std::string::npos) << s.message();
}

TEST(ModelSpec, MissingFile) {
  Result<ModelSpec> m = LoadModelSpec(SourceDir() + "/models/no-such-model.yaml");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace zinf
