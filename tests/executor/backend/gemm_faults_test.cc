// The CPU backend's GEMM must not fault in fresh pages on every call. Eigen allocates its
// packing buffers per call; glibc serves blocks over its mmap threshold (128 KiB until the
// process frees such a block) with mmap and returns them with munmap, so in a process that
// has freed nothing big yet every call faulted its buffers in again: a 1024 x 128 -> 384
// forward ran at 40% of its rate for as long as the process lived (docs/performance-model.md,
// 2026-12-06). Its own binary: the first GEMMs of a fresh process are the case.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <vector>

#include "executor/backend/cpu/cpu_backend.h"

namespace zinf {
namespace {

long MinorFaults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

#if defined(__SANITIZE_ADDRESS__)
#define ZINF_GLIBC_MALLOC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ZINF_GLIBC_MALLOC 0
#endif
#endif
#ifndef ZINF_GLIBC_MALLOC
#define ZINF_GLIBC_MALLOC 1
#endif

TEST(CpuGemm, CallsDoNotFaultInFreshPagesEachTime) {
  // AddressSanitizer replaces malloc (and maps its shadow as it goes): glibc's thresholds,
  // what this test checks, are not in play there.
  if (!ZINF_GLIBC_MALLOC) GTEST_SKIP() << "AddressSanitizer's allocator, not glibc's";
  auto be = MakeCpuBackend(1 << 20, 2);
  ASSERT_TRUE(be.ok()) << be.status().ToString();
  const int M = 1024, K = 128, N = 384;
  // Live operands, as a trainer holds them: nothing big is freed before the GEMMs run.
  std::vector<float> x(static_cast<size_t>(M) * K, 0.01f), w(static_cast<size_t>(N) * K, 0.02f),
      y(static_cast<size_t>(M) * N, 0.f);
  for (int i = 0; i < 3; ++i) (*be)->Gemm(false, true, M, N, K, 1.f, x.data(), K, w.data(), K, 1.f, y.data(), N);
  constexpr int kCalls = 40;
  const long before = MinorFaults();
  for (int i = 0; i < kCalls; ++i) (*be)->Gemm(false, true, M, N, K, 1.f, x.data(), K, w.data(), K, 1.f, y.data(), N);
  const long per_call = (MinorFaults() - before) / kCalls;
  // Faulting the packing buffers in costs tens of pages a call; reusing them, none.
  EXPECT_LT(per_call, 8) << "minor page faults per GEMM call";
  EXPECT_NEAR(y[0], (3 + kCalls) * K * 0.01 * 0.02, 1e-4);
}

}  // namespace
}  // namespace zinf
