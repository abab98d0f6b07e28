#include "planner/catalog.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#ifndef ZINF_SOURCE_DIR
#define ZINF_SOURCE_DIR "."
#endif

namespace zinf {
namespace fs = std::filesystem;

std::string DataDir() {
  const char* env = std::getenv("ZINF_DATA_DIR");
  return env && *env ? std::string(env) : std::string(ZINF_SOURCE_DIR);
}

std::vector<std::string> ListCatalog(const std::string& subdir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(DataDir()) / subdir, ec)) {
    if (e.path().extension() == ".yaml") out.push_back(e.path().stem().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

Result<std::string> Resolve(const std::string& v, const std::string& subdir, const char* what) {
  std::error_code ec;
  if (fs::is_regular_file(v, ec)) return v;
  fs::path p = fs::path(DataDir()) / subdir / (v + ".yaml");
  if (fs::is_regular_file(p, ec)) return p.string();
  std::string names;
  for (const auto& n : ListCatalog(subdir)) names += (names.empty() ? "" : ", ") + n;
  return NotFound(fmt::format("{} '{}' is neither a file nor a shipped name; shipped: {}", what, v,
                              names.empty() ? "(none found under " + DataDir() + "/" + subdir + ")" : names));
}

}  // namespace

Result<std::string> ResolveModelPath(const std::string& v) { return Resolve(v, "models", "--model"); }
Result<std::string> ResolveHwPath(const std::string& v) { return Resolve(v, "hwprofiles", "--hw"); }

}  // namespace zinf
