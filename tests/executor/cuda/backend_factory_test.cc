// MakeBackend: cpu always; cuda when built with CUDA and a device is present, else a clear
// error. Unit suite (runs everywhere).
#include "executor/backend/backend_factory.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "executor/backend/cuda/cuda_backend.h"

namespace zinf {
namespace {

TEST(BackendFactory, Cpu) {
  auto r = MakeBackend("cpu", size_t{1} << 20, 1);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->name(), "cpu");
  EXPECT_EQ((*r)->Capacity(), size_t{1} << 20);
  EXPECT_EQ(AsCuda(r->get()), nullptr);
}

TEST(BackendFactory, UnknownKind) {
  auto r = MakeBackend("tpu", 1 << 20, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("cpu, cuda"), std::string::npos) << r.status().ToString();
}

TEST(BackendFactory, Cuda) {
  std::string why;
  const bool have = CudaDeviceAvailable(&why);
  auto r = MakeBackend("cuda", size_t{1} << 20, 1);
  if (!BuiltWithCuda()) {
    EXPECT_FALSE(have);
    EXPECT_EQ(why, "zinf was built without CUDA");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Code::kUnsupported);
    EXPECT_NE(r.status().message().find("built without CUDA"), std::string::npos);
    return;
  }
  if (!have) {
    EXPECT_FALSE(why.empty());
    ASSERT_FALSE(r.ok()) << "no device, yet the cuda backend was created";
    return;
  }
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->name(), "cuda");
  EXPECT_NE(AsCuda(r->get()), nullptr);
}

TEST(BackendFactory, LocalDevice) {
  ::setenv("OMPI_COMM_WORLD_LOCAL_RANK", "5", 1);
  EXPECT_EQ(CudaLocalDevice(4), 1);
  EXPECT_EQ(CudaLocalDevice(8), 5);
  ::unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
  if (std::getenv("MPI_LOCALRANKID") == nullptr && std::getenv("SLURM_LOCALID") == nullptr) {
    EXPECT_EQ(CudaLocalDevice(2), 0);
  }
}

TEST(BackendFactory, GemmPrecisionNames) {
  for (GemmPrecision p : {GemmPrecision::kFp32, GemmPrecision::kTf32, GemmPrecision::kBf16}) {
    auto r = ParseGemmPrecision(GemmPrecisionName(p));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(*r, p);
  }
  EXPECT_FALSE(ParseGemmPrecision("fp16").ok());
}

}  // namespace
}  // namespace zinf
