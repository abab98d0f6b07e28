#include "executor/backend/cpu/cpu_backend.h"

#include <fmt/format.h>

#include <Eigen/Core>
#include <malloc.h>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "executor/backend/arena.h"
#include "executor/backend/cpu/cpu_stream.h"
#include "executor/backend/cpu/kernels.h"

namespace zinf {
namespace {

using cpu::CpuEvent;
using cpu::CpuStream;

class CpuBackend final : public Backend {
 public:
  CpuBackend(char* base, size_t capacity, int threads)
      : base_(base), arena_(capacity, kDefaultDeviceAlignment, "cpu device arena"),
        threads_(threads), compute_("compute", /*inline_stream=*/true) {
    Eigen::setNbThreads(threads);
  }
  ~CpuBackend() override {
    streams_.clear();  // drain and join workers before the memory goes
    std::free(base_);
  }

  std::string_view name() const override { return "cpu"; }
  int threads() const override { return threads_; }

  Result<void*> Alloc(size_t bytes, size_t alignment) override {
    ZINF_ASSIGN_OR_RETURN(size_t off, arena_.Alloc(bytes, alignment));
    return static_cast<void*>(base_ + off);
  }
  Status Free(void* ptr) override {
    if (ptr == nullptr) return Status::Ok();
    if (!IsDevicePointer(ptr, 0)) {
      return InvalidArgument(fmt::format("cpu device arena: free of non-device pointer {}", ptr));
    }
    return arena_.Free(static_cast<size_t>(static_cast<char*>(ptr) - base_));
  }
  ArenaStats Stats() const override { return arena_.Stats(); }
  void ResetPeak() override { arena_.ResetPeak(); }
  bool IsDevicePointer(const void* ptr, size_t bytes) const override {
    const char* p = static_cast<const char*>(ptr);
    return p >= base_ && p <= base_ + arena_.capacity() &&
           bytes <= static_cast<size_t>(base_ + arena_.capacity() - p);
  }

  Stream* ComputeStream() override { return &compute_; }
  Result<Stream*> CreateStream(std::string_view name) override {
    std::lock_guard<std::mutex> lock(mu_);
    streams_.push_back(std::make_unique<CpuStream>(std::string(name), false));
    return static_cast<Stream*>(streams_.back().get());
  }
  Result<std::unique_ptr<Event>> CreateEvent() override {
    return std::unique_ptr<Event>(std::make_unique<CpuEvent>());
  }
  void Record(Event* ev, Stream* s) override { S(s)->Record(static_cast<CpuEvent*>(ev)); }
  void Wait(Stream* s, Event* ev) override { S(s)->Wait(static_cast<CpuEvent*>(ev)); }
  void Synchronize(Event* ev) override {
    auto& st = static_cast<CpuEvent*>(ev)->state();
    uint64_t gen;
    {
      std::lock_guard<std::mutex> lock(st->mu);
      gen = st->recorded;
    }
    st->WaitFor(gen);
  }
  bool Query(Event* ev) override {
    auto& st = static_cast<CpuEvent*>(ev)->state();
    std::lock_guard<std::mutex> lock(st->mu);
    return st->completed >= st->recorded;
  }
  void Synchronize(Stream* s) override { S(s)->Synchronize(); }
  Status SynchronizeAll() override {
    std::vector<CpuStream*> all;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& s : streams_) all.push_back(s.get());
    }
    for (CpuStream* s : all) s->Synchronize();
    return Status::Ok();
  }
  void Enqueue(Stream* s, std::function<void()> fn) override { S(s)->Enqueue(std::move(fn)); }

  Status CopyH2D(void* dst, const void* src, size_t bytes, Stream* s) override {
    ZINF_RETURN_IF_ERROR(CheckDevice(dst, bytes, "CopyH2D dst"));
    return Copy(dst, src, bytes, s);
  }
  Status CopyD2H(void* dst, const void* src, size_t bytes, Stream* s) override {
    ZINF_RETURN_IF_ERROR(CheckDevice(src, bytes, "CopyD2H src"));
    return Copy(dst, src, bytes, s);
  }
  Status CopyD2D(void* dst, const void* src, size_t bytes, Stream* s) override {
    ZINF_RETURN_IF_ERROR(CheckDevice(dst, bytes, "CopyD2D dst"));
    ZINF_RETURN_IF_ERROR(CheckDevice(src, bytes, "CopyD2D src"));
    return Copy(dst, src, bytes, s);
  }
  Status Memset(void* dst, int value, size_t bytes, Stream* s) override {
    ZINF_RETURN_IF_ERROR(CheckDevice(dst, bytes, "Memset dst"));
    if (bytes == 0) return Status::Ok();
    S(s)->Enqueue([dst, value, bytes] { std::memset(dst, value, bytes); });
    return Status::Ok();
  }

  // Kernels run synchronously on the calling thread (the compute stream).
  void Gemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda,
            const float* b, int ldb, float beta, float* c, int ldc) override {
    cpu::Gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  void AddBias(float* y, const float* bias, int rows, int cols, int ld) override {
    cpu::AddBias(y, bias, rows, cols, ld, threads_);
  }
  void BiasInit(float* y, int ld, const float* bias, const float* residual, int ld_res,
                int rows, int cols) override {
    cpu::BiasInit(y, ld, bias, residual, ld_res, rows, cols, threads_);
  }
  void BiasGrad(const float* dy, float* db, int rows, int cols, int ld) override {
    cpu::BiasGrad(dy, db, rows, cols, ld, threads_);
  }
  void Add(const float* a, const float* b, float* out, size_t n) override {
    cpu::Add(a, b, out, n, threads_);
  }
  void Scale(float* x, float s, size_t n) override { cpu::Scale(x, s, n, threads_); }
  void LayerNormFwd(const float* x, const float* g, const float* b, float* y, float* mean,
                    float* rstd, int rows, int cols, float eps) override {
    cpu::LayerNormFwd(x, g, b, y, mean, rstd, rows, cols, eps, threads_);
  }
  void LayerNormBwd(const float* dy, const float* x, const float* g, const float* mean,
                    const float* rstd, float* dx, float* dg, float* db, int rows,
                    int cols) override {
    cpu::LayerNormBwd(dy, x, g, mean, rstd, dx, dg, db, rows, cols, threads_);
  }
  void GeluFwd(const float* x, float* y, size_t n) override { cpu::GeluFwd(x, y, n, threads_); }
  void GeluBwd(const float* dy, const float* x, float* dx, size_t n) override {
    cpu::GeluBwd(dy, x, dx, n, threads_);
  }
  void AttentionFwd(const float* qkv, float* out, float* probs, int B, int T, int C,
                    int H) override {
    cpu::AttentionFwd(qkv, out, probs, B, T, C, H, threads_);
  }
  void AttentionBwd(const float* dout, const float* qkv, const float* probs, float* dqkv,
                    float* ws, int B, int T, int C, int H) override {
    cpu::AttentionBwd(dout, qkv, probs, dqkv, ws, B, T, C, H, threads_);
  }
  size_t AttentionWorkspaceBytes(int B, int T, int C, int H) const override {
    return cpu::AttentionWorkspaceBytes(B, T, C, H, threads_);
  }
  void EmbeddingFwd(const int32_t* tok, const float* wte, const float* wpe, float* out, int B,
                    int T, int C) override {
    cpu::EmbeddingFwd(tok, wte, wpe, out, B, T, C, threads_);
  }
  void EmbeddingBwd(const float* dout, const int32_t* tok, float* dwte, float* dwpe, int B,
                    int T, int C) override {
    cpu::EmbeddingBwd(dout, tok, dwte, dwpe, B, T, C, threads_);
  }
  void CrossEntropyFwd(const float* logits, const int32_t* tgt, float* row_loss, float* mean,
                       int N, int V) override {
    cpu::CrossEntropyFwd(logits, tgt, row_loss, mean, N, V, threads_);
  }
  void CrossEntropyBwd(const float* logits, const int32_t* tgt, float* dlogits, float dloss,
                       int N, int V) override {
    cpu::CrossEntropyBwd(logits, tgt, dlogits, dloss, N, V, threads_);
  }
  void AdamStep(float* p, const float* g, float* m, float* v, size_t n,
                const AdamParams& hp) override {
    cpu::AdamStep(p, g, m, v, n, hp, threads_);
  }
  void CastF32ToBF16(const float* src, uint16_t* dst, size_t n) override {
    cpu::CastF32ToBF16(src, dst, n, threads_);
  }
  void CastBF16ToF32(const uint16_t* src, float* dst, size_t n) override {
    cpu::CastBF16ToF32(src, dst, n, threads_);
  }

 private:
  CpuStream* S(Stream* s) { return s == nullptr ? &compute_ : static_cast<CpuStream*>(s); }
  Status CheckDevice(const void* p, size_t bytes, const char* what) const {
    if (IsDevicePointer(p, bytes)) return Status::Ok();
    return InvalidArgument(fmt::format("cpu backend: {}: [{}, +{} bytes) is not inside the "
                                       "device arena", what, p, bytes));
  }
  Status Copy(void* dst, const void* src, size_t bytes, Stream* s) {
    if (bytes == 0) return Status::Ok();
    S(s)->Enqueue([dst, src, bytes] { std::memcpy(dst, src, bytes); });
    return Status::Ok();
  }

  char* base_;
  ArenaAllocator arena_;
  const int threads_;
  CpuStream compute_;
  std::mutex mu_;
  std::vector<std::unique_ptr<CpuStream>> streams_;
};

// Eigen's GEMM allocates its packing buffers on every call. glibc serves blocks over its mmap
// threshold with mmap and gives them back with munmap; the threshold starts at 128 KiB and only
// rises when the process frees such a block, so a process holding its buffers (a trainer, a
// probe) could fault every call's buffers in afresh, each call, for good: a 1024 x 128 -> 384
// forward ran at 40% of its rate that way. A fixed threshold of 32 MiB (glibc's largest) and a
// trim threshold that keeps freed heap for reuse make every call reuse the same pages.
void KeepGemmBuffersMapped() {
  static std::once_flag once;
  std::call_once(once, [] {
    (void)mallopt(M_MMAP_THRESHOLD, 32 << 20);
    (void)mallopt(M_TRIM_THRESHOLD, 256 << 20);
  });
}

}  // namespace

Result<std::unique_ptr<Backend>> MakeCpuBackend(size_t capacity_bytes, int threads) {
  KeepGemmBuffersMapped();
  if (threads <= 0) {
    threads = static_cast<int>(std::thread::hardware_concurrency());
    if (threads <= 0) threads = 1;
  }
  constexpr size_t kPage = 4096;
  const size_t alloc_bytes = ((capacity_bytes + kPage - 1) / kPage) * kPage;
  void* base = std::aligned_alloc(kPage, alloc_bytes == 0 ? kPage : alloc_bytes);
  if (base == nullptr) {
    return OutOfMemory(fmt::format("cpu backend: cannot reserve a {} byte arena on the host",
                                   capacity_bytes));
  }
  return std::unique_ptr<Backend>(
      std::make_unique<CpuBackend>(static_cast<char*>(base), capacity_bytes, threads));
}

}  // namespace zinf
