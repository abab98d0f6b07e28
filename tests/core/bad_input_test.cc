// Bad input, systematically, for every file reader (zinf model YAML, Hugging Face config.json,
// hardware profile, plan): wrong types, missing and unknown keys, negative / zero / absurd
// values, NaN and inf, huge strings, wrong versions, duplicate keys, truncated, empty and
// binary files, deep nesting. Every case must give a clean Status (no crash, no exception)
// whose message names the file, the key path and what is allowed.
#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/field_reader.h"
#include "core/hw_profile.h"
#include "core/model_spec.h"
#include "core/plan.h"
#include "tests/core/test_util.h"

namespace zinf {
namespace {

using testing::ReadText;
using testing::ScratchDir;
using testing::SourceDir;

enum class Reader { kModel, kHf, kHw, kPlan };

const char* ReaderName(Reader r) {
  switch (r) {
    case Reader::kModel: return "model";
    case Reader::kHf: return "hf";
    case Reader::kHw: return "hw";
    case Reader::kPlan: return "plan";
  }
  return "?";
}

Status LoadWith(Reader r, const std::string& path) {
  switch (r) {
    case Reader::kModel:
    case Reader::kHf: return LoadModelSpec(path).status();
    case Reader::kHw: return LoadHwProfile(path).status();
    case Reader::kPlan: return LoadPlan(path).status();
  }
  return Internal("unknown reader");
}

// ---- The good files the cases break. ----

std::string ModelBase() { return ReadText(SourceDir() + "/models/tiny.yaml"); }

std::string Gpt2Base() {
  return R"({"model_type": "gpt2", "n_layer": 2, "n_embd": 64, "n_head": 4, "vocab_size": 256,
  "n_positions": 128, "tie_word_embeddings": true}
)";
}

std::string LlamaBase() {
  return R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 256, "num_attention_heads": 8,
  "num_key_value_heads": 4, "intermediate_size": 688, "vocab_size": 1000, "max_position_embeddings": 512,
  "hidden_act": "silu"}
)";
}

// A frozen copy of a measured profile: the cases edit its exact lines.
std::string HwBase() { return ReadText(SourceDir() + "/tests/core/data/hw_profile_base.yaml"); }

std::string PlanBase() {
  Plan p;
  Result<ModelSpec> m = LoadModelSpec(SourceDir() + "/models/tiny.yaml");
  if (m.ok()) p.model = *m;
  p.hw_name = "cpu-2core";
  p.backend = "cpu";
  p.knobs.seq_len = p.model.seq_len;
  p.knobs.micro_batch = 2;
  p.knobs.placement.params = Tier::kNvme;
  p.knobs.placement.optimizer = Tier::kNvme;
  p.knobs.device_budget_bytes = 256.0 * (1 << 20);
  p.knobs.nvme_dir = "/tmp/zinf-nvme";
  p.prediction.step_time_s = 0.5;
  p.prediction.busy_s = {{"compute", 0.25}};
  p.prediction.memory = {{"device", "params", 1e6, ""}};
  return PlanToYaml(p);
}

std::string Base(Reader r, bool llama = false) {
  switch (r) {
    case Reader::kModel: return ModelBase();
    case Reader::kHf: return llama ? LlamaBase() : Gpt2Base();
    case Reader::kHw: return HwBase();
    case Reader::kPlan: return PlanBase();
  }
  return "";
}

// ---- Cases. ----

struct Case {
  std::string name;
  Reader reader;
  std::string text;
  Code code = Code::kInvalidArgument;
  std::vector<std::string> expect;  // substrings of the message (key path, what is allowed)
  std::string setup_error;          // a mutation that did not apply (the test reports it)
};

// `base` with `from` replaced by `to` (first occurrence).
Case Sub(std::string name, Reader r, const std::string& base, const std::string& from, const std::string& to,
         std::vector<std::string> expect) {
  Case c{std::move(name), r, base, Code::kInvalidArgument, std::move(expect), ""};
  size_t pos = base.find(from);
  if (pos == std::string::npos) {
    c.setup_error = "'" + from + "' not in the base file";
  } else {
    c.text.replace(pos, from.size(), to);
  }
  return c;
}

Case Raw(std::string name, Reader r, std::string text, std::vector<std::string> expect) {
  return Case{std::move(name), r, std::move(text), Code::kInvalidArgument, std::move(expect), ""};
}

void AddModelCases(std::vector<Case>& v) {
  const Reader R = Reader::kModel;
  const std::string b = ModelBase();
  // Wrong types.
  v.push_back(Sub("LayersList", R, b, "n_layer: 2", "n_layer: [2]", {"key 'n_layer'", "must be an integer", "allowed: 1 .. 100000"}));
  v.push_back(Sub("LayersWord", R, b, "n_layer: 2", "n_layer: two", {"key 'n_layer'", "'two' is not an integer", "allowed: 1 .. 100000"}));
  v.push_back(Sub("LayersQuoted", R, b, "n_layer: 2", "n_layer: \"2\"", {"key 'n_layer'", "not a quoted string", "allowed: 1 .. 100000"}));
  v.push_back(Sub("LayersFraction", R, b, "n_layer: 2", "n_layer: 2.5", {"key 'n_layer'", "'2.5' is not an integer"}));
  v.push_back(Sub("HiddenMap", R, b, "hidden: 64", "hidden: {a: 1}", {"key 'hidden'", "must be an integer", "allowed: 1 .. "}));
  v.push_back(Sub("BiasWord", R, b, "bias: true", "bias: maybe", {"key 'bias'", "must be true or false"}));
  v.push_back(Sub("BiasQuoted", R, b, "bias: true", "bias: \"true\"", {"key 'bias'", "must be true or false"}));
  v.push_back(Sub("NameList", R, b, "name: tiny", "name: [a, b]", {"key 'name'", "must be a string"}));
  v.push_back(Sub("FamilyMap", R, b, "family: gpt", "family: {x: 1}", {"key 'family'", "must be a string"}));
  // Missing required keys.
  for (const char* k : {"name", "n_layer", "hidden", "n_head", "vocab", "seq_len"}) {
    std::string line = std::string(k) + ": ";
    size_t pos = b.find("\n" + line);
    Case c = Raw(std::string("Missing_") + k, R, b, {std::string("key '") + k + "': missing (required)"});
    if (pos == std::string::npos) c.setup_error = line + " not found";
    else c.text.erase(pos + 1, b.find('\n', pos + 1) - pos);
    v.push_back(c);
  }
  v.push_back(Sub("NullValue", R, b, "vocab: 256", "vocab: ~", {"key 'vocab': missing (required)"}));
  // Unknown and duplicate keys.
  v.push_back(Sub("UnknownKey", R, b, "n_layer: 2", "n_layer: 2\nn_layers: 2", {"unknown key 'n_layers'", "allowed here:", "n_layer"}));
  v.push_back(Sub("DuplicateKey", R, b, "n_layer: 2", "n_layer: 2\nn_layer: 3", {"key 'n_layer' appears more than once"}));
  // Negative, zero, absurd.
  v.push_back(Sub("LayersNegative", R, b, "n_layer: 2", "n_layer: -1", {"key 'n_layer'", "value -1 is out of range; allowed: 1 .. 100000"}));
  v.push_back(Sub("HiddenZero", R, b, "hidden: 64", "hidden: 0", {"key 'hidden'", "value 0 is out of range; allowed: 1 .. "}));
  v.push_back(Sub("VocabZero", R, b, "vocab: 256", "vocab: 0", {"key 'vocab'", "allowed: 1 .. "}));
  v.push_back(Sub("SeqLenZero", R, b, "seq_len: 64", "seq_len: 0", {"key 'seq_len'", "allowed: 1 .. "}));
  v.push_back(Sub("FfnNegative", R, b, "ffn_hidden: 256", "ffn_hidden: -256", {"key 'ffn_hidden'", "allowed: 1 .. "}));
  v.push_back(Sub("Layers1e30", R, b, "n_layer: 2", "n_layer: 1e30", {"key 'n_layer'", "out of range; allowed: 1 .. 100000"}));
  v.push_back(Sub("Hidden2Pow40", R, b, "hidden: 64", "hidden: 1099511627776", {"key 'hidden'", "out of range"}));
  v.push_back(Sub("SeqLen1e9", R, b, "seq_len: 64", "seq_len: 1000000000", {"key 'seq_len'", "out of range"}));
  v.push_back(Sub("HeadsHuge", R, b, "n_head: 4", "n_head: 99999999999999999999999", {"key 'n_head'", "allowed: 1 .. 65536"}));
  v.push_back(Sub("LayersNan", R, b, "n_layer: 2", "n_layer: .nan", {"key 'n_layer'", "is not an integer"}));
  v.push_back(Sub("LayersInf", R, b, "n_layer: 2", "n_layer: .inf", {"key 'n_layer'", "is not an integer"}));
  v.push_back(Sub("LayersMinusInf", R, b, "n_layer: 2", "n_layer: -.inf", {"key 'n_layer'", "is not an integer"}));
  // Cross-field.
  v.push_back(Sub("HiddenNotDivisible", R, b, "hidden: 64", "hidden: 66", {"key 'hidden'", "66 is not divisible by n_head 4", "must be a multiple of n_head"}));
  v.push_back(Sub("KvHeadsNotDivisor", R, b, "n_kv_head: 4", "n_kv_head: 3", {"key 'n_kv_head'", "must divide n_head 4"}));
  v.push_back(Sub("KvHeadsAboveHeads", R, b, "n_kv_head: 4", "n_kv_head: 8", {"key 'n_kv_head'", "must divide n_head 4"}));
  v.push_back(Sub("GptWithSwiglu", R, b, "mlp: gelu", "mlp: swiglu", {"key 'mlp'", "family gpt uses mlp: gelu"}));
  // Enums, huge strings, versions.
  v.push_back(Sub("FamilyUnknown", R, b, "family: gpt", "family: bert", {"key 'family'", "'bert' is not allowed; allowed: gpt, llama"}));
  v.push_back(Sub("FamilyHuge", R, b, "family: gpt", "family: " + std::string(1 << 20, 'x'), {"key 'family'", "(1048576 bytes)", "allowed: gpt, llama"}));
  v.push_back(Sub("HugeUnknownKey", R, b, "n_layer: 2", "n_layer: 2\n" + std::string(1000, 'k') + ": 1", {"unknown key 'kkkk", "(1000 bytes)"}));
  v.push_back(Sub("FormatV2", R, b, "format: zinf.model/v1", "format: zinf.model/v2", {"key 'format'", "'zinf.model/v2' is not allowed; allowed: zinf.model/v1"}));
  v.push_back(Sub("FormatOfPlan", R, b, "format: zinf.model/v1", "format: zinf.plan/v1", {"key 'format'", "allowed: zinf.model/v1"}));
  v.push_back(Sub("FormatNumber", R, b, "format: zinf.model/v1", "format: 1", {"key 'format'", "allowed: zinf.model/v1"}));
  v.push_back(Sub("NormUnknown", R, b, "norm: layernorm", "norm: batchnorm", {"key 'norm'", "allowed: layernorm, rmsnorm"}));
  v.push_back(Sub("PositionUnknown", R, b, "position: learned", "position: alibi", {"key 'position'", "allowed: learned, rope"}));
}

void AddHfCases(std::vector<Case>& v) {
  const Reader R = Reader::kHf;
  const std::string g = Gpt2Base(), l = LlamaBase();
  v.push_back(Sub("Gpt2LayersString", R, g, "\"n_layer\": 2", "\"n_layer\": \"2\"", {"key 'n_layer'", "not a quoted string", "allowed: 1 .. 100000"}));
  v.push_back(Sub("Gpt2LayersList", R, g, "\"n_layer\": 2", "\"n_layer\": [2]", {"key 'n_layer'", "must be an integer"}));
  v.push_back(Sub("Gpt2LayersObject", R, g, "\"n_layer\": 2", "\"n_layer\": {\"v\": 2}", {"key 'n_layer'", "must be an integer"}));
  v.push_back(Sub("Gpt2LayersFloat", R, g, "\"n_layer\": 2", "\"n_layer\": 2.5", {"key 'n_layer'", "is not an integer"}));
  v.push_back(Sub("Gpt2LayersNegative", R, g, "\"n_layer\": 2", "\"n_layer\": -2", {"key 'n_layer'", "allowed: 1 .. 100000"}));
  v.push_back(Sub("Gpt2Layers1e30", R, g, "\"n_layer\": 2", "\"n_layer\": 1e30", {"key 'n_layer'", "allowed: 1 .. 100000"}));
  v.push_back(Sub("Gpt2HeadsZero", R, g, "\"n_head\": 4", "\"n_head\": 0", {"key 'n_head'", "allowed: 1 .. 65536"}));
  v.push_back(Sub("Gpt2VocabHuge", R, g, "\"vocab_size\": 256", "\"vocab_size\": 1e30", {"key 'vocab_size'", "allowed: 1 .. "}));
  v.push_back(Sub("Gpt2PositionsNegative", R, g, "\"n_positions\": 128", "\"n_positions\": -1", {"key 'n_positions'", "allowed: 1 .. "}));
  v.push_back(Sub("Gpt2MissingEmbd", R, g, "\"n_embd\": 64, ", "", {"key 'n_embd': missing (required)"}));
  v.push_back(Sub("Gpt2MissingLayers", R, g, "\"n_layer\": 2, ", "", {"key 'n_layer': missing (required)"}));
  v.push_back(Sub("Gpt2MissingVocab", R, g, "\"vocab_size\": 256,", "", {"key 'vocab_size': missing (required)"}));
  v.push_back(Sub("Gpt2NotDivisible", R, g, "\"n_embd\": 64", "\"n_embd\": 66", {"key 'n_embd'", "not divisible by n_head 4", "must be a multiple"}));
  v.push_back(Sub("Gpt2TieString", R, g, "\"tie_word_embeddings\": true", "\"tie_word_embeddings\": \"yes\"", {"key 'tie_word_embeddings'", "must be true or false"}));
  v.push_back(Sub("Gpt2DuplicateKey", R, g, "\"n_layer\": 2,", "\"n_layer\": 2, \"n_layer\": 48,", {"key 'n_layer' appears more than once"}));
  v.push_back(Sub("TypeUnsupported", R, l, "\"model_type\": \"llama\"", "\"model_type\": \"bert\"", {"key 'model_type'", "'bert' is not supported; allowed: gpt2, llama, mistral"}));
  v.push_back(Sub("TypeList", R, l, "\"model_type\": \"llama\"", "\"model_type\": [\"llama\"]", {"key 'model_type'", "must be a string"}));
  v.push_back(Sub("TypeHuge", R, l, "\"model_type\": \"llama\"", "\"model_type\": \"" + std::string(1 << 20, 'q') + "\"", {"key 'model_type'", "allowed: gpt2, llama, mistral"}));
  v.push_back(Sub("LlamaKvNotDivisor", R, l, "\"num_key_value_heads\": 4", "\"num_key_value_heads\": 3", {"key 'num_key_value_heads'", "must divide num_attention_heads 8"}));
  v.push_back(Sub("LlamaHiddenNotDivisible", R, l, "\"hidden_size\": 256", "\"hidden_size\": 260", {"key 'hidden_size'", "not divisible", "must be a multiple"}));
  v.push_back(Sub("LlamaActivation", R, l, "\"hidden_act\": \"silu\"", "\"hidden_act\": \"relu\"", {"key 'hidden_act'", "allowed: silu"}));
  v.push_back(Sub("LlamaActivationNumber", R, l, "\"hidden_act\": \"silu\"", "\"hidden_act\": [1]", {"key 'hidden_act'", "must be a string"}));
  v.push_back(Sub("LlamaMissingFfn", R, l, "\"intermediate_size\": 688, ", "", {"key 'intermediate_size': missing (required)"}));
  v.push_back(Sub("LlamaPositionsZero", R, l, "\"max_position_embeddings\": 512", "\"max_position_embeddings\": 0", {"key 'max_position_embeddings'", "allowed: 1 .. "}));
  v.push_back(Sub("LlamaLayersNull", R, l, "\"num_hidden_layers\": 2", "\"num_hidden_layers\": null", {"key 'num_hidden_layers': missing (required)"}));
  v.push_back(Raw("ArchitecturesOnly", R, R"({"architectures": ["GPT2LMHeadModel"]})", {"key 'model_type'", "allowed: gpt2, llama, mistral"}));
  v.push_back(Raw("TruncatedJson", R, g.substr(0, g.size() / 2), {"syntax error"}));
  v.push_back(Raw("TrailingComma", R, R"({"model_type": "gpt2", "n_layer": 2,, "n_embd": 64})", {}));
  v.push_back(Raw("JsonArray", R, R"([{"model_type": "gpt2"}])", {"top level must be a mapping"}));
}

void AddHwCases(std::vector<Case>& v) {
  const Reader R = Reader::kHw;
  const std::string b = HwBase();
  v.push_back(Sub("GpusNegative", R, b, "  gpus_per_node: 1", "  gpus_per_node: -1", {"key 'node.gpus_per_node'", "allowed: 1 .. 1024"}));
  v.push_back(Sub("GpusQuoted", R, b, "  gpus_per_node: 1", "  gpus_per_node: \"1\"", {"key 'node.gpus_per_node'", "not a quoted string"}));
  v.push_back(Sub("CoresHuge", R, b, "  cpu_cores: 2", "  cpu_cores: 1e9", {"key 'node.cpu_cores'", "allowed: 1 .. 65536"}));
  v.push_back(Sub("HostMemoryNegative", R, b, "  host_memory: 25275990016", "  host_memory: -5", {"key 'node.host_memory'", "is negative", "allowed: "}));
  v.push_back(Sub("HostMemoryZero", R, b, "  host_memory: 25275990016", "  host_memory: 0", {"key 'node.host_memory'", "out of range; allowed: 1048576 .. 1e+18"}));
  v.push_back(Sub("HostMemory1e30", R, b, "  host_memory: 25275990016", "  host_memory: 1e30", {"key 'node.host_memory'", "out of range"}));
  v.push_back(Sub("HostMemoryUnit", R, b, "  host_memory: 25275990016", "  host_memory: 12 parsecs", {"key 'node.host_memory'", "unknown size unit 'parsecs'", "allowed: a plain number or"}));
  v.push_back(Sub("HostMemoryInf", R, b, "  host_memory: 25275990016", "  host_memory: inf", {"key 'node.host_memory'", "not finite"}));
  v.push_back(Sub("HostMemoryNan", R, b, "  host_memory: 25275990016", "  host_memory: nan", {"key 'node.host_memory'", "not finite"}));
  v.push_back(Sub("HostMemoryYamlNan", R, b, "  host_memory: 25275990016", "  host_memory: .nan", {"key 'node.host_memory'", "does not start with a number"}));
  v.push_back(Sub("HostMemoryList", R, b, "  host_memory: 25275990016", "  host_memory: [1]", {"key 'node.host_memory'", "must be a size"}));
  v.push_back(Sub("DeviceMemoryEmpty", R, b, "  memory: 4294967296", "  memory: \"\"", {"key 'device.memory'", "empty value"}));
  v.push_back(Sub("MemoryBwMap", R, b, "  memory_bw: 25999063518.102627", "  memory_bw: {a: 1}", {"key 'device.memory_bw'", "must be a bandwidth"}));
  v.push_back(Sub("PeakFlopsUnit", R, b, "  peak_flops: 279640657131.24915", "  peak_flops: 3 furlongs", {"key 'device.peak_flops'", "unknown compute rate unit"}));
  v.push_back(Sub("AchievableAbovePeak", R, b, "  achievable_flops: 251056732341.39645", "  achievable_flops: 1e16", {"key 'device.achievable_flops'", "must not exceed device.peak_flops"}));
  v.push_back(Sub("CurveUnsorted", R, b, "    - x: 524288\n", "    - x: 99999999999\n", {"key 'device.gemm_curve'", "strictly increasing x"}));
  v.push_back(Sub("CurveNotList", R, b, "  gemm_curve:\n", "  gemm_curve: 5\n  old_curve:\n", {"key 'device.gemm_curve'", "must be a list"}));
  v.push_back(Sub("CurveNegativeX", R, b, "    - x: 524288\n", "    - x: -1\n", {"key 'device.gemm_curve[0].x'", "allowed: "}));
  v.push_back(Sub("CurvePointScalar", R, b, "    - x: 524288\n      y: 9026997245.179064\n", "    - 7\n", {"key 'device.gemm_curve[0]'", "must be a mapping"}));
  v.push_back(Sub("CurveMissingY", R, b, "      y: 9026997245.179064\n", "", {"key 'device.gemm_curve[0].y': missing (required)"}));
  v.push_back(Sub("BlockSizeOdd", R, b, "  block_size: 262144", "  block_size: 5000", {"key 'nvme.block_size'", "must be a multiple of 4096"}));
  v.push_back(Sub("QueueDepthZero", R, b, "  queue_depth: 32", "  queue_depth: 0", {"key 'nvme.queue_depth'", "allowed: 1 .. 4096"}));
  v.push_back(Sub("LatencyHuge", R, b, "  latency_s: 0", "  latency_s: 2", {"key 'network.latency_s'", "allowed: 0 .. 1"}));
  v.push_back(Sub("LatencyNan", R, b, "  latency_s: 0", "  latency_s: .nan", {"key 'network.latency_s'", "must be a finite number"}));
  v.push_back(Sub("AdamNegative", R, b, "  adam_params_per_s: 772544267.4437658", "  adam_params_per_s: -1", {"key 'cpu.adam_params_per_s'", "allowed: "}));
  v.push_back(Sub("FormatV0", R, b, "format: zinf.hwprofile/v1", "format: zinf.hwprofile/v0", {"key 'format'", "allowed: zinf.hwprofile/v1"}));
  v.push_back(Sub("FormatMissing", R, b, "format: zinf.hwprofile/v1\n", "", {"key 'format': missing (required)"}));
  v.push_back(Sub("BackendUnknown", R, b, "backend: cpu", "backend: tpu", {"key 'backend'", "allowed: cuda, cpu"}));
  v.push_back(Sub("DtypeUnknown", R, b, "  dtype: fp32", "  dtype: fp8", {"key 'device.dtype'", "allowed: fp16, bf16, fp32"}));
  v.push_back(Sub("NodeScalar", R, b, "node:\n", "node: 5\nold_node:\n", {"key 'node'", "must be a mapping"}));
  v.push_back(Sub("NetworkMissing", R, b, "network:\n", "networks:\n", {"key 'network': missing (required)"}));
  v.push_back(Sub("UnknownDeviceKey", R, b, "  dtype: fp32", "  dtype: fp32\n  dtyp: fp16", {"unknown key 'device.dtyp'", "allowed here:"}));
  v.push_back(Sub("DuplicateDeviceKey", R, b, "  dtype: fp32", "  dtype: fp32\n  dtype: fp16", {"key 'device.dtype' appears more than once"}));
  v.push_back(Sub("ProvenanceList", R, b, "  bandwidth.d2h: ", "  bandwidth.d2h: [1, 2]\n  x: ", {"key 'provenance.bandwidth.d2h'", "must be a string"}));
}

void AddPlanCases(std::vector<Case>& v) {
  const Reader R = Reader::kPlan;
  const std::string b = PlanBase();
  v.push_back(Sub("MicroBatchQuoted", R, b, "micro_batch: 2", "micro_batch: \"2\"", {"key 'training.micro_batch'", "not a quoted string", "allowed: 1 .. "}));
  v.push_back(Sub("MicroBatchZero", R, b, "micro_batch: 2", "micro_batch: 0", {"key 'training.micro_batch'", "allowed: 1 .. 1048576"}));
  v.push_back(Sub("MicroBatch1e30", R, b, "micro_batch: 2", "micro_batch: 1e30", {"key 'training.micro_batch'", "allowed: 1 .. 1048576"}));
  v.push_back(Sub("GradAccumNegative", R, b, "grad_accum: 1", "grad_accum: -3", {"key 'training.grad_accum'", "allowed: 1 .. "}));
  v.push_back(Sub("SeqLenAboveModel", R, b, "  seq_len: 64\n  dtype", "  seq_len: 65\n  dtype", {"key 'training.seq_len'", "learned position table", "allowed: 1 .. 64"}));
  v.push_back(Sub("NodesHuge", R, b, "nodes: 1", "nodes: 1e30", {"key 'cluster.nodes'", "allowed: 1 .. "}));
  v.push_back(Sub("GpusList", R, b, "gpus_per_node: 1", "gpus_per_node: [1]", {"key 'cluster.gpus_per_node'", "must be an integer"}));
  v.push_back(Sub("PlacementNumber", R, b, "params: nvme", "params: 3", {"key 'placement.params'", "allowed: device, host, nvme"}));
  v.push_back(Sub("PlacementMap", R, b, "params: nvme", "params: {a: 1}", {"key 'placement.params'", "must be a string"}));
  v.push_back(Sub("NvmeDirEmpty", R, b, "dir: /tmp/zinf-nvme", "dir: \"\"", {"key 'nvme.dir'", "non-empty"}));
  v.push_back(Sub("NvmeDirList", R, b, "dir: /tmp/zinf-nvme", "dir: [a]", {"key 'nvme.dir'", "must be a string"}));
  v.push_back(Sub("QueueDepthNan", R, b, "queue_depth: 8", "queue_depth: .nan", {"key 'nvme.queue_depth'", "is not an integer"}));
  v.push_back(Sub("DeviceBudgetNegative", R, b, "  device: 268435456", "  device: -1", {"key 'budgets.device'", "is negative"}));
  v.push_back(Sub("DeviceBudgetTiny", R, b, "  device: 268435456", "  device: 1", {"key 'budgets.device'", "allowed: 1048576 .. "}));
  v.push_back(Sub("ModelHiddenNotDivisible", R, b, "  hidden: 64", "  hidden: 66", {"key 'model.hidden'", "not divisible by n_head 4"}));
  v.push_back(Sub("ModelLayersNegative", R, b, "  n_layer: 2", "  n_layer: -2", {"key 'model.n_layer'", "allowed: 1 .. 100000"}));
  v.push_back(Sub("ModelSectionList", R, b, "model:\n", "model: [1]\nold_model:\n", {"key 'model'", "must be a mapping"}));
  v.push_back(Sub("ChunkHuge", R, b, "optimizer_chunk_params: 0", "optimizer_chunk_params: 1e300", {"key 'buffers.optimizer_chunk_params'", "allowed: 0 .. "}));
  v.push_back(Sub("StepTimeInf", R, b, "step_time_s: 0.5", "step_time_s: .inf", {"key 'prediction.step_time_s'", "must be a finite number"}));
  v.push_back(Sub("FormatV2", R, b, "format: zinf.plan/v1", "format: zinf.plan/v2", {"key 'format'", "allowed: zinf.plan/v1"}));
  v.push_back(Sub("FormatOfModel", R, b, "format: zinf.plan/v1", "format: zinf.model/v1", {"key 'format'", "allowed: zinf.plan/v1"}));
  v.push_back(Sub("DuplicateSection", R, b, "tiling:\n  factor: 1\n", "tiling:\n  factor: 1\ntiling:\n  factor: 2\n", {"key 'tiling' appears more than once"}));
  v.push_back(Sub("UnknownKnob", R, b, "grad_accum: 1", "grad_accum: 1\n  grad_accumulation: 4", {"unknown key 'training.grad_accumulation'", "allowed here:"}));
}

// Files that break any reader the same way.
void AddGenericCases(std::vector<Case>& v, Reader r) {
  const std::string n = ReaderName(r);
  const std::string b = Base(r);
  v.push_back(Raw(n + "_Empty", r, "", {"file is empty"}));
  v.push_back(Raw(n + "_Whitespace", r, " \n\t\n\r\n", {"file is empty"}));
  v.push_back(Raw(n + "_CommentOnly", r, "# nothing here\n", {"top level must be a mapping"}));
  v.push_back(Raw(n + "_TopLevelList", r, "- a\n- b\n", {"top level must be a mapping"}));
  v.push_back(Raw(n + "_TopLevelScalar", r, "hello\n", {"top level must be a mapping"}));
  v.push_back(Raw(n + "_TopLevelNull", r, "~\n", {"top level must be a mapping"}));
  v.push_back(Raw(n + "_ElfBinary", r, std::string("\x7f" "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0", 16), {"control character 0x7f", "not a text file"}));
  v.push_back(Raw(n + "_NulInside", r, b.substr(0, 20) + std::string(1, '\0') + b.substr(20), {"control character 0x00"}));
  v.push_back(Raw(n + "_HighBytes", r, "\xff\xfe\x80\x81 garbage \xc3\x28: \xa0\xa1\n", {}));
  v.push_back(Raw(n + "_Utf16", r, std::string("\xff\xfe" "f\0o\0r\0m\0a\0t\0", 14), {"control character 0x00"}));
  v.push_back(Raw(n + "_TruncatedHalf", r, b.substr(0, b.size() / 2), {}));
  v.push_back(Raw(n + "_TruncatedTenth", r, b.substr(0, b.size() / 10), {}));
  v.push_back(Raw(n + "_UnterminatedQuote", r, "format: \"zinf", {"syntax error"}));
  v.push_back(Raw(n + "_UnterminatedFlow", r, "format: [zinf, {a: 1", {"syntax error"}));
  v.push_back(Raw(n + "_DeepFlowList", r, "a: " + std::string(100000, '['), {}));
  v.push_back(Raw(n + "_DeepFlowMap", r, "a: " + std::string(100000, '{'), {}));
  std::string deep_block;
  for (int i = 0; i < 30000; ++i) deep_block += "- ";
  v.push_back(Raw(n + "_DeepBlockSeq", r, "a:\n  " + deep_block + "x\n", {}));
  v.push_back(Raw(n + "_UndefinedAlias", r, "a: *nope\n", {"syntax error"}));
  v.push_back(Raw(n + "_AliasLoop", r, "a: &x [*x]\n", {}));
  v.push_back(Raw(n + "_ComplexKey", r, "? [a, b]\n: 1\n", {}));
  v.push_back(Raw(n + "_TwoDocuments", r, b + "\n---\n" + b, {"more than one YAML document", "expected exactly one"}));
  v.push_back(Raw(n + "_Tabs", r, "a:\n\tb: 1\n", {}));
}

std::vector<Case> AllCases() {
  std::vector<Case> v;
  AddModelCases(v);
  AddHfCases(v);
  AddHwCases(v);
  AddPlanCases(v);
  for (Reader r : {Reader::kModel, Reader::kHf, Reader::kHw, Reader::kPlan}) AddGenericCases(v, r);
  return v;
}

// gtest prints the case by name, not as bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << ReaderName(c.reader) << "/" << c.name; }

class BadInput : public ::testing::TestWithParam<Case> {};

TEST_P(BadInput, CleanErrorNamingFileKeyAndAllowed) {
  const Case& c = GetParam();
  ASSERT_TRUE(c.setup_error.empty()) << c.setup_error;
  ScratchDir dir;
  const std::string path = dir.Write(std::string(ReaderName(c.reader)) + "-bad.yaml", c.text);
  std::optional<Status> st;
  ASSERT_NO_THROW(st.emplace(LoadWith(c.reader, path)));
  ASSERT_FALSE(st->ok()) << "accepted:\n" << c.text.substr(0, 2000);
  EXPECT_EQ(st->code(), c.code) << st->ToString();
  const std::string& msg = st->message();
  EXPECT_NE(msg.find(path), std::string::npos) << "message does not name the file: " << msg;
  for (const auto& e : c.expect) EXPECT_NE(msg.find(e), std::string::npos) << "missing '" << e << "' in: " << msg;
  // Huge inputs must not be echoed whole.
  EXPECT_LT(msg.size(), 2000u) << msg.substr(0, 300);
  EXPECT_EQ(ExitCodeFor(*st), 2);
}

INSTANTIATE_TEST_SUITE_P(AllReaders, BadInput, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           return std::string(ReaderName(i.param.reader)) + "_" + i.param.name;
                         });

TEST(BadInputBases, TheUnbrokenFilesLoad) {
  ScratchDir dir;
  for (Reader r : {Reader::kModel, Reader::kHf, Reader::kHw, Reader::kPlan}) {
    for (bool llama : {false, true}) {
      std::string p = dir.Write("good.yaml", Base(r, llama));
      Status st = LoadWith(r, p);
      EXPECT_TRUE(st.ok()) << ReaderName(r) << ": " << st.ToString();
    }
  }
}

TEST(BadInputFiles, MissingFileIsNotFound) {
  for (Reader r : {Reader::kModel, Reader::kHw, Reader::kPlan}) {
    Status st = LoadWith(r, "/nonexistent/zinf/x.yaml");
    EXPECT_EQ(st.code(), Code::kNotFound) << st.ToString();
    EXPECT_NE(st.message().find("/nonexistent/zinf/x.yaml"), std::string::npos);
    EXPECT_EQ(ExitCodeFor(st), 2);
  }
}

TEST(BadInputFiles, DirectoryIsRejected) {
  ScratchDir dir;
  for (Reader r : {Reader::kModel, Reader::kHw, Reader::kPlan}) {
    Status st = LoadWith(r, dir.path());
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << st.ToString();
    EXPECT_NE(st.message().find(dir.path() + ": is a directory"), std::string::npos) << st.ToString();
  }
}

TEST(BadInputFiles, HugeStringsThatAreAllowedStillLoad) {
  // A 1 MiB model name is odd but not wrong: it loads, and the plan round trip keeps it.
  ScratchDir dir;
  std::string text = ModelBase();
  size_t pos = text.find("name: tiny");
  ASSERT_NE(pos, std::string::npos);
  text.replace(pos, 10, "name: " + std::string(1 << 20, 'n'));
  Result<ModelSpec> m = LoadModelSpec(dir.Write("m.yaml", text));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->name.size(), size_t{1} << 20);
}

// Found by tests/fuzz (UBSan): an integer key above its range (1e308) was range-checked and
// then still converted to int64, which is undefined. 2^63 passes a check against INT64_MAX
// (it rounds to 2^63 as a double) and must not be converted either.
TEST(BadInputFiles, IntegersOutsideInt64AreNeverConverted) {
  for (const char* text : {"v: 1e308\n", "v: 9223372036854775807\n", "v: 9223372036854775808\n", "v: -1e300\n"}) {
    SCOPED_TRACE(text);
    Result<YAML::Node> n = ParseYamlText(text, "x.yaml");
    ASSERT_TRUE(n.ok());
    FieldReader r(*n, "x.yaml");
    int64_t v = r.Int("v", 0, std::numeric_limits<int64_t>::max(), int64_t{7});
    EXPECT_EQ(v, 7);
    Status st = r.Finish();
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find("x.yaml: key 'v'"), std::string::npos) << st.ToString();
  }
}

TEST(BadInputFiles, SeqLenOverrideOutOfRange) {
  Status st = LoadModelSpec(SourceDir() + "/models/tiny.yaml", int64_t{1} << 40).status();
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("allowed: 1 .. "), std::string::npos) << st.ToString();
}

}  // namespace
}  // namespace zinf

namespace zinf {
namespace {

// A path naming the wrong kind of thing is bad input (exit 2), not an I/O failure (exit 1):
// "--data /etc/passwd/x", "--nvme-dir file.txt/sub", a directory given as a data file.
TEST(BadInputFiles, WrongKindOfPathIsInvalidArgument) {
  for (int err : {ENOTDIR, EISDIR, ENAMETOOLONG}) {
    Status st = ErrnoStatus(err, "x: open", __FILE__, __LINE__);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << st.ToString();
    EXPECT_EQ(ExitCodeFor(st), 2);
  }
  EXPECT_EQ(ErrnoStatus(EIO, "x", __FILE__, __LINE__).code(), Code::kIo);
}

}  // namespace
}  // namespace zinf
