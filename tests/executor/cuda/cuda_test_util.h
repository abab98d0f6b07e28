// Helpers for the CUDA tests: the device backend under test (the CUDA backend, or - with
// ZINF_CUDA_SELF_CHECK=1 - a second CPU backend, so the comparison harness itself can run
// on machines without a GPU), the CPU reference backend, and "twin" buffers holding the
// same data on both, read back with CopyD2H + synchronisation (device memory is not
// host-addressable on CUDA).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "executor/backend/backend.h"
#include "executor/backend/cpu/cpu_backend.h"
#include "executor/backend/cuda/cuda_backend.h"

namespace zinf::cudatest {

inline bool SelfCheck() {
  const char* v = std::getenv("ZINF_CUDA_SELF_CHECK");
  return v != nullptr && std::string(v) == "1";
}

// The backend under test; capacity in bytes.
inline std::unique_ptr<Backend> DeviceBackend(size_t capacity = size_t{256} << 20) {
  if (SelfCheck()) {
    auto r = MakeCpuBackend(capacity, 2);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(r).value() : nullptr;
  }
  CudaBackendOptions o;
  o.capacity_bytes = capacity;
  auto r = MakeCudaBackend(o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : nullptr;
}

inline std::unique_ptr<Backend> CpuReference(size_t capacity = size_t{256} << 20) {
  auto r = MakeCpuBackend(capacity, 2);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return std::move(r).value();
}

template <typename T>
std::vector<T> Download(Backend* be, const void* dev, size_t n) {
  std::vector<T> h(n);
  Status st = be->CopyD2H(h.data(), dev, n * sizeof(T));
  EXPECT_TRUE(st.ok()) << st.ToString();
  be->Synchronize(be->ComputeStream());
  Status all = be->SynchronizeAll();
  EXPECT_TRUE(all.ok()) << all.ToString();
  return h;
}

template <typename T>
DeviceBuffer Upload(Backend* be, const std::vector<T>& h) {
  auto r = be->AllocBuffer(h.size() * sizeof(T) + 4);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  DeviceBuffer b = std::move(r).value();
  if (!h.empty()) {
    Status st = be->CopyH2D(b.data(), h.data(), h.size() * sizeof(T));
    EXPECT_TRUE(st.ok()) << st.ToString();
  }
  be->Synchronize(be->ComputeStream());
  return b;
}

// The same n Ts on the reference (cpu) and the device backend.
template <typename T>
struct Twin {
  Backend* ref;
  Backend* dev;
  size_t n;
  DeviceBuffer r, d;
  Twin(Backend* ref_be, Backend* dev_be, const std::vector<T>& init)
      : ref(ref_be), dev(dev_be), n(init.size()), r(Upload(ref_be, init)), d(Upload(dev_be, init)) {}
  T* R() const { return r.as<T>(); }
  T* D() const { return d.as<T>(); }
  std::vector<T> GetR() const { return Download<T>(ref, r.data(), n); }
  std::vector<T> GetD() const { return Download<T>(dev, d.data(), n); }
};

inline std::vector<float> RandomVec(size_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

inline std::vector<int32_t> RandomTokens(size_t n, int vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int32_t> d(0, vocab - 1);
  std::vector<int32_t> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// |got - want| <= atol + rtol * |want| element-wise (only where mask is true, if given);
// reports the number of failures and the worst one.
inline ::testing::AssertionResult Close(const std::vector<float>& want,
                                        const std::vector<float>& got, double rtol, double atol,
                                        const std::vector<bool>* mask = nullptr) {
  if (want.size() != got.size()) {
    return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  }
  size_t bad = 0, worst = 0;
  double worst_excess = -1;
  for (size_t i = 0; i < want.size(); ++i) {
    if (mask != nullptr && !(*mask)[i]) continue;
    const double w = want[i], g = got[i];
    if (std::isnan(w) && std::isnan(g)) continue;
    const double lim = atol + rtol * std::abs(w);
    const double err = std::abs(g - w);
    if (!(err <= lim)) {
      ++bad;
      const double excess = std::isnan(err) ? 1e300 : err / lim;
      if (excess > worst_excess) {
        worst_excess = excess;
        worst = i;
      }
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " of " << want.size() << " elements differ; worst at " << worst << ": want "
         << want[worst] << " got " << got[worst] << " (rtol " << rtol << ", atol " << atol << ")";
}

inline double MaxAbs(const std::vector<float>& v) {
  double m = 0;
  for (float x : v) m = std::max(m, static_cast<double>(std::abs(x)));
  return m;
}

}  // namespace zinf::cudatest
