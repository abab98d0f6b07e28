#include "core/ds_config.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "core/file_util.h"

namespace zinf {
namespace {

using nlohmann::json;

constexpr size_t kMaxFileBytes = size_t{64} << 20;

std::string Shorten(const std::string& s) {
  constexpr size_t kMax = 80;
  if (s.size() <= kMax) return s;
  return fmt::format("{}... ({} bytes)", s.substr(0, kMax), s.size());
}

const char* TypeName(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "a list";
  if (v.is_object()) return "an object";
  return "a value";
}

// Reads one JSON object; the first error sticks (like FieldReader).
class Section {
 public:
  Section(const json* obj, std::string file, std::string path, Status* error, std::vector<std::string>* warnings)
      : obj_(obj), file_(std::move(file)), path_(std::move(path)), error_(error), warnings_(warnings) {}

  std::string KeyPath(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  void Fail(const std::string& key, const std::string& what) {
    if (!error_->ok()) return;
    *error_ = InvalidArgument(fmt::format("{}: key '{}': {}", file_, KeyPath(key), what));
  }
  bool failed() const { return !error_->ok(); }

  const json* Get(const std::string& key) {
    known_.insert(key);
    if (obj_ == nullptr) return nullptr;
    auto it = obj_->find(key);
    if (it == obj_->end()) return nullptr;
    return &*it;
  }

  DsInt Int(const std::string& key, int64_t min, int64_t max, bool allow_auto) {
    DsInt out;
    const json* v = Get(key);
    if (v == nullptr) return out;
    const std::string allowed = fmt::format("allowed: an integer {} .. {}{}", min, max, allow_auto ? " or \"auto\"" : "");
    if (v->is_string()) {
      if (allow_auto && v->get<std::string>() == "auto") {
        out.present = out.is_auto = true;
        return out;
      }
      Fail(key, fmt::format("'{}' is a string; {}", Shorten(v->get<std::string>()), allowed));
      return out;
    }
    if (!v->is_number() || v->is_boolean()) {
      Fail(key, fmt::format("must be an integer, not {}; {}", TypeName(*v), allowed));
      return out;
    }
    // DeepSpeed configs often spell sizes as 5e8: a float with an integral value is fine.
    const double d = v->get<double>();
    if (!std::isfinite(d) || std::floor(d) != d) {
      Fail(key, fmt::format("{} is not an integer; {}", v->dump(), allowed));
      return out;
    }
    if (d < static_cast<double>(min) || d > static_cast<double>(max)) {
      Fail(key, fmt::format("{} is out of range; {}", v->dump(), allowed));
      return out;
    }
    out.present = true;
    out.value = v->is_number_integer() ? v->get<int64_t>() : static_cast<int64_t>(d);
    if (out.value < min || out.value > max) {  // an unsigned above int64 max, etc.
      Fail(key, fmt::format("{} is out of range; {}", v->dump(), allowed));
      out.present = false;
    }
    return out;
  }

  // true / false, or -1 for "auto" where allowed; `def` when absent.
  int Bool(const std::string& key, int def, bool allow_auto = false) {
    const json* v = Get(key);
    if (v == nullptr || v->is_null()) return def;
    if (v->is_boolean()) return v->get<bool>() ? 1 : 0;
    if (allow_auto && v->is_string() && v->get<std::string>() == "auto") return -1;
    Fail(key, fmt::format("must be true or false{}, not {}", allow_auto ? " (or \"auto\")" : "", TypeName(*v)));
    return def;
  }

  std::string String(const std::string& key, const std::string& def) {
    const json* v = Get(key);
    if (v == nullptr || v->is_null()) return def;
    if (!v->is_string()) {
      Fail(key, fmt::format("must be a string, not {}", TypeName(*v)));
      return def;
    }
    return v->get<std::string>();
  }

  std::string Enum(const std::string& key, const std::vector<std::string>& allowed, const std::string& def) {
    std::string s = String(key, def);
    for (const auto& a : allowed)
      if (a == s) return s;
    if (!failed()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      Fail(key, fmt::format("'{}' is not allowed; allowed: {}", Shorten(s), list));
    }
    return def;
  }

  // A nested object; absent or null gives an empty section.
  Section Object(const std::string& key) {
    const json* v = Get(key);
    if (v != nullptr && !v->is_null() && !v->is_object()) {
      Fail(key, fmt::format("must be an object, not {}", TypeName(*v)));
      v = nullptr;
    }
    if (v != nullptr && v->is_null()) v = nullptr;
    return Section(v, file_, KeyPath(key), error_, warnings_);
  }
  bool Has(const std::string& key) const {
    if (obj_ == nullptr) return false;
    auto it = obj_->find(key);
    return it != obj_->end() && !it->is_null();
  }

  // Keys the section has that nothing read: warnings, not errors (DeepSpeed adds keys often).
  void WarnUnknown() {
    if (obj_ == nullptr || failed()) return;
    for (auto it = obj_->begin(); it != obj_->end(); ++it) {
      if (known_.count(it.key())) continue;
      std::string list;
      for (const auto& k : known_) list += (list.empty() ? "" : ", ") + k;
      warnings_->push_back(fmt::format("{}: key '{}' is not one zinf knows (ignored); known here: {}", file_,
                                       KeyPath(Shorten(it.key())), list));
    }
  }

  void Ignore(std::initializer_list<const char*> keys) {
    for (const char* k : keys) known_.insert(k);
  }

 private:
  const json* obj_;
  std::string file_;
  std::string path_;
  Status* error_;
  std::vector<std::string>* warnings_;
  std::set<std::string> known_;
};

DsOffload ReadOffload(Section& z, const std::string& key, bool param) {
  DsOffload o;
  Section s = z.Object(key);
  o.device = s.Enum("device", {"none", "cpu", "nvme"}, "none");
  o.nvme_path = s.String("nvme_path", "");
  o.pin_memory = s.Bool("pin_memory", 0) == 1;
  o.buffer_count = s.Int("buffer_count", 1, 1 << 20, false);
  if (param) {
    o.buffer_size = s.Int("buffer_size", 1, int64_t{1} << 50, false);
    o.max_in_cpu = s.Int("max_in_cpu", 0, int64_t{1} << 50, false);
  } else {
    s.Bool("pipeline_read", 0);
    s.Bool("pipeline_write", 0);
    s.Bool("fast_init", 0);
    s.Ignore({"ratio"});
  }
  if (o.device == "nvme" && o.nvme_path.empty() && !s.failed())
    s.Fail("nvme_path", "missing (required with device \"nvme\"); allowed: a directory path");
  s.WarnUnknown();
  return o;
}

}  // namespace

Result<DsConfig> ParseDsConfig(const std::string& text, const std::string& path) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    return InvalidArgument(fmt::format("{}: file is empty; expected a DeepSpeed JSON object", path));
  // JSON allows no raw control characters but whitespace; a NUL would end the text early for
  // some readers (the JSON parser here accepted a trailing one).
  int line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char ch = static_cast<unsigned char>(text[i]);
    if (ch == '\n') ++line;
    if ((ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') || ch == 0x7f)
      return InvalidArgument(fmt::format("{}:{}: control character 0x{:02x} at byte {}: not a text file; expected JSON",
                                         path, line, ch, i));
  }
  // Duplicate keys: JSON readers silently keep one of them; DeepSpeed's (Python) keeps the last.
  std::vector<std::set<std::string>> open;
  std::string duplicate;
  auto cb = [&](int /*depth*/, json::parse_event_t ev, json& parsed) {
    if (ev == json::parse_event_t::object_start) open.emplace_back();
    else if (ev == json::parse_event_t::object_end && !open.empty()) open.pop_back();
    else if (ev == json::parse_event_t::key && !open.empty() && parsed.is_string()) {
      if (!open.back().insert(parsed.get<std::string>()).second && duplicate.empty())
        duplicate = parsed.get<std::string>();
    }
    return true;
  };
  json root;
  try {
    root = json::parse(text, cb, /*allow_exceptions=*/true, /*ignore_comments=*/false);
  } catch (const json::parse_error& e) {
    return InvalidArgument(fmt::format("{}: JSON syntax error: {}", path, e.what()));
  } catch (const std::exception& e) {
    return InvalidArgument(fmt::format("{}: cannot parse JSON: {}", path, e.what()));
  }
  if (!duplicate.empty())
    return InvalidArgument(fmt::format("{}: key '{}' appears more than once; each key may be given once", path,
                                       Shorten(duplicate)));
  if (!root.is_object())
    return InvalidArgument(fmt::format("{}: top level must be a JSON object, not {}", path, TypeName(root)));

  DsConfig c;
  Status error;
  Section top(&root, path, "", &error, &c.warnings);
  c.train_batch_size = top.Int("train_batch_size", 1, int64_t{1} << 40, true);
  c.micro_batch = top.Int("train_micro_batch_size_per_gpu", 1, 1 << 20, true);
  c.grad_accum = top.Int("gradient_accumulation_steps", 1, 1 << 20, true);
  if (c.train_batch_size.known() && c.micro_batch.known() && c.grad_accum.known() &&
      c.train_batch_size.value % (c.micro_batch.value * c.grad_accum.value) != 0)
    top.Fail("train_batch_size",
             fmt::format("{} is not a multiple of train_micro_batch_size_per_gpu x gradient_accumulation_steps ({} x {}); "
                         "allowed: micro batch x accumulation steps x number of GPUs",
                         c.train_batch_size.value, c.micro_batch.value, c.grad_accum.value));

  c.has_zero = top.Has("zero_optimization");
  Section z = top.Object("zero_optimization");
  {
    DsInt stage = z.Int("stage", 0, 3, false);
    c.zero_stage = stage.present ? stage.value : 0;
    c.offload_param = ReadOffload(z, "offload_param", true);
    c.offload_optimizer = ReadOffload(z, "offload_optimizer", false);
    for (const char* k : {"stage3_prefetch_bucket_size", "stage3_param_persistence_threshold",
                          "stage3_max_live_parameters", "stage3_max_reuse_distance", "reduce_bucket_size"}) {
      DsInt v = z.Int(k, 0, int64_t{1} << 50, /*allow_auto=*/true);
      if (v.present) c.stage3[k] = v;
    }
    for (const char* k : {"sub_group_size", "allgather_bucket_size", "zero_hpz_partition_size", "mics_shard_size"}) {
      DsInt v = z.Int(k, k == std::string("mics_shard_size") ? -1 : 0, int64_t{1} << 50, false);
      if (v.present) c.stage3[k] = v;
    }
    for (const char* k : {"stage3_gather_16bit_weights_on_model_save", "stage3_gather_fp16_weights_on_model_save",
                          "overlap_comm", "contiguous_gradients", "reduce_scatter", "allgather_partitions",
                          "round_robin_gradients", "elastic_checkpoint", "load_from_fp32_weights",
                          "ignore_unused_parameters", "zero_quantized_weights", "zero_quantized_gradients",
                          "mics_hierarchical_params_gather", "memory_efficient_linear", "cpu_offload", "legacy_stage1"})
      z.Bool(k, 0);
    if (c.zero_stage < 3 && c.offload_param.device != "none")
      z.Fail("offload_param", fmt::format("device \"{}\" needs stage 3 (the config has stage {}); allowed: stage 3 with offload_param",
                                          c.offload_param.device, c.zero_stage));
    z.WarnUnknown();
  }
  c.has_aio = top.Has("aio");
  {
    Section a = top.Object("aio");
    DsInt bs = a.Int("block_size", 4096, int64_t{1} << 30, false);
    DsInt qd = a.Int("queue_depth", 1, 65536, false);
    if (bs.present) c.aio_block_size = bs.value;
    if (qd.present) c.aio_queue_depth = qd.value;
    a.Int("intra_op_parallelism", 1, 1024, false);
    a.Int("thread_count", 1, 1024, false);
    a.Bool("single_submit", 0);
    a.Bool("overlap_events", 0);
    a.Bool("use_gds", 0);
    a.WarnUnknown();
  }
  c.has_activation_checkpointing = top.Has("activation_checkpointing");
  {
    Section ac = top.Object("activation_checkpointing");
    c.partition_activations = ac.Bool("partition_activations", 0) == 1;
    c.cpu_checkpointing = ac.Bool("cpu_checkpointing", 0) == 1;
    c.number_checkpoints = ac.Int("number_checkpoints", 1, 1 << 20, false);
    ac.Bool("contiguous_memory_optimization", 0);
    ac.Bool("synchronize_checkpoint_boundary", 0);
    ac.Bool("profile", 0);
    ac.WarnUnknown();
  }
  {
    Section f = top.Object("fp16");
    c.fp16_enabled = f.Bool("enabled", 0, /*allow_auto=*/true);
    f.Ignore({"auto_cast", "loss_scale", "initial_scale_power", "loss_scale_window", "hysteresis",
              "consecutive_hysteresis", "min_loss_scale", "fp16_master_weights_and_grads"});
    f.WarnUnknown();
    Section b = top.Object("bf16");
    c.bf16_enabled = b.Bool("enabled", 0, /*allow_auto=*/true);
    b.Ignore({"immediate_grad_update", "check_grad_overflow"});
    b.WarnUnknown();
    if (c.fp16_enabled == 1 && c.bf16_enabled == 1)
      b.Fail("enabled", "fp16 and bf16 are both enabled; allowed: at most one");
  }
  // Top level: every other key is DeepSpeed's business (optimizer, scheduler, ...).
  if (!error.ok()) return error;
  return c;
}

Result<DsConfig> LoadDsConfig(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return InvalidArgument(fmt::format("{}: is a directory; expected a DeepSpeed ds_config.json", path));
  ZINF_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  if (text.size() > kMaxFileBytes)
    return InvalidArgument(fmt::format("{}: file is larger than {} MiB; expected a ds_config.json", path, kMaxFileBytes >> 20));
  return ParseDsConfig(text, path);
}

Result<Placement> DsPlacementFor(const DsConfig& c, const std::string& path) {
  if (c.zero_stage != 3)
    return InvalidArgument(fmt::format(
        "{}: key 'zero_optimization.stage': {}; zinf plans ZeRO-3 / ZeRO-Infinity; allowed: 3", path,
        c.has_zero ? std::to_string(c.zero_stage) : std::string("missing")));
  auto tier = [](const std::string& device) {
    return device == "nvme" ? Tier::kNvme : device == "cpu" ? Tier::kHost : Tier::kDevice;
  };
  Placement p;
  p.params = tier(c.offload_param.device);
  p.optimizer = tier(c.offload_optimizer.device);
  p.grads = p.optimizer == Tier::kDevice ? Tier::kDevice : Tier::kHost;
  return p;
}

std::string DsStrategyName(const Placement& p) {
  using T = Tier;
  struct Named {
    const char* name;
    Placement p;
  };
  static const Named kNames[] = {
      {"none", {T::kDevice, T::kDevice, T::kDevice}},    {"opt:host", {T::kDevice, T::kHost, T::kHost}},
      {"opt:nvme", {T::kDevice, T::kHost, T::kNvme}},    {"params+opt:host", {T::kHost, T::kHost, T::kHost}},
      {"params+opt:nvme", {T::kNvme, T::kHost, T::kNvme}}, {"all:nvme", {T::kNvme, T::kNvme, T::kNvme}},
  };
  for (const auto& n : kNames)
    if (n.p.params == p.params && n.p.grads == p.grads && n.p.optimizer == p.optimizer) return n.name;
  return "custom";
}

}  // namespace zinf
