#include "core/field_reader.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include "core/units.h"

namespace zinf {

namespace {

constexpr size_t kMaxFileBytes = size_t{64} << 20;  // model, profile and plan files are kilobytes

// Bad inputs echo the offending value; a huge string is cut so the message stays readable.
std::string Shorten(const std::string& s) {
  constexpr size_t kMax = 80;
  if (s.size() <= kMax) return s;
  return fmt::format("{}... ({} bytes)", s.substr(0, kMax), s.size());
}

// Counts documents up to `cap` with yaml-cpp's event parser.
class DocCounter : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

int CountDocuments(const std::string& text, int cap) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocCounter counter;
  int n = 0;
  while (n < cap && parser.HandleNextDocument(counter)) ++n;
  return n;
}

// "5" or '5': YAML marks quoted scalars with the non-specific tag "!" (plain ones get "?").
bool IsQuoted(const YAML::Node& v) { return v.IsScalar() && v.Tag() == "!"; }

std::string Range(double min, double max) { return fmt::format("allowed: {} .. {}", min, max); }

}  // namespace

Result<YAML::Node> ParseYamlText(const std::string& text, const std::string& path) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    return InvalidArgument(fmt::format("{}: file is empty; expected a YAML/JSON mapping of keys to values", path));
  // YAML and JSON allow no C0 control characters but tab, LF and CR: anything else (NUL
  // above all, which would end the text early) means a binary or corrupt file.
  int line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') ++line;
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f)
      return InvalidArgument(fmt::format(
          "{}:{}: control character 0x{:02x} at byte {}: not a text file; expected a YAML/JSON mapping",
          path, line, c, i));
  }
  try {
    YAML::Node node = YAML::Load(text);
    if (!node.IsMap())
      return InvalidArgument(fmt::format("{}: top level must be a mapping of keys to values", path));
    // YAML::Load reads the first document and ignores the rest; a second one (two files
    // concatenated) is an error. (Not YAML::LoadAll: it loops forever on some inputs, e.g.
    // a stray '}' after the first document, found by tests/fuzz.)
    if (CountDocuments(text, 2) > 1)
      return InvalidArgument(fmt::format(
          "{}: holds more than one YAML document (a '---' or text after the first mapping); expected exactly one",
          path));
    if (!node.IsMap())
      return InvalidArgument(fmt::format("{}: top level must be a mapping of keys to values", path));
    return node;
  } catch (const YAML::Exception& e) {
    return InvalidArgument(fmt::format("{}:{}:{}: syntax error: {}", path, e.mark.line + 1,
                                       e.mark.column + 1, e.msg));
  } catch (const std::exception& e) {
    return InvalidArgument(fmt::format("{}: cannot parse: {}", path, e.what()));
  }
}

Result<YAML::Node> LoadYamlFile(const std::string& path) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st)) return NotFound(fmt::format("{}: cannot open file (no such file)", path));
  if (std::filesystem::is_directory(st))
    return InvalidArgument(fmt::format("{}: is a directory; expected a YAML/JSON file", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(fmt::format("{}: cannot open file", path));
  std::string text;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxFileBytes)
      return InvalidArgument(fmt::format("{}: file is larger than {} MiB; expected a small YAML/JSON file", path,
                                         kMaxFileBytes >> 20));
  }
  if (in.bad()) return IoError(fmt::format("{}: read error", path));
  return ParseYamlText(text, path);
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
    Fail(key, fmt::format("must be a finite number; {}", Range(min, max)));
  } else if (v < min || v > max) {
    Fail(key, fmt::format("value {} is out of range; {}", v, Range(min, max)));
  }
}

double FieldReader::Number(const std::string& key, double min, double max, std::optional<double> def) {
  YAML::Node v = Lookup(key, true, def.has_value());
  if (!v) return def.value_or(0);
  if (!v.IsScalar() || IsQuoted(v)) {
    Fail(key, fmt::format("must be a number{}; {}", IsQuoted(v) ? ", not a quoted string" : "", Range(min, max)));
    return def.value_or(0);
  }
  double out = 0;
  if (!YAML::convert<double>::decode(v, out)) {
    Fail(key, fmt::format("'{}' is not a number; {}", Shorten(v.Scalar()), Range(min, max)));
    return def.value_or(0);
  }
  CheckRange(key, out, min, max);
  return out;
}

int64_t FieldReader::Int(const std::string& key, int64_t min, int64_t max, std::optional<int64_t> def) {
  YAML::Node v = Lookup(key, true, def.has_value());
  if (!v) return def.value_or(0);
  double d = 0;
  if (v.IsScalar() && !IsQuoted(v) && !YAML::convert<double>::decode(v, d)) {
    Fail(key, fmt::format("'{}' is not an integer; {}", Shorten(v.Scalar()),
                          Range(static_cast<double>(min), static_cast<double>(max))));
    return def.value_or(0);
  }
  if (!v.IsScalar() || IsQuoted(v)) {
    Fail(key, fmt::format("must be an integer{}; {}", IsQuoted(v) ? ", not a quoted string" : "", Range(static_cast<double>(min), static_cast<double>(max))));
    return def.value_or(0);
  }
  if (!std::isfinite(d) || std::floor(d) != d) {
    Fail(key, fmt::format("'{}' is not an integer; {}", Shorten(v.Scalar()),
                          Range(static_cast<double>(min), static_cast<double>(max))));
    return def.value_or(0);
  }
  CheckRange(key, d, static_cast<double>(min), static_cast<double>(max));
  // Out of range (1e308, found by tests/fuzz): converting it to int64 would be undefined.
  if (!(d >= static_cast<double>(min) && d <= static_cast<double>(max))) return def.value_or(0);
  if (!(d >= -0x1p63 && d < 0x1p63)) {  // max = INT64_MAX rounds up to 2^63 as a double
    Fail(key, fmt::format("value {} does not fit a 64-bit integer; {}", d, Range(static_cast<double>(min), static_cast<double>(max))));
    return def.value_or(0);
  }
  return static_cast<int64_t>(d);
}

bool FieldReader::Bool(const std::string& key, std::optional<bool> def) {
  YAML::Node v = Lookup(key, true, def.has_value());
  if (!v) return def.value_or(false);
  bool out = false;
  if (!v.IsScalar() || IsQuoted(v) || !YAML::convert<bool>::decode(v, out)) {
    Fail(key, "must be true or false (a boolean, unquoted)");
    return def.value_or(false);
  }
  return out;
}

std::string FieldReader::String(const std::string& key, std::optional<std::string> def) {
  YAML::Node v = Lookup(key, true, def.has_value());
  if (!v) return def.value_or("");
  if (!v.IsScalar()) {
    Fail(key, "must be a string (a scalar, not a list or mapping)");
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
    Fail(key, fmt::format("'{}' is not allowed; allowed: {}", Shorten(s), list));
  }
  return def.value_or(allowed.empty() ? "" : allowed.front());
}

template <typename Parse>
double FieldReader::WithUnits(const std::string& key, double min, double max, std::optional<double> def,
                              const char* kind, Parse parse) {
  YAML::Node v = Lookup(key, true, def.has_value());
  if (!v) return def.value_or(0);
  if (!v.IsScalar()) {
    Fail(key, fmt::format("must be a {} (a number or a string with units); {}", kind, Range(min, max)));
    return def.value_or(0);
  }
  Result<double> r = parse(v.Scalar());
  if (!r.ok()) {
    Fail(key, fmt::format("{}; {}", r.status().message(), Range(min, max)));
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
      Fail(fmt::format("{}[{}]", key, i), fmt::format("must be a number; {}", Range(min, max)));
      return out;
    }
    CheckRange(fmt::format("{}[{}]", key, i), d, min, max);
    out.push_back(d);
  }
  return out;
}

Status FieldReader::Finish() {
  if (state_->error) return *state_->error;
  if (node_.IsMap()) {
    // A key given twice: YAML forbids it and the reader would silently use one of the two.
    std::set<std::string> seen;
    for (auto it = node_.begin(); it != node_.end(); ++it) {
      if (!it->first.IsScalar()) continue;
      if (!seen.insert(it->first.Scalar()).second)
        return InvalidArgument(fmt::format("{}: key '{}' appears more than once; each key may be given once", file_,
                                           KeyPath(Shorten(it->first.Scalar()))));
    }
  }
  if (!lenient_ && node_.IsMap()) {
    for (auto it = node_.begin(); it != node_.end(); ++it) {
      std::string k = it->first.IsScalar() ? it->first.Scalar() : std::string("<non-scalar key>");
      if (!level_->used.count(k)) {
        k = Shorten(k);
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
