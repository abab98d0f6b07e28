#include "executor/comm/nccl_comm.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include <chrono>
#include <thread>

#include "executor/backend/cuda/cuda_backend.h"
#include "executor/comm/mpi_session.h"

#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#include <mpi.h>

namespace zinf {
namespace {

Status CudaErr(cudaError_t e, std::string_view what) {
  return Internal(fmt::format("nccl comm: {}: {}: {}", what, cudaGetErrorName(e), cudaGetErrorString(e)));
}
Status NcclErr(ncclResult_t r, std::string_view what, ncclComm_t comm) {
  std::string last = comm != nullptr ? ncclGetLastError(comm) : "";
  return Internal(fmt::format("nccl comm: {}: {}{}{}", what, ncclGetErrorString(r),
                              last.empty() ? "" : ": ", last));
}

#define NCCL_COMM_CUDA(call)                              \
  do {                                                    \
    cudaError_t e_ = (call);                              \
    if (e_ != cudaSuccess) return CudaErr(e_, #call);     \
  } while (0)

}  // namespace

struct NcclComm::Impl {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  float* barrier_buf = nullptr;  // 1 float on the device
  bool aborted = false;
  ~Impl() {
    if (stream != nullptr) (void)cudaStreamSynchronize(stream);
    if (comm != nullptr) {
      if (aborted) {
        (void)ncclCommAbort(comm);
      } else {
        (void)ncclCommDestroy(comm);
      }
    }
    if (barrier_buf != nullptr) (void)cudaFree(barrier_buf);
    if (stream != nullptr) (void)cudaStreamDestroy(stream);
  }
};

Result<std::unique_ptr<NcclComm>> NcclComm::Create(const NcclCommOptions& o) {
  int rank = 0, size = 1;
  ncclUniqueId id;
  {
    std::lock_guard<std::mutex> lock(MpiMutex());
    int init = 0;
    MPI_Initialized(&init);
    if (!init) return InvalidArgument("nccl comm: MPI is not initialised (create an MpiSession first)");
    if (int rc = MPI_Comm_rank(MPI_COMM_WORLD, &rank); rc != MPI_SUCCESS) return MpiError(rc, "MPI_Comm_rank");
    if (int rc = MPI_Comm_size(MPI_COMM_WORLD, &size); rc != MPI_SUCCESS) return MpiError(rc, "MPI_Comm_size");
  }
  int count = 0;
  NCCL_COMM_CUDA(cudaGetDeviceCount(&count));
  if (count <= 0) return Unsupported("nccl comm: no CUDA device");
  const int device = o.device >= 0 ? o.device : CudaLocalDevice(count);
  NCCL_COMM_CUDA(cudaSetDevice(device));
  if (rank == 0) {
    if (ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess) return NcclErr(r, "ncclGetUniqueId", nullptr);
  }
  {
    std::lock_guard<std::mutex> lock(MpiMutex());
    if (int rc = MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD); rc != MPI_SUCCESS) {
      return MpiError(rc, "MPI_Bcast(ncclUniqueId)");
    }
  }
  auto impl = std::make_unique<Impl>();
  NCCL_COMM_CUDA(cudaStreamCreateWithFlags(&impl->stream, cudaStreamNonBlocking));
  NCCL_COMM_CUDA(cudaMalloc(&impl->barrier_buf, sizeof(float)));
  if (ncclResult_t r = ncclCommInitRank(&impl->comm, size, id, rank); r != ncclSuccess) {
    impl->comm = nullptr;
    return NcclErr(r, fmt::format("ncclCommInitRank(rank {} of {}, device {})", rank, size, device), nullptr);
  }
  return std::unique_ptr<NcclComm>(new NcclComm(std::move(impl), rank, size, device, o));
}

NcclComm::NcclComm(std::unique_ptr<Impl> impl, int rank, int size, int device, const CommOptions& o)
    : Comm(o), impl_(std::move(impl)), rank_(rank), size_(size), device_(device) {}

NcclComm::~NcclComm() {
  StopWorker();
  (void)cudaSetDevice(device_);
  impl_.reset();
}

Status NcclComm::Execute(const CollArgs& a) {
  // The comm thread's current device (per host thread in CUDA).
  if (cudaError_t e = cudaSetDevice(device_); e != cudaSuccess) return CudaErr(e, "cudaSetDevice");
  const ncclDataType_t t = a.dtype == CommDType::kF32 ? ncclFloat32 : ncclUint8;
  ncclComm_t c = impl_->comm;
  cudaStream_t s = impl_->stream;
  ncclResult_t r = ncclSuccess;
  switch (a.op) {
    case CollOp::kAllGather: r = ncclAllGather(a.send, a.recv, a.count, t, c, s); break;
    case CollOp::kReduceScatter: r = ncclReduceScatter(a.send, a.recv, a.count, t, ncclSum, c, s); break;
    case CollOp::kAllReduce: r = ncclAllReduce(a.recv, a.recv, a.count, t, ncclSum, c, s); break;
    case CollOp::kBroadcast: r = ncclBroadcast(a.recv, a.recv, a.count, t, a.root, c, s); break;
    case CollOp::kBarrier: r = ncclAllReduce(impl_->barrier_buf, impl_->barrier_buf, 1, ncclFloat32, ncclSum, c, s); break;
  }
  if (r != ncclSuccess) {
    return NcclErr(r, fmt::format("{} on rank {} (count {})", CollOpName(a.op), rank_, a.count), c);
  }
  // Poll to completion or the deadline.
  const auto start = std::chrono::steady_clock::now();
  for (int spins = 0;; ++spins) {
    const cudaError_t q = cudaStreamQuery(s);
    if (q == cudaSuccess) return Status::Ok();
    if (q != cudaErrorNotReady) return CudaErr(q, fmt::format("{} on rank {}", CollOpName(a.op), rank_));
    ncclResult_t async = ncclSuccess;
    (void)ncclCommGetAsyncError(c, &async);
    if (async != ncclSuccess && async != ncclInProgress) {
      impl_->aborted = true;
      (void)ncclCommAbort(c);
      impl_->comm = nullptr;
      return Aborted(fmt::format("{} on rank {}: NCCL asynchronous error: {}; communicator aborted",
                                 CollOpName(a.op), rank_, ncclGetErrorString(async)));
    }
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (a.timeout_s > 0 && waited > a.timeout_s) {
      impl_->aborted = true;
      (void)ncclCommAbort(c);  // unblocks the kernels still waiting for peers
      impl_->comm = nullptr;
      return Aborted(fmt::format("{} on rank {} of {}: no completion after {:.1f} s (a peer died, hung or "
                                 "skipped the call); communicator aborted (ncclCommAbort)",
                                 CollOpName(a.op), rank_, size_, waited));
    }
    if (spins < 1000) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

}  // namespace zinf
