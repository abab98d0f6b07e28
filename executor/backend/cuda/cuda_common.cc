// Parts of the CUDA backend API that need no CUDA (compiled in every build).
#include <cstdlib>
#include <string>

#include "executor/backend/cuda/cuda_backend.h"

namespace zinf {

const char* GemmPrecisionName(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::kFp32: return "fp32";
    case GemmPrecision::kTf32: return "tf32";
    case GemmPrecision::kBf16: return "bf16";
  }
  return "?";
}

Result<GemmPrecision> ParseGemmPrecision(const std::string& s) {
  if (s == "fp32") return GemmPrecision::kFp32;
  if (s == "tf32") return GemmPrecision::kTf32;
  if (s == "bf16") return GemmPrecision::kBf16;
  return InvalidArgument("gemm precision '" + s + "' (allowed: fp32, tf32, bf16)");
}

int CudaLocalDevice(int count) {
  int local = 0;
  for (const char* var : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0') {
      local = std::atoi(v);
      break;
    }
  }
  if (local < 0) local = 0;
  return count > 0 ? local % count : 0;
}

}  // namespace zinf
