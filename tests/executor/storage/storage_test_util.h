// Helpers for storage tests: a self-removing temp dir under /tmp, aligned buffers, data.
#pragma once

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>

namespace zinf::testing {

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/zinf-storage-test-XXXXXX";
    char* p = mkdtemp(tmpl);
    path_ = p ? p : "";
  }
  ~TempDir() { RemoveTree(path_); }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  bool ok() const { return !path_.empty(); }

 private:
  static void RemoveTree(const std::string& dir) {
    if (dir.empty()) return;
    if (DIR* d = opendir(dir.c_str())) {
      while (dirent* e = readdir(d)) {
        std::string n = e->d_name;
        if (n == "." || n == "..") continue;
        std::string p = dir + "/" + n;
        struct stat st;
        if (lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
          chmod(p.c_str(), 0700);
          RemoveTree(p);
        } else {
          unlink(p.c_str());
        }
      }
      closedir(d);
    }
    rmdir(dir.c_str());
  }
  std::string path_;
};

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using AlignedBuf = std::unique_ptr<char, FreeDeleter>;

inline AlignedBuf AllocAligned(size_t bytes, size_t align = 4096) {
  size_t n = (bytes + align - 1) / align * align;
  return AlignedBuf(static_cast<char*>(std::aligned_alloc(align, n == 0 ? align : n)));
}

inline void FillRandom(void* p, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto* c = static_cast<unsigned char*>(p);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v = rng();
    std::memcpy(c + i, &v, 8);
  }
  for (; i < n; ++i) c[i] = static_cast<unsigned char>(rng());
}

inline bool FileExists(const std::string& p) { return access(p.c_str(), F_OK) == 0; }

}  // namespace zinf::testing
