#include <cctype>

#include "reports/svg.h"

namespace zinf::reports {

const std::vector<std::string>& Palette::DefaultColours() {
  // Ten hues, distinguishable for common colour-vision deficiencies when paired with the
  // marker shapes and dash patterns the charts also use.
  static const std::vector<std::string> kColours = {
      "#2f6fb3", "#e07b29", "#2a9d6f", "#c8414b", "#7b5cb8",
      "#b89320", "#2aa7b8", "#d36ba6", "#6b7785", "#8c5a3c",
  };
  return kColours;
}

bool Palette::IsValidColour(std::string_view c) {
  if (c.size() != 4 && c.size() != 7) return false;
  if (c[0] != '#') return false;
  for (size_t i = 1; i < c.size(); ++i)
    if (!std::isxdigit(static_cast<unsigned char>(c[i]))) return false;
  return true;
}

Palette::Palette() : colours_(DefaultColours()) {}

Palette::Palette(std::vector<std::string> colours) {
  for (auto& c : colours)
    if (IsValidColour(c)) colours_.push_back(std::move(c));
  if (colours_.empty()) colours_ = DefaultColours();
}

const std::string& Palette::ColorFor(std::string_view key) {
  auto it = assigned_.find(key);
  if (it != assigned_.end()) return it->second;
  const std::string& c = colours_[next_ % colours_.size()];
  ++next_;
  return assigned_.emplace(std::string(key), c).first->second;
}

bool Palette::Assign(std::string_view key, std::string_view colour) {
  if (!IsValidColour(colour)) return false;
  auto it = assigned_.find(key);
  if (it != assigned_.end()) it->second = std::string(colour);
  else assigned_.emplace(std::string(key), std::string(colour));
  return true;
}

}  // namespace zinf::reports
