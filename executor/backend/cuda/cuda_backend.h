// The CUDA backend (issue 6). This header compiles WITHOUT the CUDA headers, so any
// code may include it; MakeCudaBackend returns Unsupported when zinf was built without
// CUDA (ZINF_HAVE_CUDA undefined) and CudaDeviceAvailable says why there is no device.
//
//   * Arena: ONE cudaMalloc of exactly capacity_bytes, sub-allocated by ArenaAllocator
//     (same best-fit / coalescing / OOM messages as the CPU backend). No managed memory:
//     device pointers are NOT host-addressable; read them with CopyD2H + Synchronize.
//   * Streams: the compute stream and every CreateStream() stream are non-blocking
//     cudaStreams (H2D / D2H lanes are created by the caller with CreateStream); events
//     are cudaEvents (timing disabled); Enqueue is cudaLaunchHostFunc.
//   * Errors: kernels and Record/Wait return void; launch and async errors are kept (the
//     first one) and reported by SynchronizeAll() as a Status carrying the CUDA error
//     name and string. After a sticky CUDA error the backend is unusable (CUDA context).
//   * Kernels: all issued on the compute stream, asynchronous. GEMM is cuBLAS with a
//     precision mode (below); fp32 GEMMs accumulate in fp32 with fp32 operands.
//   * Determinism: every kernel is deterministic for a fixed shape EXCEPT EmbeddingBwd's
//     dwte (atomicAdd over repeated tokens) and cuBLAS itself when it picks split-K
//     algorithms (cuBLAS is run-to-run deterministic on one GPU model and stream).
//   * Thread-safety: like the CPU backend; the cuBLAS handle is guarded by a mutex.
//
// Not here (see docs/architecture.md "CUDA backend"): bf16/fp16 parameters at the model
// level (mixed-precision training), fused flash attention.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/status.h"
#include "executor/backend/backend.h"

namespace zinf {

enum class GemmPrecision : uint8_t {
  kFp32,  // cublasSgemm, no tensor-core down-conversion (pedantic fp32)
  kTf32,  // cublasGemmEx, CUBLAS_COMPUTE_32F_FAST_TF32 (fp32 in/out, tf32 multiplies)
  kBf16,  // A and B cast to bf16 into a backend workspace, cublasGemmEx bf16 x bf16 ->
          // fp32 with CUBLAS_COMPUTE_32F (fp32 accumulate), fp32 C
};
const char* GemmPrecisionName(GemmPrecision p);  // "fp32", "tf32", "bf16"
// "fp32" | "tf32" | "bf16" -> precision; InvalidArgument otherwise.
Result<GemmPrecision> ParseGemmPrecision(const std::string& s);

struct CudaBackendOptions {
  size_t capacity_bytes = 0;  // the device arena (the plan's device budget)
  // CUDA device ordinal; -1: OMPI_COMM_WORLD_LOCAL_RANK (or MPI_LOCALRANKID,
  // SLURM_LOCALID) modulo the device count, else 0.
  int device = -1;
  GemmPrecision gemm_precision = GemmPrecision::kFp32;
  int threads = 1;  // reported by threads(); host threads are not used by kernels
};

// The CUDA backend with entry points beyond zinf::Backend. Obtain it with
// MakeCudaBackend and dynamic_cast (or keep the CudaBackend* from AsCuda()).
class CudaBackend : public Backend {
 public:
  virtual int device() const = 0;
  virtual GemmPrecision gemm_precision() const = 0;
  virtual void set_gemm_precision(GemmPrecision p) = 0;
  // The cudaStream_t behind a Stream of this backend (nullptr: the compute stream), as
  // void* so this header needs no CUDA headers. For NCCL and interop.
  virtual void* NativeStream(Stream* stream) = 0;

  // fp32 <-> fp16 (IEEE binary16 bits in uint16_t), round-to-nearest-even, saturating to
  // +-inf like __float2half_rn. (bf16 casts are the Backend ones.)
  virtual void CastF32ToF16(const float* src, uint16_t* dst, size_t n) = 0;
  virtual void CastF16ToF32(const uint16_t* src, float* dst, size_t n) = 0;
  // *flag_dev (device int32) is set to 1 if any of x[0, n) is inf or NaN; it is never
  // cleared (Memset it to 0 first). For the fp16 dynamic loss scaler.
  virtual void CheckNonFinite(const float* x, size_t n, int32_t* flag_dev) = 0;
};

// The device the process would use (see CudaBackendOptions::device) and whether CUDA is
// usable: false with *why set ("zinf was built without CUDA", "cudaGetDeviceCount:
// cudaErrorNoDevice: no CUDA-capable device is detected", ...). why may be null.
bool CudaDeviceAvailable(std::string* why);

// Device ordinal from the local-rank environment variables (or 0), modulo `count`.
int CudaLocalDevice(int count);

Result<std::unique_ptr<Backend>> MakeCudaBackend(const CudaBackendOptions& options);

// b as a CudaBackend, or nullptr if it is another backend.
inline CudaBackend* AsCuda(Backend* b) { return dynamic_cast<CudaBackend*>(b); }

}  // namespace zinf
