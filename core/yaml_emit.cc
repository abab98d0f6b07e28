#include "core/yaml_emit.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>

namespace zinf {

std::string YamlOut::Quote(const std::string& s) {
  bool plain = !s.empty();
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '/')) plain = false;
  }
  // Words YAML would read as non-strings must be quoted, in any case ("Null", "NULL" and
  // "True" are null and bool to YAML readers too).
  static const char* kSpecial[] = {"true", "false", "yes", "no", "y", "n", "null", "on", "off", "~"};
  std::string lower(s);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* w : kSpecial)
    if (lower == w) plain = false;
  if (plain && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' || s[0] == '.')) plain = false;
  if (plain) return s;
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\x{:02x}", c);
        else out += c;
    }
  }
  return out + "\"";
}

std::string YamlOut::Number(double v) {
  if (std::isnan(v)) return ".nan";
  if (std::isinf(v)) return v > 0 ? ".inf" : "-.inf";
  if (std::floor(v) == v && std::fabs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{}", v);
}

void YamlOut::Line(const std::string& key, const std::string& value) {
  std::string pad(static_cast<size_t>(indent_), ' ');
  if (item_pending_) {
    pad.replace(pad.size() - 2, 2, "- ");
    item_pending_ = false;
  }
  out_ += pad + key + ":" + (value.empty() ? "" : " " + value) + "\n";
}

void YamlOut::Comment(const std::string& text) {
  out_ += std::string(static_cast<size_t>(indent_), ' ') + "# " + text + "\n";
}
void YamlOut::Key(const std::string& key, const std::string& value) { Line(key, Quote(value)); }
void YamlOut::Key(const std::string& key, double value) { Line(key, Number(value)); }
void YamlOut::Key(const std::string& key, int64_t value) { Line(key, fmt::format("{}", value)); }
void YamlOut::Key(const std::string& key, bool value) { Line(key, value ? "true" : "false"); }
void YamlOut::Key(const std::string& key, const std::vector<double>& values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + Number(values[i]);
  Line(key, s + "]");
}
void YamlOut::Begin(const std::string& key) {
  Line(key, "");
  indent_ += 2;
}
void YamlOut::End() { indent_ -= 2; }
void YamlOut::BeginList(const std::string& key) {
  Line(key, "");
  indent_ += 4;
}
void YamlOut::Item() { item_pending_ = true; }
void YamlOut::EndList() { indent_ -= 4; }

}  // namespace zinf
