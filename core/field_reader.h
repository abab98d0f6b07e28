// FieldReader: typed, validated access to a YAML (or JSON) mapping with errors that name
// the file, the key path and what is allowed. The first error sticks; later reads return
// defaults so callers can read a whole struct and check Finish() once. Finish() also
// rejects keys that were never read (typos), unless the reader was made lenient.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"

namespace zinf {

// Parse a YAML/JSON file. Missing file -> NotFound, syntax error -> InvalidArgument with
// line and column, empty file -> InvalidArgument.
// A directory -> InvalidArgument; control characters (binary files) -> InvalidArgument.
Result<YAML::Node> LoadYamlFile(const std::string& path);
// The same checks and parse for text already in memory; `path` names it in messages.
Result<YAML::Node> ParseYamlText(const std::string& text, const std::string& path);

class FieldReader {
 public:
  FieldReader(YAML::Node node, std::string file, std::string path = "", bool lenient = false);

  bool Has(const std::string& key) const;

  // Numbers: the value must be a number within [min, max].
  double Number(const std::string& key, double min, double max, std::optional<double> def = {});
  int64_t Int(const std::string& key, int64_t min, int64_t max, std::optional<int64_t> def = {});
  bool Bool(const std::string& key, std::optional<bool> def = {});
  std::string String(const std::string& key, std::optional<std::string> def = {});
  // One of `allowed`.
  std::string Enum(const std::string& key, const std::vector<std::string>& allowed,
                   std::optional<std::string> def = {});
  // Accepts a plain number or a string with units ("32GiB", "12 GB/s", "70 TFLOP/s", "175B").
  double Bytes(const std::string& key, double min, double max, std::optional<double> def = {});
  double Bandwidth(const std::string& key, double min, double max, std::optional<double> def = {});
  double Flops(const std::string& key, double min, double max, std::optional<double> def = {});
  double Count(const std::string& key, double min, double max, std::optional<double> def = {});

  // Nested mapping; a missing key with allow_missing gives an empty reader.
  FieldReader Map(const std::string& key, bool allow_missing = false);
  // Sequence of mappings.
  std::vector<FieldReader> MapList(const std::string& key, bool allow_missing = false);
  std::vector<double> NumberList(const std::string& key, double min, double max, bool allow_missing = false);

  // Marks a key as known without reading it (e.g. free-form "provenance").
  void Ignore(const std::string& key);

  void Fail(const std::string& key, const std::string& what);
  bool failed() const { return state_->error.has_value(); }
  // First error, or unknown keys at this level and all children read so far.
  Status Finish();

  const std::string& file() const { return file_; }
  std::string KeyPath(const std::string& key) const;

 private:
  struct State {
    std::optional<Status> error;
  };
  FieldReader(YAML::Node node, std::string file, std::string path, bool lenient,
              std::shared_ptr<State> state);
  YAML::Node Lookup(const std::string& key, bool required, bool has_default);
  template <typename Parse>
  double WithUnits(const std::string& key, double min, double max, std::optional<double> def,
                   const char* kind, Parse parse);
  void CheckRange(const std::string& key, double v, double min, double max);

  YAML::Node node_;
  std::string file_;
  std::string path_;
  bool lenient_;
  std::shared_ptr<State> state_;
  // Shared by copies of this reader, so keys read through any copy count as used.
  struct Level {
    std::set<std::string> used;
    std::vector<FieldReader> children;
  };
  std::shared_ptr<Level> level_ = std::make_shared<Level>();
};

}  // namespace zinf
