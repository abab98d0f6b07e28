// zinf::Backend: a small ggml-backend-style device interface.
//
// A backend owns
//   * a device ARENA of fixed capacity (the plan's device budget). Every device
//     allocation comes from it; exceeding it fails with OutOfMemory exactly like a
//     GPU would (the message names requested / used / capacity / largest free block).
//     Current and peak bytes are tracked.
//   * STREAMS (in-order queues) and EVENTS (Record on a stream, Wait on another
//     stream, Synchronize on the host), CUDA semantics: Wait/Synchronize refer to
//     the most recent Record at the time of the call; waiting on a never-recorded
//     event returns at once.
//   * async COPIES host<->device / device<->device on a stream. The host buffer
//     must stay alive (and unmodified for H2D) until the copy completes.
//   * KERNELS (fp32, row-major). Kernels are issued on the COMPUTE stream
//     (ComputeStream()). On the CPU backend the compute stream is the calling host
//     thread: kernels, copies and Wait() on it run synchronously and return when
//     done. On a GPU backend they are asynchronous on its compute stream. Code that
//     reads device memory on the host must copy it (CopyD2H) and synchronize, so it
//     is correct on both.
//
// Conventions for kernels: all pointers are device pointers (inside the arena),
// matrices are row-major with an explicit leading dimension (elements between
// rows). Backward kernels ACCUMULATE (+=) into parameter gradients; whether input
// gradients are overwritten or accumulated is stated per kernel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

namespace zinf {

class Backend;

inline constexpr size_t kDefaultDeviceAlignment = 256;

// Move-only owner of one arena allocation; frees on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(Backend* backend, void* ptr, size_t bytes)
      : backend_(backend), ptr_(ptr), bytes_(bytes) {}
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  ~DeviceBuffer() { reset(); }

  void reset();  // frees now
  void* data() const { return ptr_; }
  template <typename T>
  T* as() const { return static_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }
  explicit operator bool() const { return ptr_ != nullptr; }

 private:
  Backend* backend_ = nullptr;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

struct ArenaStats {
  size_t capacity_bytes = 0;
  size_t used_bytes = 0;           // currently allocated (after alignment rounding)
  size_t peak_bytes = 0;           // max used_bytes since creation / ResetPeak()
  size_t largest_free_bytes = 0;   // biggest contiguous free block
  size_t free_blocks = 0;          // number of free blocks (fragmentation indicator)
  size_t live_allocations = 0;
};

// Opaque in-order work queue. Owned by the backend.
class Stream {
 public:
  virtual ~Stream() = default;
  virtual std::string_view name() const = 0;
};

// Opaque event. Owned by the caller (unique_ptr from CreateEvent()).
class Event {
 public:
  virtual ~Event() = default;
};

// Adam / AdamW hyper-parameters. step >= 1 (bias correction uses beta^step).
struct AdamParams {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;  // decoupled (AdamW): p -= lr * wd * p
  float grad_scale = 1.0f;    // grads are multiplied by this first (unscale / clip)
  int64_t step = 1;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;  // "cpu", "cuda"
  virtual int threads() const = 0;            // host threads the kernels use

  // ---------------------------------------------------------------- arena
  // alignment: a power of two; sizes are rounded up to kDefaultDeviceAlignment.
  // Alloc(0) returns a valid unique pointer to a minimal block.
  virtual Result<void*> Alloc(size_t bytes, size_t alignment = kDefaultDeviceAlignment) = 0;
  // Frees a pointer returned by Alloc; nullptr is a no-op. Freeing an unknown
  // pointer is a bug (InvalidArgument).
  virtual Status Free(void* ptr) = 0;
  virtual ArenaStats Stats() const = 0;
  virtual void ResetPeak() = 0;
  // True if [ptr, ptr+bytes) lies inside the arena.
  virtual bool IsDevicePointer(const void* ptr, size_t bytes = 0) const = 0;

  size_t Capacity() const { return Stats().capacity_bytes; }
  size_t Used() const { return Stats().used_bytes; }
  size_t Peak() const { return Stats().peak_bytes; }
  Result<DeviceBuffer> AllocBuffer(size_t bytes, size_t alignment = kDefaultDeviceAlignment);

  // ------------------------------------------------------ streams / events
  virtual Stream* ComputeStream() = 0;
  // A new stream owned by the backend (lives until the backend is destroyed).
  virtual Result<Stream*> CreateStream(std::string_view name) = 0;
  virtual Result<std::unique_ptr<Event>> CreateEvent() = 0;
  // Events must belong to this backend and outlive nothing in particular: pending
  // work keeps the event's state alive.
  virtual void Record(Event* event, Stream* stream) = 0;
  virtual void Wait(Stream* stream, Event* event) = 0;  // stream waits for event
  virtual void Synchronize(Event* event) = 0;           // host waits for event
  virtual bool Query(Event* event) = 0;                 // completed?
  virtual void Synchronize(Stream* stream) = 0;         // host waits for stream
  virtual Status SynchronizeAll() = 0;                  // every stream; reports async errors
  // Runs fn on the stream in order (cudaLaunchHostFunc). fn must not block on
  // work enqueued later on the same stream.
  virtual void Enqueue(Stream* stream, std::function<void()> fn) = 0;

  // ---------------------------------------------------------------- copies
  // stream == nullptr means ComputeStream(). Device ranges are validated.
  virtual Status CopyH2D(void* dst_dev, const void* src_host, size_t bytes, Stream* stream = nullptr) = 0;
  virtual Status CopyD2H(void* dst_host, const void* src_dev, size_t bytes, Stream* stream = nullptr) = 0;
  virtual Status CopyD2D(void* dst_dev, const void* src_dev, size_t bytes, Stream* stream = nullptr) = 0;
  virtual Status Memset(void* dst_dev, int byte_value, size_t bytes, Stream* stream = nullptr) = 0;

  // --------------------------------------------------------------- kernels
  // C[m,n] = alpha * op(A)[m,k] * op(B)[k,n] + beta * C. op(X) = X^T if trans.
  // A is stored m x k (lda) or, transposed, k x m; likewise B. beta == 0 ignores
  // C's old contents (NaN-safe).
  virtual void Gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                    const float* a, int lda, const float* b, int ldb, float beta,
                    float* c, int ldc) = 0;
  // y[r, :] += bias (rows x cols, leading dimension ld).
  virtual void AddBias(float* y, const float* bias, int rows, int cols, int ld) = 0;
  // y[r, c] = bias[c] + (residual ? residual[r * ld_res + c] : 0): initialises a
  // linear's output before Gemm(beta = 1), fusing bias and residual add.
  // residual may alias y (same ld).
  virtual void BiasInit(float* y, int ld, const float* bias, const float* residual, int ld_res,
                        int rows, int cols) = 0;
  // dbias[c] += sum_r dy[r, c].
  virtual void BiasGrad(const float* dy, float* dbias, int rows, int cols, int ld) = 0;
  // out = a + b (n elements); out may alias a or b.
  virtual void Add(const float* a, const float* b, float* out, size_t n) = 0;
  // x *= s.
  virtual void Scale(float* x, float s, size_t n) = 0;

  // y = (x - mean) * rstd * gamma + beta per row; stores mean[rows], rstd[rows].
  virtual void LayerNormFwd(const float* x, const float* gamma, const float* beta, float* y,
                            float* mean, float* rstd, int rows, int cols, float eps) = 0;
  // dx += ...; dgamma += ...; dbeta += ...
  virtual void LayerNormBwd(const float* dy, const float* x, const float* gamma,
                            const float* mean, const float* rstd, float* dx, float* dgamma,
                            float* dbeta, int rows, int cols) = 0;

  // GELU, tanh approximation. y may alias x; dx = dy * gelu'(x) (overwrite), dx may alias dy.
  virtual void GeluFwd(const float* x, float* y, size_t n) = 0;
  virtual void GeluBwd(const float* dy, const float* x, float* dx, size_t n) = 0;

  // Causal multi-head self-attention. qkv: [B, T, 3C] (q | k | v, head h at
  // columns h*C/H), out: [B, T, C], probs: [B, H, T, T] softmax probabilities
  // saved for backward (only the causal part j <= i is defined; the rest is
  // unspecified and may be left untouched).
  virtual void AttentionFwd(const float* qkv, float* out, float* probs, int B, int T, int C,
                            int H) = 0;
  // dqkv = d(out)/d(qkv) (overwrite). workspace: AttentionWorkspaceBytes() bytes.
  virtual void AttentionBwd(const float* dout, const float* qkv, const float* probs,
                            float* dqkv, float* workspace, int B, int T, int C, int H) = 0;
  virtual size_t AttentionWorkspaceBytes(int B, int T, int C, int H) const = 0;

  // out[b,t,:] = wte[tokens[b,t], :] + wpe[t, :]. tokens: device int32 [B*T].
  virtual void EmbeddingFwd(const int32_t* tokens, const float* wte, const float* wpe,
                            float* out, int B, int T, int C) = 0;
  // dwte[tokens] += dout; dwpe[t] += sum_b dout[b, t].
  virtual void EmbeddingBwd(const float* dout, const int32_t* tokens, float* dwte, float* dwpe,
                            int B, int T, int C) = 0;

  // Softmax cross-entropy over rows of logits [N, V]; targets: device int32 in
  // [0, V). row_loss[N] per-row losses, *mean_loss their mean (device scalar).
  virtual void CrossEntropyFwd(const float* logits, const int32_t* targets, float* row_loss,
                               float* mean_loss, int N, int V) = 0;
  // dlogits = dloss * (softmax(logits) - onehot(target)) / N (overwrite);
  // dlogits may alias logits (in place).
  virtual void CrossEntropyBwd(const float* logits, const int32_t* targets, float* dlogits,
                               float dloss, int N, int V) = 0;

  // One Adam(W) step over a flat span (fp32 master params, m, v).
  virtual void AdamStep(float* param, const float* grad, float* m, float* v, size_t n,
                        const AdamParams& hp) = 0;

  // fp32 <-> bf16 (bf16 stored as uint16_t bits), round-to-nearest-even; NaN stays NaN.
  virtual void CastF32ToBF16(const float* src, uint16_t* dst, size_t n) = 0;
  virtual void CastBF16ToF32(const uint16_t* src, float* dst, size_t n) = 0;
};

}  // namespace zinf
