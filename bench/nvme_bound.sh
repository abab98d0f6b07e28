#!/usr/bin/env bash
# NVMe-bound training steps against the disk's measured bandwidth.
#
# Plans MODEL with every model state on NVMe (all:nvme) from a measured CPU profile, runs
# zrun for STEPS steps and prints, per step, the NVMe bytes read and written, the bound
# they set at the profile's read and write bandwidths (one drive serves both: the times
# add), the measured step time and their ratio (issue 4's target: within 15% of the bound).
#
# Usage: bench/nvme_bound.sh [MODEL] [STEPS] [NVME_DIR] [HW_PROFILE]
#   defaults: cpu-medium, 4 steps, /tmp/zinf-nvme-bench, hwprofiles/cpu-2core.yaml
#   MODEL=cpu-1.8b is the run whose model states (29 GB) exceed a 24 GiB machine's RAM;
#   it needs ~30 GB free under NVME_DIR and about a minute per step on this VM's disk.
# Env: BUILD (default build), STRATEGY (default all:nvme), MICRO_BATCH (default 1), LR (default
# 3e-4; a 1.8B model on 64-token batches wants ~3e-5 without warm-up).
# Run it on a quiet machine: other jobs on the cores or the disk move both numbers.
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=${1:-cpu-medium}
STEPS=${2:-4}
NVME=${3:-/tmp/zinf-nvme-bench}
HW=${4:-hwprofiles/cpu-2core.yaml}
BUILD=${BUILD:-build}
STRATEGY=${STRATEGY:-all:nvme}
MB=${MICRO_BATCH:-1}
LR=${LR:-3e-4}
OUT=$(mktemp -d /tmp/zinf-nvme-bound.XXXXXX)
trap 'rm -rf "$OUT" "$NVME"/zinf-rank*.swap' EXIT
mkdir -p "$NVME"
cat docs/*.md README.md > "$OUT/corpus.txt"
"$BUILD/planner/zplan" plan --model "$MODEL" --hw "$HW" --strategy "$STRATEGY" --micro-batch "$MB" \
  --nvme-dir "$NVME" --out "$OUT/plan" | sed -n '1,3p'
"$BUILD/executor/zrun/zrun" --plan "$OUT/plan/plan.yaml" --data "$OUT/corpus.txt" --steps "$STEPS" --lr "$LR" --out "$OUT/run"
python3 - "$OUT/run/summary.yaml" "$MODEL" "$STRATEGY" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
def section(name):
    m = re.search(rf"^{name}:\n((?:  .*\n)+)", text, re.M)
    return dict(re.findall(r"^  (\w+): (\S+)", m.group(1), re.M)) if m else {}
st, nb = section("step_time_s"), section("nvme_bound")
if not nb:
    sys.exit("summary.yaml has no nvme_bound section (is the plan's hardware profile readable?)")
rd, wr = float(nb["read_bytes_per_step"]), float(nb["write_bytes_per_step"])
bound, step = float(nb["bound_s"]), float(st["measured"])
print(f"\n{sys.argv[2]} ({sys.argv[3]}): per step {rd / 1e9:.2f} GB read + {wr / 1e9:.2f} GB written")
print(f"  NVMe bound at the profile's bandwidths {bound:.3f} s; measured step {step:.3f} s; "
      f"predicted {float(st['predicted']):.3f} s")
mem = section("memory_bytes")
mem = {k: float(v) for k, v in mem.items()}
print(f"  peak memory: device {mem['device_peak'] / 2**20:.0f} MiB (predicted {mem['device_predicted'] / 2**20:.0f} MiB), "
      f"host {mem['host'] / 2**20:.0f} MiB, NVMe {mem['nvme'] / 2**30:.2f} GiB")
print(f"  step / bound = {step / bound:.3f} ({'within' if step <= 1.15 * bound else 'NOT within'} 15% of the bound)")
PY
