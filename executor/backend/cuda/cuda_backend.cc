// CudaBackend: arena (one cudaMalloc + ArenaAllocator), cudaStreams / cudaEvents, async
// copies, host callbacks, and the kernels (cuBLAS GEMM + kernels.h launchers).
#include "executor/backend/cuda/cuda_backend.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <mutex>
#include <vector>

#include "executor/backend/arena.h"
#include "executor/backend/cuda/cuda_check.h"
#include "executor/backend/cuda/cuda_gemm.h"
#include "executor/backend/cuda/kernels.h"

namespace zinf {
namespace {

using cuda::CudaStatus;

class CudaStream final : public Stream {
 public:
  CudaStream(std::string name, cudaStream_t s) : name_(std::move(name)), s_(s) {}
  ~CudaStream() override {
    (void)cudaStreamSynchronize(s_);
    (void)cudaStreamDestroy(s_);
  }
  std::string_view name() const override { return name_; }
  cudaStream_t get() const { return s_; }

 private:
  std::string name_;
  cudaStream_t s_;
};

class CudaEvent final : public Event {
 public:
  explicit CudaEvent(cudaEvent_t e) : e_(e) {}
  // Safe while pending: CUDA releases the event when its work completes.
  ~CudaEvent() override { (void)cudaEventDestroy(e_); }
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_;
};

void HostFnTrampoline(void* p) {
  auto* fn = static_cast<std::function<void()>*>(p);
  (*fn)();
  delete fn;
}

class CudaBackendImpl final : public CudaBackend {
 public:
  CudaBackendImpl(int device, char* base, size_t capacity, const CudaBackendOptions& o)
      : device_(device), base_(base), arena_(capacity, kDefaultDeviceAlignment, "cuda device arena"),
        threads_(o.threads > 0 ? o.threads : 1), precision_(o.gemm_precision) {}

  Status Init() {
    cudaStream_t s = nullptr;
    ZINF_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    compute_ = std::make_unique<CudaStream>("compute", s);
    ZINF_ASSIGN_OR_RETURN(gemm_, cuda::CublasGemm::Create(s));
    return Status::Ok();
  }

  ~CudaBackendImpl() override {
    EnsureDevice();
    (void)cudaDeviceSynchronize();
    gemm_.reset();
    streams_.clear();
    compute_.reset();
    (void)cudaFree(base_);
  }

  std::string_view name() const override { return "cuda"; }
  int threads() const override { return threads_; }
  int device() const override { return device_; }
  GemmPrecision gemm_precision() const override { return precision_.load(); }
  void set_gemm_precision(GemmPrecision p) override { precision_ = p; }
  void* NativeStream(Stream* s) override { return static_cast<void*>(S(s)); }

  // ---------------------------------------------------------------- arena
  Result<void*> Alloc(size_t bytes, size_t alignment) override {
    ZINF_ASSIGN_OR_RETURN(size_t off, arena_.Alloc(bytes, alignment));
    return static_cast<void*>(base_ + off);
  }
  Status Free(void* ptr) override {
    if (ptr == nullptr) return Status::Ok();
    if (!IsDevicePointer(ptr, 0)) {
      return InvalidArgument(fmt::format("cuda device arena: free of non-device pointer {}", ptr));
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

  // ------------------------------------------------------ streams / events
  Stream* ComputeStream() override { return compute_.get(); }
  Result<Stream*> CreateStream(std::string_view name) override {
    EnsureDevice();
    cudaStream_t s = nullptr;
    ZINF_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::lock_guard<std::mutex> lock(mu_);
    streams_.push_back(std::make_unique<CudaStream>(std::string(name), s));
    return static_cast<Stream*>(streams_.back().get());
  }
  Result<std::unique_ptr<Event>> CreateEvent() override {
    EnsureDevice();
    cudaEvent_t e = nullptr;
    ZINF_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return std::unique_ptr<Event>(std::make_unique<CudaEvent>(e));
  }
  void Record(Event* ev, Stream* s) override {
    EnsureDevice();
    Note(cudaEventRecord(E(ev), S(s)), "cudaEventRecord");
  }
  void Wait(Stream* s, Event* ev) override {
    EnsureDevice();
    Note(cudaStreamWaitEvent(S(s), E(ev), 0), "cudaStreamWaitEvent");
  }
  void Synchronize(Event* ev) override {
    EnsureDevice();
    Note(cudaEventSynchronize(E(ev)), "cudaEventSynchronize");
  }
  bool Query(Event* ev) override {
    EnsureDevice();
    const cudaError_t e = cudaEventQuery(E(ev));
    if (e == cudaErrorNotReady) return false;
    Note(e, "cudaEventQuery");
    return true;  // completed, or failed (the error is reported by SynchronizeAll)
  }
  void Synchronize(Stream* s) override {
    EnsureDevice();
    Note(cudaStreamSynchronize(S(s)), "cudaStreamSynchronize");
  }
  Status SynchronizeAll() override {
    EnsureDevice();
    std::vector<cudaStream_t> all{compute_->get()};
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& s : streams_) all.push_back(s->get());
    }
    for (cudaStream_t s : all) Note(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    Note(cudaGetLastError(), "asynchronous CUDA error");
    std::lock_guard<std::mutex> lock(err_mu_);
    return first_error_;
  }
  void Enqueue(Stream* s, std::function<void()> fn) override {
    EnsureDevice();
    auto* heap = new std::function<void()>(std::move(fn));
    const cudaError_t e = cudaLaunchHostFunc(S(s), HostFnTrampoline, heap);
    if (e != cudaSuccess) delete heap;
    Note(e, "cudaLaunchHostFunc");
  }

  // ---------------------------------------------------------------- copies
  Status CopyH2D(void* dst, const void* src, size_t bytes, Stream* s) override {
    ZINF_RETURN_IF_ERROR(CheckDevice(dst, bytes, "CopyH2D dst"));
    return Copy(dst, src, bytes, cudaMemcpyHostToDevice, s);
  }
  Status CopyD2H(void* dst, const void* src, size_t bytes, Stream* s) override {
    ZINF_RETURN_IF_ERROR(CheckDevice(src, bytes, "CopyD2H src"));
    return Copy(dst, src, bytes, cudaMemcpyDeviceToHost, s);
  }
  Status CopyD2D(void* dst, const void* src, size_t bytes, Stream* s) override {
    ZINF_RETURN_IF_ERROR(CheckDevice(dst, bytes, "CopyD2D dst"));
    ZINF_RETURN_IF_ERROR(CheckDevice(src, bytes, "CopyD2D src"));
    return Copy(dst, src, bytes, cudaMemcpyDeviceToDevice, s);
  }
  Status Memset(void* dst, int value, size_t bytes, Stream* s) override {
    ZINF_RETURN_IF_ERROR(CheckDevice(dst, bytes, "Memset dst"));
    if (bytes == 0) return Status::Ok();
    EnsureDevice();
    ZINF_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(dst, value, bytes, S(s)));
    return Status::Ok();
  }

  // --------------------------------------------------------------- kernels
  void Gemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda,
            const float* b, int ldb, float beta, float* c, int ldc) override {
    EnsureDevice();
    NoteStatus(gemm_->Run(precision_.load(), ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
  }
  void AddBias(float* y, const float* bias, int rows, int cols, int ld) override {
    K(cuda::AddBias(y, bias, rows, cols, ld, Cs()), "AddBias");
  }
  void BiasInit(float* y, int ld, const float* bias, const float* residual, int ld_res,
                int rows, int cols) override {
    K(cuda::BiasInit(y, ld, bias, residual, ld_res, rows, cols, Cs()), "BiasInit");
  }
  void BiasGrad(const float* dy, float* db, int rows, int cols, int ld) override {
    K(cuda::BiasGrad(dy, db, rows, cols, ld, Cs()), "BiasGrad");
  }
  void Add(const float* a, const float* b, float* out, size_t n) override {
    K(cuda::Add(a, b, out, n, Cs()), "Add");
  }
  void Scale(float* x, float s, size_t n) override { K(cuda::Scale(x, s, n, Cs()), "Scale"); }
  void LayerNormFwd(const float* x, const float* g, const float* b, float* y, float* mean,
                    float* rstd, int rows, int cols, float eps) override {
    K(cuda::LayerNormFwd(x, g, b, y, mean, rstd, rows, cols, eps, Cs()), "LayerNormFwd");
  }
  void LayerNormBwd(const float* dy, const float* x, const float* g, const float* mean,
                    const float* rstd, float* dx, float* dg, float* db, int rows,
                    int cols) override {
    K(cuda::LayerNormBwd(dy, x, g, mean, rstd, dx, dg, db, rows, cols, Cs()), "LayerNormBwd");
  }
  void GeluFwd(const float* x, float* y, size_t n) override {
    K(cuda::GeluFwd(x, y, n, Cs()), "GeluFwd");
  }
  void GeluBwd(const float* dy, const float* x, float* dx, size_t n) override {
    K(cuda::GeluBwd(dy, x, dx, n, Cs()), "GeluBwd");
  }
  void AttentionFwd(const float* qkv, float* out, float* probs, int B, int T, int C,
                    int H) override {
    K(cuda::AttentionFwd(qkv, out, probs, B, T, C, H, Cs()), "AttentionFwd");
  }
  void AttentionBwd(const float* dout, const float* qkv, const float* probs, float* dqkv,
                    float* ws, int B, int T, int C, int H) override {
    K(cuda::AttentionBwd(dout, qkv, probs, dqkv, ws, B, T, C, H, Cs()), "AttentionBwd");
  }
  size_t AttentionWorkspaceBytes(int B, int T, int C, int H) const override {
    return cuda::AttentionWorkspaceBytes(B, T, C, H);
  }
  void EmbeddingFwd(const int32_t* tok, const float* wte, const float* wpe, float* out, int B,
                    int T, int C) override {
    K(cuda::EmbeddingFwd(tok, wte, wpe, out, B, T, C, Cs()), "EmbeddingFwd");
  }
  void EmbeddingBwd(const float* dout, const int32_t* tok, float* dwte, float* dwpe, int B,
                    int T, int C) override {
    K(cuda::EmbeddingBwd(dout, tok, dwte, dwpe, B, T, C, Cs()), "EmbeddingBwd");
  }
  void CrossEntropyFwd(const float* logits, const int32_t* tgt, float* row_loss, float* mean,
                       int N, int V) override {
    K(cuda::CrossEntropyFwd(logits, tgt, row_loss, mean, N, V, Cs()), "CrossEntropyFwd");
  }
  void CrossEntropyBwd(const float* logits, const int32_t* tgt, float* dlogits, float dloss,
                       int N, int V) override {
    K(cuda::CrossEntropyBwd(logits, tgt, dlogits, dloss, N, V, Cs()), "CrossEntropyBwd");
  }
  void AdamStep(float* p, const float* g, float* m, float* v, size_t n,
                const AdamParams& hp) override {
    // Bias corrections exactly as the CPU reference computes them (double pow).
    const double t = static_cast<double>(hp.step < 1 ? 1 : hp.step);
    const float bc1 = static_cast<float>(1.0 / (1.0 - std::pow(double{hp.beta1}, t)));
    const float bc2 = static_cast<float>(1.0 / (1.0 - std::pow(double{hp.beta2}, t)));
    const float decay = 1.0f - hp.lr * hp.weight_decay;
    K(cuda::AdamStep(p, g, m, v, n, hp.lr, hp.beta1, hp.beta2, hp.eps, decay, hp.grad_scale,
                     bc1, bc2, Cs()),
      "AdamStep");
  }
  void CastF32ToBF16(const float* src, uint16_t* dst, size_t n) override {
    K(cuda::CastF32ToBF16(src, dst, n, Cs()), "CastF32ToBF16");
  }
  void CastBF16ToF32(const uint16_t* src, float* dst, size_t n) override {
    K(cuda::CastBF16ToF32(src, dst, n, Cs()), "CastBF16ToF32");
  }
  void CastF32ToF16(const float* src, uint16_t* dst, size_t n) override {
    K(cuda::CastF32ToF16(src, dst, n, Cs()), "CastF32ToF16");
  }
  void CastF16ToF32(const uint16_t* src, float* dst, size_t n) override {
    K(cuda::CastF16ToF32(src, dst, n, Cs()), "CastF16ToF32");
  }
  void CheckNonFinite(const float* x, size_t n, int32_t* flag) override {
    K(cuda::CheckNonFinite(x, n, flag, Cs()), "CheckNonFinite");
  }

 private:
  // CUDA's current device is per host thread: every entry point that talks to CUDA makes
  // this backend's device current on the calling thread first.
  void EnsureDevice() const {
    int cur = -1;
    if (cudaGetDevice(&cur) != cudaSuccess || cur != device_) (void)cudaSetDevice(device_);
  }
  cudaStream_t S(Stream* s) const {
    return s == nullptr ? compute_->get() : static_cast<CudaStream*>(s)->get();
  }
  cudaStream_t Cs() const {
    EnsureDevice();
    return compute_->get();
  }
  static cudaEvent_t E(Event* ev) { return static_cast<CudaEvent*>(ev)->get(); }
  void Note(cudaError_t e, const char* what) {
    if (e != cudaSuccess) NoteStatus(CudaStatus(e, what, __FILE__, __LINE__));
  }
  void K(cudaError_t e, const char* kernel) {
    if (e != cudaSuccess) NoteStatus(CudaStatus(e, fmt::format("kernel {}", kernel), __FILE__, __LINE__));
  }
  void NoteStatus(Status st) {
    if (st.ok()) return;
    std::lock_guard<std::mutex> lock(err_mu_);
    if (first_error_.ok()) first_error_ = std::move(st).WithContext("cuda backend");
  }
  Status CheckDevice(const void* p, size_t bytes, const char* what) const {
    if (IsDevicePointer(p, bytes)) return Status::Ok();
    return InvalidArgument(fmt::format("cuda backend: {}: [{}, +{} bytes) is not inside the "
                                       "device arena", what, p, bytes));
  }
  Status Copy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, Stream* s) {
    if (bytes == 0) return Status::Ok();
    EnsureDevice();
    ZINF_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, src, bytes, kind, S(s)));
    return Status::Ok();
  }

  const int device_;
  char* base_;
  ArenaAllocator arena_;
  const int threads_;
  std::atomic<GemmPrecision> precision_;
  std::unique_ptr<CudaStream> compute_;
  std::unique_ptr<cuda::CublasGemm> gemm_;
  std::mutex mu_;
  std::vector<std::unique_ptr<CudaStream>> streams_;
  std::mutex err_mu_;
  Status first_error_;
};

Result<int> PickDevice(int requested) {
  int count = 0;
  ZINF_CUDA_RETURN_IF_ERROR(cudaGetDeviceCount(&count));
  if (count <= 0) return Unsupported("cuda backend: no CUDA device");
  const int dev = requested >= 0 ? requested : CudaLocalDevice(count);
  if (dev >= count) {
    return InvalidArgument(fmt::format("cuda backend: device {} requested, {} present", dev, count));
  }
  return dev;
}

}  // namespace

bool CudaDeviceAvailable(std::string* why) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e == cudaSuccess && count <= 0) {
    if (why != nullptr) *why = "cudaGetDeviceCount: 0 devices";
    return false;
  }
  if (e == cudaSuccess) {
    e = cudaSetDevice(CudaLocalDevice(count));
    if (e == cudaSuccess) e = cudaFree(nullptr);  // creates the context: device usable?
  }
  if (e != cudaSuccess) {
    if (why != nullptr) *why = fmt::format("{}: {}", cudaGetErrorName(e), cudaGetErrorString(e));
    (void)cudaGetLastError();
    return false;
  }
  if (why != nullptr) why->clear();
  return true;
}

Result<std::unique_ptr<Backend>> MakeCudaBackend(const CudaBackendOptions& o) {
  ZINF_ASSIGN_OR_RETURN(int dev, PickDevice(o.device));
  ZINF_CUDA_RETURN_IF_ERROR(cudaSetDevice(dev));
  void* base = nullptr;
  const size_t bytes = o.capacity_bytes == 0 ? kDefaultDeviceAlignment : o.capacity_bytes;
  const cudaError_t e = cudaMalloc(&base, bytes);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    size_t free_b = 0, total_b = 0;
    (void)cudaMemGetInfo(&free_b, &total_b);
    return OutOfMemory(fmt::format("cuda backend: cannot reserve a {} byte device arena on device "
                                   "{} ({} free of {}): {}", o.capacity_bytes, dev, free_b,
                                   total_b, cudaGetErrorString(e)));
  }
  auto be = std::make_unique<CudaBackendImpl>(dev, static_cast<char*>(base), o.capacity_bytes, o);
  ZINF_RETURN_IF_ERROR(be->Init());
  return std::unique_ptr<Backend>(std::move(be));
}

}  // namespace zinf
