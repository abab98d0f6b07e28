#!/usr/bin/env bash
# Sets up zinf on a fresh Debian machine and runs the main job on the embedded defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
OUT=${OUT:-out/demo}
NVME=${NVME_DIR:-$OUT/nvme}
mkdir -p "$OUT" "$NVME"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
Z=build/planner/zplan R=build/executor/zrun/zrun
echo "== zplan estimate / plan: GPT-3 1.3B on a DGX-2"
$Z estimate --model gpt3-1.3b --hw dgx2-v100
$Z plan --model gpt3-1.3b --hw dgx2-v100 --out "$OUT/gpt3-1.3b"
echo "== zplan profile (quick) of this machine"
$Z profile --quick --nvme-dir "$NVME" --out "$OUT/this-box.yaml"
echo "== zrun: the tiny GPT with params and optimizer states on NVMe, 1 rank then 2 ranks"
cat docs/*.md README.md > "$OUT/corpus.txt"
$Z plan --model tiny --hw "$OUT/this-box.yaml" --micro-batch 8 --device-memory 256MiB \
  --strategy params+opt:nvme --nvme-dir "$NVME" --out "$OUT/tiny-1" --top 3 --calibrate 1
$R --plan "$OUT/tiny-1/plan.yaml" --data "$OUT/corpus.txt" --steps 20 --out "$OUT/run-1"
# Two ranks run cores / 2 threads each (zrun's default): profile the compute that way too, as
# bench/validate.py does (one thread's GEMM rate is not half of two threads').
T=$(( $(nproc) / 2 > 1 ? $(nproc) / 2 : 1 ))
$Z profile --quick --threads "$T" --nvme-dir "$NVME" --out "$OUT/this-box-t$T.yaml"
$Z plan --model tiny --hw "$OUT/this-box-t$T.yaml" --gpus-per-node 2 --micro-batch 4 --device-memory 256MiB \
  --strategy params+opt:nvme --nvme-dir "$NVME" --out "$OUT/tiny-2" --top 3
mpirun -np 2 --oversubscribe $R --plan "$OUT/tiny-2/plan.yaml" --data "$OUT/corpus.txt" --steps 20 --out "$OUT/run-2"
echo "demo: reports in $OUT/gpt3-1.3b/report.html, $OUT/run-1/report.html, $OUT/run-2/report.html"
