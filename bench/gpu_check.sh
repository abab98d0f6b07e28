#!/usr/bin/env bash
# One prepared check of the CUDA / NCCL backend for a GPU session (budget: ~15 minutes of
# device time in all, so every step has its own timeout and a failure does not stop the
# later steps). Logs everything under $OUT (if set) or ./gpu_check_out.
#
#   bash bench/gpu_check.sh            # from the repository root
#   JOBS=16 BUILD=build-gpu bash bench/gpu_check.sh
#   RUN_UNIT=1 bash bench/gpu_check.sh   # also the unit suite (no GPU needed for it)
#
# Expected device time: ~2-4 min build on 16 cores, ~1-2 min tests, ~1-2 min profile.
#
# Steps: 1 nvidia-smi / toolkit versions; 2 meson setup -Dcuda=enabled + ninja; 3 the gpu
# test suite (CUDA kernels vs the CPU reference, Backend contract, pinned pool, NcclComm
# under mpirun 1 and 2 ranks); 4 the kernel test binary once more with its gtest output
# (rates of GEMM / copies are printed by CudaOnly.Rates); 5 zplan profile with
# ZINF_PROFILE_BACKEND=cuda (CPU probes + the CUDA probe); 6 zrun on the CUDA backend - DEPENDS ON zrun CUDA
# SUPPORT, which may not exist yet: skipped with a message when zrun has no --backend.
# Exit status: 0 when the build and the gpu suite passed, 1 otherwise. summary.txt lists
# every step with its exit code.
set -u
cd "$(dirname "$0")/.."
OUT_DIR=${OUT:-$PWD/gpu_check_out}
BUILD=${BUILD:-build-gpu}
JOBS=${JOBS:-16}
mkdir -p "$OUT_DIR"
SUMMARY=$OUT_DIR/summary.txt
: > "$SUMMARY"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PATH=$PATH:/usr/local/cuda/bin

# step NAME TIMEOUT_S CMD...: runs CMD with a timeout, logs to $OUT_DIR/NAME.log.
step() {
  local name=$1 limit=$2
  shift 2
  local t0=$(date +%s)
  echo "=== $name (timeout ${limit}s): $*" | tee -a "$SUMMARY"
  timeout --kill-after=10 "$limit" "$@" > "$OUT_DIR/$name.log" 2>&1
  local rc=$?
  local dt=$(( $(date +%s) - t0 ))
  echo "    rc=$rc (${dt}s)$([ $rc -eq 124 ] && echo ' TIMED OUT')" | tee -a "$SUMMARY"
  tail -n 15 "$OUT_DIR/$name.log" | sed 's/^/    | /'
  return $rc
}

status=0
step 01_nvidia_smi 30 bash -c 'nvidia-smi; nvidia-smi -L; nvidia-smi topo -m; nvcc --version; ls -l /usr/local/cuda/lib*/libnccl* 2>/dev/null'
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
echo "    GPUs: $ngpu" | tee -a "$SUMMARY"

if [ -d "$BUILD" ]; then
  step 02_setup 120 meson setup --reconfigure "$BUILD" -Dcuda=enabled || status=1
else
  step 02_setup 120 meson setup "$BUILD" -Dcuda=enabled || status=1
fi
step 03_build 420 ninja -C "$BUILD" -j "$JOBS" || status=1
# Fail-fast hint: the grep shows the first compiler error in the summary.
grep -m3 -E 'error|FAILED' "$OUT_DIR/03_build.log" | sed 's/^/    ! /' | tee -a "$SUMMARY"

if [ $status -eq 0 ]; then
  step 04_gpu_suite 420 meson test -C "$BUILD" --suite gpu --print-errorlogs --num-processes 1 || status=1
  cp "$BUILD/meson-logs/testlog.txt" "$OUT_DIR/04_gpu_suite_testlog.txt" 2>/dev/null
  if grep -qE '^Ok: +0 *$' "$OUT_DIR/04_gpu_suite.log"; then
    echo "    ! gpu suite ran nothing (every test skipped: no usable device or the driver is older than the CUDA runtime; see 05)" | tee -a "$SUMMARY"
    status=1
  fi
  # The kernel binary alone, verbose, for the per-test lines and the rate report.
  step 05_cuda_backend_test 240 "$BUILD/tests/executor/cuda/cuda_backend_test" --gtest_brief=0
  if [ "${ngpu:-0}" -ge 2 ]; then
    step 06_nccl_np2 120 bash tests/mpi_run.sh 2 "$BUILD/tests/executor/cuda/cuda_nccl_comm_test"
  fi
  # The unit suite with CUDA compiled in: off by default (it needs no GPU; run it on a CPU
  # machine) - RUN_UNIT=1 to include it.
  if [ "${RUN_UNIT:-0}" = 1 ]; then
    step 07_unit_suite 300 meson test -C "$BUILD" --suite unit --num-processes 8 --print-errorlogs
    cp "$BUILD/meson-logs/testlog.txt" "$OUT_DIR/07_unit_suite_testlog.txt" 2>/dev/null
  fi
  ZPLAN=$BUILD/planner/zplan
  if [ -x "$ZPLAN" ]; then
    # ZINF_PROFILE_BACKEND=cuda: the CUDA probe (planner/profile/cuda_probe.cc) overrides
    # the device values (cuBLAS GEMM curve, pinned copies, device memory) after the CPU probes.
    step 08_zplan_profile 240 env ZINF_PROFILE_BACKEND=cuda "$ZPLAN" profile --quick --out "$OUT_DIR/profile.yaml"
  fi
  # --- depends on zrun CUDA support (may not exist yet) ---
  ZRUN=$BUILD/executor/zrun/zrun
  if [ -x "$ZRUN" ] && "$ZRUN" --help 2>&1 | grep -q -- '--backend'; then
    step 09_zplan_plan 120 "$ZPLAN" plan --model tiny --hw "$OUT_DIR/profile.yaml" --out "$OUT_DIR/plan"
    head -c 2000000 README.md > "$OUT_DIR/corpus.txt"
    step 10_zrun_cuda 180 "$ZRUN" --backend cuda --plan "$OUT_DIR/plan/plan.yaml" --data "$OUT_DIR/corpus.txt" \
      --steps 5 --out "$OUT_DIR/zrun_cuda" --allow-backend-mismatch
  else
    echo "=== 10_zrun_cuda: SKIPPED (zrun has no --backend option: zrun CUDA support not implemented yet)" | tee -a "$SUMMARY"
  fi
else
  echo "=== build failed: tests skipped" | tee -a "$SUMMARY"
fi
echo "=== overall: $([ $status -eq 0 ] && echo PASS || echo FAIL); logs in $OUT_DIR" | tee -a "$SUMMARY"
exit $status
