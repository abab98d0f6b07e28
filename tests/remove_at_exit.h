// RemoveAtExit(path): deletes a file or directory tree when the test process exits, so a test
// binary leaves nothing behind in the temporary directory (its per-process corpora, swap and
// checkpoint directories). Failures to delete are ignored.
#pragma once

#include <filesystem>
#include <mutex>
#include <string>
#include <system_error>
#include <vector>

namespace zinf::testing {

inline void RemoveAtExit(const std::string& path) {
  struct Registry {
    std::mutex mu;
    std::vector<std::string> paths;
    ~Registry() {
      for (const std::string& p : paths) {
        std::error_code ec;
        std::filesystem::remove_all(p, ec);
      }
    }
  };
  static Registry r;
  std::lock_guard<std::mutex> l(r.mu);
  r.paths.push_back(path);
}

}  // namespace zinf::testing
