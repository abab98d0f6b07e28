// YamlOut: a small block-style YAML writer for zinf's own files (stable key order,
// comments, nested maps and flow lists), so written files are readable and diff well.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zinf {

class YamlOut {
 public:
  void Comment(const std::string& text);
  void Key(const std::string& key, const std::string& value);
  void Key(const std::string& key, const char* value) { Key(key, std::string(value)); }
  void Key(const std::string& key, double value);
  void Key(const std::string& key, int64_t value);
  void Key(const std::string& key, int value) { Key(key, static_cast<int64_t>(value)); }
  void Key(const std::string& key, bool value);
  void Key(const std::string& key, const std::vector<double>& values);  // flow list
  void Begin(const std::string& key);  // nested mapping
  void End();
  // Items of a list of mappings: BeginList(key); for each: Item(); ...Key()...; EndList().
  void BeginList(const std::string& key);
  void Item();
  void EndList();
  const std::string& str() const { return out_; }

  static std::string Quote(const std::string& s);  // YAML double-quoted when needed
  static std::string Number(double v);              // shortest round-trip form

 private:
  void Line(const std::string& key, const std::string& value);
  std::string out_;
  int indent_ = 0;
  bool item_pending_ = false;
};

}  // namespace zinf
