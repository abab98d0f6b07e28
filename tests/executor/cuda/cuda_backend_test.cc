// The device backend's Backend contract: arena (capacity, OOM, bad frees), copies and their
// validation, stream / event ordering, host callbacks, error reporting; plus the CUDA-only
// pieces (pinned host pool, host registration, native streams, precision parsing).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <numeric>
#include <thread>
#include <vector>

#include "tests/executor/cuda/cuda_test_util.h"
#ifdef ZINF_HAVE_CUDA
#include "executor/backend/cuda/cuda_pinned_pool.h"
#endif

namespace zinf {
namespace {

using namespace std::chrono_literals;

// Host memory for asynchronous copies: page-locked on the CUDA backend (a pageable
// cudaMemcpyAsync may synchronise with its stream, which would deadlock tests that gate
// a stream on a host callback), plain heap memory on the CPU backend.
class HostBuf {
 public:
  HostBuf(Backend* be, size_t bytes) {
#ifdef ZINF_HAVE_CUDA
    if (AsCuda(be) != nullptr) {
      pool_ = std::move(CudaPinnedHostPool::Create(bytes)).value();
      p_ = std::move(pool_->Alloc(bytes)).value();
      return;
    }
#endif
    heap_.resize(bytes);
    p_ = heap_.data();
  }
  template <typename T>
  T* as() const { return static_cast<T*>(p_); }

 private:
#ifdef ZINF_HAVE_CUDA
  std::unique_ptr<CudaPinnedHostPool> pool_;
#endif
  std::vector<char> heap_;
  void* p_ = nullptr;
};

TEST(DeviceArena, CapacityOomAndFrees) {
  auto be = cudatest::DeviceBackend(size_t{1} << 20);
  ASSERT_NE(be, nullptr);
  EXPECT_EQ(be->Capacity(), size_t{1} << 20);
  auto a = be->Alloc(512 << 10);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_TRUE(be->IsDevicePointer(*a, 512 << 10));
  auto b = be->Alloc(600 << 10);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), Code::kOutOfMemory) << b.status().ToString();
  auto z1 = be->Alloc(0), z2 = be->Alloc(0);
  ASSERT_TRUE(z1.ok() && z2.ok());
  EXPECT_NE(*z1, *z2);
  EXPECT_GE(be->Peak(), size_t{512} << 10);
  int host = 0;
  EXPECT_EQ(be->Free(&host).code(), Code::kInvalidArgument);
  EXPECT_TRUE(be->Free(nullptr).ok());
  EXPECT_TRUE(be->Free(*a).ok());
  EXPECT_EQ(be->Free(*a).code(), Code::kInvalidArgument) << "double free";
  EXPECT_TRUE(be->Free(*z1).ok());
  EXPECT_TRUE(be->Free(*z2).ok());
  EXPECT_EQ(be->Used(), 0u);
  auto whole = be->Alloc(size_t{1} << 20);  // everything coalesced again
  EXPECT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_TRUE(be->Free(*whole).ok());
  EXPECT_TRUE(be->SynchronizeAll().ok());
}

TEST(DeviceCopies, RoundTripAndValidation) {
  auto be = cudatest::DeviceBackend(size_t{8} << 20);
  ASSERT_NE(be, nullptr);
  const size_t n = 300001;
  std::vector<float> src = cudatest::RandomVec(n, 1);
  DeviceBuffer d1 = std::move(be->AllocBuffer(n * 4)).value();
  DeviceBuffer d2 = std::move(be->AllocBuffer(n * 4)).value();
  ASSERT_TRUE(be->CopyH2D(d1.data(), src.data(), n * 4).ok());
  ASSERT_TRUE(be->CopyD2D(d2.data(), d1.data(), n * 4).ok());
  ASSERT_TRUE(be->Memset(d1.data(), 0, n * 4).ok());
  auto back = cudatest::Download<float>(be.get(), d2.data(), n);
  EXPECT_EQ(std::memcmp(back.data(), src.data(), n * 4), 0);
  auto zeros = cudatest::Download<float>(be.get(), d1.data(), n);
  EXPECT_EQ(std::count(zeros.begin(), zeros.end(), 0.0f), static_cast<long>(n));
  // Byte-granular memset on a side stream.
  Stream* s = *be->CreateStream("side");
  ASSERT_TRUE(be->Memset(static_cast<char*>(d1.data()) + 3, 0x7f, 5, s).ok());
  be->Synchronize(s);
  auto bytes = cudatest::Download<uint8_t>(be.get(), d1.data(), 16);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(bytes[i], (i >= 3 && i < 8) ? 0x7f : 0) << i;
  // Ranges outside the arena are rejected before anything is enqueued.
  std::vector<float> host(16);
  EXPECT_EQ(be->CopyH2D(host.data(), src.data(), 16).code(), Code::kInvalidArgument);
  EXPECT_EQ(be->CopyD2H(host.data(), host.data(), 16).code(), Code::kInvalidArgument);
  EXPECT_EQ(be->CopyD2D(d1.data(), host.data(), 16).code(), Code::kInvalidArgument);
  EXPECT_EQ(be->Memset(d1.data(), 0, (size_t{8} << 20) + 1).code(), Code::kInvalidArgument);
  EXPECT_TRUE(be->CopyH2D(d1.data(), src.data(), 0).ok());
  EXPECT_TRUE(be->SynchronizeAll().ok());
}

TEST(DeviceStreams, HostCallbacksRunInOrder) {
  auto be = cudatest::DeviceBackend(size_t{1} << 20);
  ASSERT_NE(be, nullptr);
  Stream* s = *be->CreateStream("cb");
  std::mutex mu;
  std::vector<int> order;
  for (int i = 0; i < 100; ++i) {
    be->Enqueue(s, [&, i] {
      std::lock_guard<std::mutex> lock(mu);
      order.push_back(i);
    });
  }
  be->Synchronize(s);
  std::vector<int> want(100);
  std::iota(want.begin(), want.end(), 0);
  EXPECT_EQ(order, want);
  int x = 0;
  be->Enqueue(be->ComputeStream(), [&] { x = 7; });
  be->Synchronize(be->ComputeStream());
  EXPECT_EQ(x, 7);
  EXPECT_TRUE(be->SynchronizeAll().ok());
}

// s1 is held by a host callback; s1: H2D -> record; s2: wait -> D2H -> record. Nothing on s2
// may run before the gate opens, and the D2H must see the H2D's data.
TEST(DeviceStreams, EventsOrderCopiesAcrossStreams) {
  auto be = cudatest::DeviceBackend(size_t{16} << 20);
  ASSERT_NE(be, nullptr);
  Stream* s1 = *be->CreateStream("h2d");
  Stream* s2 = *be->CreateStream("d2h");
  const size_t n = size_t{1} << 20;
  HostBuf src(be.get(), n * 4), dst(be.get(), n * 4);
  for (size_t i = 0; i < n; ++i) src.as<float>()[i] = static_cast<float>(i) * 0.5f;
  std::memset(dst.as<void>(), 0, n * 4);
  DeviceBuffer d = std::move(be->AllocBuffer(n * 4)).value();
  ASSERT_TRUE(be->Memset(d.data(), 0, n * 4).ok());
  be->Synchronize(be->ComputeStream());
  auto ev1 = std::move(be->CreateEvent()).value();
  auto ev2 = std::move(be->CreateEvent()).value();
  std::atomic<bool> go{false};
  std::atomic<bool> d2h_ran_early{false};
  be->Enqueue(s1, [&] {
    while (!go.load()) std::this_thread::sleep_for(1ms);
  });
  ASSERT_TRUE(be->CopyH2D(d.data(), src.as<void>(), n * 4, s1).ok());
  be->Record(ev1.get(), s1);
  be->Wait(s2, ev1.get());
  be->Enqueue(s2, [&] { d2h_ran_early = !go.load(); });
  ASSERT_TRUE(be->CopyD2H(dst.as<void>(), d.data(), n * 4, s2).ok());
  be->Record(ev2.get(), s2);
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(be->Query(ev1.get()));
  EXPECT_FALSE(be->Query(ev2.get()));
  go = true;
  be->Synchronize(ev2.get());
  EXPECT_TRUE(be->Query(ev2.get()));
  EXPECT_TRUE(be->Query(ev1.get()));
  EXPECT_FALSE(d2h_ran_early.load());
  EXPECT_EQ(std::memcmp(dst.as<void>(), src.as<void>(), n * 4), 0);
  EXPECT_TRUE(be->SynchronizeAll().ok());
}

TEST(DeviceStreams, NeverRecordedEventIsComplete) {
  auto be = cudatest::DeviceBackend(size_t{1} << 20);
  ASSERT_NE(be, nullptr);
  auto ev = std::move(be->CreateEvent()).value();
  EXPECT_TRUE(be->Query(ev.get()));
  be->Wait(be->ComputeStream(), ev.get());
  be->Synchronize(ev.get());
  // An event can be destroyed while its work is pending.
  Stream* s = *be->CreateStream("pending");
  std::atomic<bool> go{false};
  be->Enqueue(s, [&] {
    while (!go.load()) std::this_thread::sleep_for(1ms);
  });
  {
    auto tmp = std::move(be->CreateEvent()).value();
    be->Record(tmp.get(), s);
  }
  go = true;
  be->Synchronize(s);
  EXPECT_TRUE(be->SynchronizeAll().ok());
}

TEST(DeviceKernels, KernelsOrderAfterCopiesOnComputeStream) {
  // H2D, kernel, D2H all on the compute stream with no explicit synchronisation between.
  auto be = cudatest::DeviceBackend(size_t{8} << 20);
  ASSERT_NE(be, nullptr);
  const size_t n = 1 << 18;
  HostBuf h(be.get(), n * 4), out(be.get(), n * 4);
  for (size_t i = 0; i < n; ++i) h.as<float>()[i] = static_cast<float>(i % 1000);
  DeviceBuffer d = std::move(be->AllocBuffer(n * 4)).value();
  ASSERT_TRUE(be->CopyH2D(d.data(), h.as<void>(), n * 4).ok());
  be->Scale(d.as<float>(), 2.0f, n);
  be->Add(d.as<float>(), d.as<float>(), d.as<float>(), n);
  ASSERT_TRUE(be->CopyD2H(out.as<void>(), d.data(), n * 4).ok());
  be->Synchronize(be->ComputeStream());
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(out.as<float>()[i], 4.0f * static_cast<float>(i % 1000)) << i;
  EXPECT_TRUE(be->SynchronizeAll().ok());
}

#ifdef ZINF_HAVE_CUDA

TEST(CudaOnly, ErrorsReportedBySynchronizeAll) {
  if (cudatest::SelfCheck()) GTEST_SKIP();
  auto be = cudatest::DeviceBackend(size_t{1} << 20);
  ASSERT_NE(be, nullptr);
  DeviceBuffer a = std::move(be->AllocBuffer(4096)).value();
  // lda < k for a non-transposed row-major A is invalid: cuBLAS rejects it.
  be->Gemm(false, false, 8, 8, 8, 1.0f, a.as<float>(), 2, a.as<float>(), 8, 0.0f, a.as<float>(), 8);
  Status st = be->SynchronizeAll();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("CUBLAS_STATUS_INVALID_VALUE"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("cuda backend"), std::string::npos) << st.ToString();
}

TEST(CudaOnly, HugeArenaIsOutOfMemory) {
  if (cudatest::SelfCheck()) GTEST_SKIP();
  CudaBackendOptions o;
  o.capacity_bytes = size_t{1} << 50;  // 1 PiB
  auto r = MakeCudaBackend(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kOutOfMemory) << r.status().ToString();
  // The failed attempt leaves CUDA usable.
  auto ok = cudatest::DeviceBackend(size_t{1} << 20);
  ASSERT_NE(ok, nullptr);
  EXPECT_TRUE(ok->SynchronizeAll().ok());
}

TEST(CudaOnly, NativeStreamsAndPrecision) {
  if (cudatest::SelfCheck()) GTEST_SKIP();
  auto be = cudatest::DeviceBackend(size_t{1} << 20);
  CudaBackend* cu = AsCuda(be.get());
  ASSERT_NE(cu, nullptr);
  EXPECT_EQ(be->name(), "cuda");
  Stream* s = *be->CreateStream("x");
  EXPECT_NE(cu->NativeStream(nullptr), nullptr);
  EXPECT_EQ(cu->NativeStream(nullptr), cu->NativeStream(be->ComputeStream()));
  EXPECT_NE(cu->NativeStream(s), cu->NativeStream(nullptr));
  EXPECT_EQ(cu->gemm_precision(), GemmPrecision::kFp32);
  EXPECT_GE(cu->device(), 0);
}

TEST(CudaOnly, PinnedHostPool) {
  if (cudatest::SelfCheck()) GTEST_SKIP();
  auto pool_r = CudaPinnedHostPool::Create(size_t{1} << 20);
  ASSERT_TRUE(pool_r.ok()) << pool_r.status().ToString();
  auto pool = std::move(pool_r).value();
  EXPECT_TRUE(pool->locked());
  auto b = pool->AllocBuffer(5000);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->bytes(), 8192u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b->data()) % 4096, 0u);
  EXPECT_TRUE(pool->Contains(b->data(), 8192));
  EXPECT_EQ(pool->Alloc(size_t{2} << 20).status().code(), Code::kOutOfMemory);
  int x;
  EXPECT_EQ(pool->Free(&x).code(), Code::kInvalidArgument);
  EXPECT_EQ(pool->used_bytes(), 8192u);
  b->reset();
  EXPECT_EQ(pool->used_bytes(), 0u);
  EXPECT_EQ(pool->num_allocations(), 0u);
}

TEST(CudaOnly, HostRegistration) {
  if (cudatest::SelfCheck()) GTEST_SKIP();
  auto be = cudatest::DeviceBackend(size_t{4} << 20);
  ASSERT_NE(be, nullptr);
  const size_t bytes = size_t{1} << 20;
  void* host = std::aligned_alloc(4096, bytes);
  ASSERT_NE(host, nullptr);
  {
    auto reg = CudaHostRegistration::Register(host, bytes);
    ASSERT_TRUE(reg.ok()) << reg.status().ToString();
    std::memset(host, 0x5a, bytes);
    DeviceBuffer d = std::move(be->AllocBuffer(bytes)).value();
    Stream* s = *be->CreateStream("reg");
    ASSERT_TRUE(be->CopyH2D(d.data(), host, bytes, s).ok());
    be->Synchronize(s);
    auto back = cudatest::Download<uint8_t>(be.get(), d.data(), bytes);
    EXPECT_EQ(std::count(back.begin(), back.end(), 0x5a), static_cast<long>(bytes));
  }
  std::free(host);
}

TEST(CudaOnly, ParsePrecision) {
  EXPECT_EQ(*ParseGemmPrecision("bf16"), GemmPrecision::kBf16);
  EXPECT_EQ(*ParseGemmPrecision("tf32"), GemmPrecision::kTf32);
  EXPECT_EQ(std::string(GemmPrecisionName(GemmPrecision::kFp32)), "fp32");
  EXPECT_EQ(ParseGemmPrecision("fp8").status().code(), Code::kInvalidArgument);
}

// Informational: GEMM rate per precision and pinned copy bandwidth (printed, not asserted
// beyond sanity), so a GPU session gets the numbers the planner's CUDA probes will need.
TEST(CudaOnly, Rates) {
  if (cudatest::SelfCheck()) GTEST_SKIP();
  const int n = 4096;
  const size_t bytes = size_t{n} * n * 4;
  auto be = cudatest::DeviceBackend(3 * bytes + (size_t{64} << 20));
  CudaBackend* cu = AsCuda(be.get());
  ASSERT_NE(cu, nullptr);
  DeviceBuffer a = std::move(be->AllocBuffer(bytes)).value(), b = std::move(be->AllocBuffer(bytes)).value(),
               c = std::move(be->AllocBuffer(bytes)).value();
  ASSERT_TRUE(be->Memset(a.data(), 0, bytes).ok());
  ASSERT_TRUE(be->Memset(b.data(), 0, bytes).ok());
  auto ev0 = std::move(be->CreateEvent()).value();
  for (GemmPrecision p : {GemmPrecision::kFp32, GemmPrecision::kTf32, GemmPrecision::kBf16}) {
    cu->set_gemm_precision(p);
    be->Gemm(false, false, n, n, n, 1.0f, a.as<float>(), n, b.as<float>(), n, 0.0f, c.as<float>(), n);
    be->Synchronize(be->ComputeStream());
    const int reps = 10;
    auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r)
      be->Gemm(false, false, n, n, n, 1.0f, a.as<float>(), n, b.as<float>(), n, 0.0f, c.as<float>(), n);
    be->Synchronize(be->ComputeStream());
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double tflops = 2.0 * n * n * double{n} * reps / dt / 1e12;
    std::printf("[rate] gemm %s %d^3: %.1f TFLOP/s\n", GemmPrecisionName(p), n, tflops);
    EXPECT_GT(tflops, 0.1);
  }
  ASSERT_TRUE(be->SynchronizeAll().ok());
  auto pool = std::move(CudaPinnedHostPool::Create(bytes)).value();
  void* h = std::move(pool->Alloc(bytes)).value();
  std::memset(h, 1, bytes);
  Stream* s = *be->CreateStream("copy");
  for (int dir = 0; dir < 2; ++dir) {
    auto t0 = std::chrono::steady_clock::now();
    const int reps = 5;
    for (int r = 0; r < reps; ++r) {
      Status st = dir == 0 ? be->CopyH2D(a.data(), h, bytes, s) : be->CopyD2H(h, a.data(), bytes, s);
      ASSERT_TRUE(st.ok()) << st.ToString();
    }
    be->Synchronize(s);
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("[rate] pinned %s %zu MiB: %.1f GB/s\n", dir == 0 ? "h2d" : "d2h", bytes >> 20,
                bytes * double{reps} / dt / 1e9);
  }
  (void)ev0;
  EXPECT_TRUE(be->SynchronizeAll().ok());
}

#endif  // ZINF_HAVE_CUDA

}  // namespace
}  // namespace zinf
