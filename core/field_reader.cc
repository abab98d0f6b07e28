#include "core/field_reader.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "core/units.h"

namespace zinf {

Result<YAML::Node> LoadYamlFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound(fmt::format("{}: cannot open file", path));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    return InvalidArgument(fmt::format("{}: file is empty", path));
  try {
    YAML::Node node = YAML::Load(text);
    if (!node.IsMap())
      return InvalidArgument(fmt::format("{}: top level must be a mapping of keys to values", path));
    return node;
  } catch (const YAML::Exception& e) {
    return InvalidArgument(fmt::format("{}:{}:{}: syntax error: {}", path, e.mark.line + 1,
                                       e.mark.column + 1, e.msg));
  }
}

FieldReader::FieldReader(YAML::Node node, std::string file, std::string path, bool lenient)
    : FieldReader(std::move(node), std::move(file), std::move(path), lenient,
                  std::make_shared<State>()) {}

FieldReader::FieldReader(YAML::Node node, std::string file, std::string path, bool lenient,
                         std::shared_ptr<State> state)
    : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)), lenient_(lenient),
      state_(std::move(state)) {}

std::string FieldReader::KeyPath(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

void FieldReader::Fail(const std::string& key, const std::string& what) {
  if (state_->error) return;
  state_->error = InvalidArgument(fmt::format("{}: key '{}': {}", file_, KeyPath(key), what));
}

bool FieldReader::Has(const std::string& key) const {
  return node_.IsMap() && node_[key].IsDefined() && !node_[key].IsNull();
}

void FieldReader::Ignore(const std::string& key) { level_->used.insert(key); }

// A missing value is an *undefined* node, so callers can test `if (!v)`. (A default-constructed
// YAML::Node is a defined null node: `!YAML::Node()` is false.)
YAML::Node FieldReader::Lookup(const std::string& key, bool required, bool has_default) {
  level_->used.insert(key);
  YAML::Node v = node_.IsMap() ? node_[key] : YAML::Node(YAML::NodeType::Undefined);
  if (!v.IsDefined() || v.IsNull()) {
    if (required && !has_default) Fail(key, "missing (required)");
    return YAML::Node(YAML::NodeType::Undefined);
  }
  return v;
}

void FieldReader::CheckRange(const std::string& key, double v, double min, double max) {
  if (!std::isfinite(v)) {
    Fail(key, "must be a finite number");
  } else if (v < min || v > max) {
    Fail(key, fmt::format("value {} is out of range; allowed: {} .. {}", v, min, max));
  }
}

double FieldReader::Number(const std::string& key, double min, double max, std::optional<double> def) {
  YAML::Node v = Lookup(key, true, def.has_value());
  if (!v) return def.value_or(0);
  if (!v.IsScalar()) {
    Fail(key, "must be a number");
    return def.value_or(0);
  }
  double out = 0;
  if (!YAML::convert<double>::decode(v, out)) {
    Fail(key, fmt::format("'{}' is not a number", v.Scalar()));
    return def.value_or(0);
  }
  CheckRange(key, out, min, max);
  return out;
}

int64_t FieldReader::Int(const std::string& key, int64_t min, int64_t max, std::optional<int64_t> def) {
  YAML::Node v = Lookup(key, true, def.has_value());
  if (!v) return def.value_or(0);
  double d = 0;
  if (!v.IsScalar() || !YAML::convert<double>::decode(v, d)) {
    Fail(key, "must be an integer");
    return def.value_or(0);
  }
  if (!std::isfinite(d) || std::floor(d) != d) {
    Fail(key, fmt::format("'{}' is not an integer", v.Scalar()));
    return def.value_or(0);
  }
  CheckRange(key, d, static_cast<double>(min), static_cast<double>(max));
  return static_cast<int64_t>(d);
}

bool FieldReader::Bool(const std::string& key, std::optional<bool> def) {
  YAML::Node v = Lookup(key, true, def.has_value());
  if (!v) return def.value_or(false);
  bool out = false;
  if (!v.IsScalar() || !YAML::convert<bool>::decode(v, out)) {
    Fail(key, "must be true or false");
    return def.value_or(false);
  }
  return out;
}

std::string FieldReader::String(const std::string& key, std::optional<std::string> def) {
  YAML::Node v = Lookup(key, true, def.has_value());
  if (!v) return def.value_or("");
  if (!v.IsScalar()) {
    Fail(key, "must be a string");
    return def.value_or("");
  }
  return v.Scalar();
}

std::string FieldReader::Enum(const std::string& key, const std::vector<std::string>& allowed,
                              std::optional<std::string> def) {
  std::string s = String(key, def);
  for (const auto& a : allowed)
    if (a == s) return s;
  // Not an allowed value: report it (unless an earlier error already sticks) and return
  // the default, so callers that convert the result (ParseTier) always get a valid value.
  if (!failed()) {
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    Fail(key, fmt::format("'{}' is not allowed; allowed: {}", s, list));
  }
  return def.value_or(allowed.empty() ? "" : allowed.front());
}

template <typename Parse>
double FieldReader::WithUnits(const std::string& key, double min, double max, std::optional<double> def,
                              const char* kind, Parse parse) {
  YAML::Node v = Lookup(key, true, def.has_value());
  if (!v) return def.value_or(0);
  if (!v.IsScalar()) {
    Fail(key, fmt::format("must be a {} (a number or a string with units)", kind));
    return def.value_or(0);
  }
  Result<double> r = parse(v.Scalar());
  if (!r.ok()) {
    Fail(key, r.status().message());
    return def.value_or(0);
  }
  CheckRange(key, *r, min, max);
  return *r;
}

double FieldReader::Bytes(const std::string& key, double min, double max, std::optional<double> def) {
  return WithUnits(key, min, max, def, "size", ParseBytes);
}
double FieldReader::Bandwidth(const std::string& key, double min, double max, std::optional<double> def) {
  return WithUnits(key, min, max, def, "bandwidth", ParseBandwidth);
}
double FieldReader::Flops(const std::string& key, double min, double max, std::optional<double> def) {
  return WithUnits(key, min, max, def, "compute rate", ParseFlops);
}
double FieldReader::Count(const std::string& key, double min, double max, std::optional<double> def) {
  return WithUnits(key, min, max, def, "count", ParseCount);
}

FieldReader FieldReader::Map(const std::string& key, bool allow_missing) {
  YAML::Node v = Lookup(key, !allow_missing, false);
  // No `v = ...` here: assigning to a YAML::Node rebinds the node inside the caller's document.
  const bool is_map = v && v.IsMap();
  if (v && !is_map) Fail(key, "must be a mapping");
  level_->children.push_back(FieldReader(is_map ? v : YAML::Node(YAML::NodeType::Map), file_, KeyPath(key), lenient_, state_));
  return level_->children.back();
}

std::vector<FieldReader> FieldReader::MapList(const std::string& key, bool allow_missing) {
  std::vector<FieldReader> out;
  YAML::Node v = Lookup(key, !allow_missing, false);
  if (!v) return out;
  if (!v.IsSequence()) {
    Fail(key, "must be a list");
    return out;
  }
  for (size_t i = 0; i < v.size(); ++i) {
    std::string p = fmt::format("{}[{}]", KeyPath(key), i);
    if (!v[i].IsMap()) {
      Fail(fmt::format("{}[{}]", key, i), "must be a mapping");
      continue;
    }
    out.push_back(FieldReader(v[i], file_, p, lenient_, state_));
    level_->children.push_back(out.back());
  }
  return out;
}

std::vector<double> FieldReader::NumberList(const std::string& key, double min, double max, bool allow_missing) {
  std::vector<double> out;
  YAML::Node v = Lookup(key, !allow_missing, false);
  if (!v) return out;
  if (!v.IsSequence()) {
    Fail(key, "must be a list of numbers");
    return out;
  }
  for (size_t i = 0; i < v.size(); ++i) {
    double d = 0;
    if (!v[i].IsScalar() || !YAML::convert<double>::decode(v[i], d)) {
      Fail(fmt::format("{}[{}]", key, i), "must be a number");
      return out;
    }
    CheckRange(fmt::format("{}[{}]", key, i), d, min, max);
    out.push_back(d);
  }
  return out;
}

Status FieldReader::Finish() {
  if (state_->error) return *state_->error;
  if (!lenient_ && node_.IsMap()) {
    for (auto it = node_.begin(); it != node_.end(); ++it) {
      std::string k = it->first.IsScalar() ? it->first.Scalar() : std::string("<non-scalar key>");
      if (!level_->used.count(k)) {
        std::string known;
        for (const auto& u : level_->used) known += (known.empty() ? "" : ", ") + u;
        return InvalidArgument(
            fmt::format("{}: unknown key '{}'; allowed here: {}", file_, KeyPath(k), known));
      }
    }
  }
  for (auto& c : level_->children) ZINF_RETURN_IF_ERROR(c.Finish());
  return Status::Ok();
}

}  // namespace zinf
