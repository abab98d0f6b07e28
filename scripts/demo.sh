#!/usr/bin/env bash
# Sets up zinf on a fresh Debian machine and runs the main job on the embedded defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
OUT=${OUT:-out/demo}
mkdir -p "$OUT"
build/planner/zplan estimate --model gpt3-1.3b --hw dgx2-v100
build/planner/zplan plan --model gpt3-1.3b --hw dgx2-v100 --out "$OUT"
echo "demo: open $OUT/report.html"
