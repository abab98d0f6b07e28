// A minimal XML well-formedness checker for the tests: balanced, properly nested tags,
// quoted attributes without duplicates, and only known or numeric entity references.
// Skips <?...?>, <!-- --> and <!DOCTYPE ...>. Returns "" when well-formed.
#pragma once

#include <cctype>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace zinf::reports::testing {

inline bool ValidEntity(std::string_view s, size_t amp, size_t* end) {
  size_t semi = s.find(';', amp);
  if (semi == std::string_view::npos || semi - amp > 12) return false;
  std::string_view name = s.substr(amp + 1, semi - amp - 1);
  *end = semi + 1;
  if (name == "amp" || name == "lt" || name == "gt" || name == "quot" || name == "apos") return true;
  if (name.size() >= 2 && name[0] == '#') {
    bool hex = name[1] == 'x';
    std::string_view digits = name.substr(hex ? 2 : 1);
    if (digits.empty()) return false;
    for (char c : digits)
      if (!(hex ? std::isxdigit(static_cast<unsigned char>(c)) : std::isdigit(static_cast<unsigned char>(c))))
        return false;
    return true;
  }
  return false;
}

inline std::string CheckText(std::string_view s, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i) {
    if (s[i] == '<') return "raw '<' at " + std::to_string(i);
    if (s[i] == '&') {
      size_t end = 0;
      if (!ValidEntity(s, i, &end)) return "bad entity at " + std::to_string(i);
      i = end - 1;
    }
  }
  return "";
}

inline bool NameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == ':' || c == '.';
}

inline std::string CheckXml(std::string_view s) {
  std::vector<std::string> stack;
  size_t roots = 0, i = 0;
  while (i < s.size()) {
    size_t lt = s.find('<', i);
    if (lt == std::string_view::npos) lt = s.size();
    if (std::string e = CheckText(s, i, lt); !e.empty()) return e;
    if (lt == s.size()) break;
    if (s.substr(lt, 4) == "<!--") {
      size_t e = s.find("-->", lt);
      if (e == std::string_view::npos) return "unterminated comment";
      i = e + 3;
      continue;
    }
    if (s.substr(lt, 2) == "<?" || s.substr(lt, 2) == "<!") {
      size_t e = s.find('>', lt);
      if (e == std::string_view::npos) return "unterminated declaration";
      i = e + 1;
      continue;
    }
    bool closing = lt + 1 < s.size() && s[lt + 1] == '/';
    size_t p = lt + (closing ? 2 : 1);
    size_t n0 = p;
    while (p < s.size() && NameChar(s[p])) ++p;
    std::string name(s.substr(n0, p - n0));
    if (name.empty() || !std::isalpha(static_cast<unsigned char>(name[0])))
      return "bad tag name at " + std::to_string(lt);
    std::set<std::string> attrs;
    bool self_close = false;
    while (true) {
      while (p < s.size() && std::isspace(static_cast<unsigned char>(s[p]))) ++p;
      if (p >= s.size()) return "unterminated tag <" + name;
      if (s[p] == '>') { ++p; break; }
      if (s[p] == '/' && p + 1 < s.size() && s[p + 1] == '>' && !closing) { self_close = true; p += 2; break; }
      if (closing) return "attributes in closing tag </" + name;
      size_t a0 = p;
      while (p < s.size() && NameChar(s[p])) ++p;
      std::string attr(s.substr(a0, p - a0));
      if (attr.empty()) return "bad attribute in <" + name + " at " + std::to_string(p);
      if (!attrs.insert(attr).second) return "duplicate attribute " + attr + " in <" + name;
      if (p >= s.size() || s[p] != '=') return "attribute without value: " + attr;
      ++p;
      if (p >= s.size() || (s[p] != '"' && s[p] != '\'')) return "unquoted attribute: " + attr;
      char q = s[p++];
      size_t v_end = s.find(q, p);
      if (v_end == std::string_view::npos) return "unterminated attribute: " + attr;
      if (std::string e = CheckText(s, p, v_end); !e.empty()) return "in attribute " + attr + ": " + e;
      p = v_end + 1;
    }
    if (closing) {
      if (stack.empty() || stack.back() != name) return "mismatched </" + name + "> at " + std::to_string(lt);
      stack.pop_back();
    } else {
      if (stack.empty()) ++roots;
      if (!self_close) stack.push_back(name);
    }
    i = p;
  }
  if (!stack.empty()) return "unclosed <" + stack.back() + ">";
  if (roots != 1) return "expected one root element, found " + std::to_string(roots);
  return "";
}

}  // namespace zinf::reports::testing
