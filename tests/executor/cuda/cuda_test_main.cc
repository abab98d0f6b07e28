// main() of the gpu-suite binaries: exit 77 (meson: SKIP) without a usable CUDA device,
// unless ZINF_CUDA_SELF_CHECK=1 (the device backend is then a second CPU backend).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "executor/backend/cuda/cuda_backend.h"
#include "tests/executor/cuda/cuda_test_util.h"

int main(int argc, char** argv) {
  if (!zinf::cudatest::SelfCheck()) {
    std::string why;
    if (!zinf::CudaDeviceAvailable(&why)) {
      std::printf("no CUDA device (%s): skipping\n", why.c_str());
      return 77;
    }
  } else {
    std::printf("ZINF_CUDA_SELF_CHECK=1: device backend = a second CPU backend\n");
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
