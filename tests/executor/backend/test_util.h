// Helpers for backend tests: a CPU backend, device vectors readable on the host
// (CPU backend memory is host memory), deterministic random fills.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "executor/backend/backend.h"
#include "executor/backend/cpu/cpu_backend.h"

namespace zinf::testing {

inline std::unique_ptr<Backend> TestBackend(size_t capacity = size_t{64} << 20, int threads = 2) {
  auto r = MakeCpuBackend(capacity, threads);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return std::move(r).value();
}

// A device allocation of n Ts with host access (CPU backend only).
template <typename T>
class DevVec {
 public:
  DevVec(Backend* be, size_t n) : n_(n) {
    auto r = be->AllocBuffer(n * sizeof(T) + 1);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    buf_ = std::move(r).value();
  }
  T* data() const { return buf_.as<T>(); }
  size_t size() const { return n_; }
  T& operator[](size_t i) const { return data()[i]; }
  void Set(const std::vector<T>& v) { std::copy(v.begin(), v.end(), data()); }
  std::vector<T> Get() const { return std::vector<T>(data(), data() + n_); }

 private:
  size_t n_;
  DeviceBuffer buf_;
};

inline std::vector<float> RandomVec(size_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

}  // namespace zinf::testing
