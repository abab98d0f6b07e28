// Helpers shared by the core tests: the source tree, scratch directories, small files.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace zinf::testing {

// The source tree (for models/, hwprofiles/, tests/core/data/).
inline std::string SourceDir() {
  if (const char* env = std::getenv("ZINF_SOURCE_DIR"); env != nullptr && *env != '\0') return env;
#ifdef ZINF_SOURCE_DIR
  return ZINF_SOURCE_DIR;
#else
  return ".";
#endif
}

inline std::string DataFile(const std::string& name) { return SourceDir() + "/tests/core/data/" + name; }

// *.yaml files of a shipped directory ("models", "hwprofiles"), sorted.
inline std::vector<std::string> ShippedYaml(const std::string& subdir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(SourceDir() + "/" + subdir)) {
    if (e.is_regular_file() && e.path().extension() == ".yaml") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline std::string Stem(const std::string& path) { return std::filesystem::path(path).stem().string(); }

// A fresh directory under the test temp dir, removed when the object goes away.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (std::filesystem::path(::testing::TempDir()) / "zinf-core-XXXXXX").string();
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    char* p = ::mkdtemp(buf.data());
    if (p == nullptr) ADD_FAILURE() << "mkdtemp failed for " << tmpl;
    path_ = p ? p : tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  // Writes `text` to name and returns its path.
  std::string Write(const std::string& name, const std::string& text) const {
    std::string p = File(name);
    std::ofstream out(p, std::ios::binary);
    out << text;
    return p;
  }
  // Names of the entries in the directory, sorted.
  std::vector<std::string> List() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(path_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  std::string path_;
};

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Replaces the first occurrence of `from` in `text` (the test fails if there is none).
inline std::string ReplaceOnce(std::string text, const std::string& from, const std::string& to) {
  size_t pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << "'" << from << "' not found in:\n" << text;
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

}  // namespace zinf::testing
