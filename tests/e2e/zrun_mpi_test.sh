#!/usr/bin/env bash
# End to end: zplan plans the tiny GPT on a CPU profile; zrun trains it on 1 rank and under
# mpirun on 2 ranks (same global batch); the losses must agree to float-reduction
# tolerance and fall; bad inputs exit 2 with a message naming the file.
# Usage: zrun_mpi_test.sh ZPLAN ZRUN SOURCE_DIR
set -euo pipefail
ZPLAN=$1 ZRUN=$2 SRC=$3
WORK=$(mktemp -d /tmp/zinf-e2e.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
cat "$SRC"/docs/*.md "$SRC"/README.md > "$WORK/corpus.txt"
mkdir -p "$WORK/nvme"
"$ZPLAN" profile --quick --nvme-dir "$WORK/nvme" --out "$WORK/hw.yaml" > /dev/null 2>&1
plan() {  # plan DIR GPUS MICRO_BATCH
  "$ZPLAN" plan --model tiny --hw "$WORK/hw.yaml" --gpus-per-node "$2" --micro-batch "$3" --device-memory 256MiB \
    --strategy params+opt:nvme --nvme-dir "$WORK/nvme" --out "$1" > /dev/null
}
plan "$WORK/p1" 1 4
plan "$WORK/p2" 2 2
"$ZRUN" --plan "$WORK/p1/plan.yaml" --data "$WORK/corpus.txt" --steps 4 --out "$WORK/r1" --quiet --threads 1 > /dev/null
mpirun -np 2 --oversubscribe "$ZRUN" --plan "$WORK/p2/plan.yaml" --data "$WORK/corpus.txt" --steps 4 --out "$WORK/r2" --quiet --threads 1 > /dev/null
python3 - "$WORK/r1/metrics.csv" "$WORK/r2/metrics.csv" <<'PY'
import csv, sys
a = [float(r["loss"]) for r in csv.DictReader(open(sys.argv[1]))]
b = [float(r["loss"]) for r in csv.DictReader(open(sys.argv[2]))]
assert len(a) == len(b) == 4, (a, b)
for i, (x, y) in enumerate(zip(a, b)):
    assert abs(x - y) <= 1e-4 * abs(x), f"step {i}: 1 rank {x} vs 2 ranks {y}"
assert a[-1] < a[0], f"loss did not fall: {a}"
print("losses, 1 rank:", a)
print("losses, 2 ranks:", b)
PY
test -s "$WORK/r2/trace.json" && test -s "$WORK/r2/trace-rank1.json" && test -s "$WORK/r2/report.html"
# Ranks bound to cores (--bind core), and without the compute-speed checks between steps,
# compute the same losses, bit for bit.
mpirun -np 2 --oversubscribe "$ZRUN" --plan "$WORK/p2/plan.yaml" --data "$WORK/corpus.txt" --steps 4 --out "$WORK/r2b" --quiet --threads 1 --bind core --speed-checks 0 > /dev/null
cmp <(cut -d, -f1,2 "$WORK/r2/metrics.csv") <(cut -d, -f1,2 "$WORK/r2b/metrics.csv") || { echo "--bind core changed the losses"; exit 1; }
# CPU per step: the kernels' thread and (params on NVMe) the NVMe lane used CPU; the node's
# busy fraction is a fraction.
python3 - "$WORK/r2/summary.yaml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
sec = text.split("cpu_s_per_step:", 1)[1]
val = {k: float(v) for k, v in re.findall(r"^  (\w+): ([-0-9.e+]+)$", sec, re.M)}
assert val["compute"] > 0 and val["nvme_read"] > 0 and val["network"] > 0, val
assert 0 < val["node_busy_fraction"] <= 1, val
print("cpu per step, rank 0:", val)
# A check of the compute's speed after every step (4 steps, up to 32 checks), a positive ratio.
sp = {k: float(v) for k, v in re.findall(r"^  (\w+): ([-0-9.e+]+)$", text.split("compute_speed:", 1)[1], re.M)}
assert sp["checks"] == 4 and 0 < sp["min"] <= sp["vs_profile"] <= sp["max"], sp
print("compute speed vs the profile:", sp)
# Params on NVMe: a check of the drive's speed beside each compute check, positive ratios.
dr = {k: float(v) for k, v in re.findall(r"^  (\w+): ([-0-9.e+]+)$", text.split("drive_speed:", 1)[1], re.M)}
assert dr["checks"] == 4 and 0 < dr["read_min"] <= dr["read"] <= dr["read_max"], dr
assert 0 < dr["write_min"] <= dr["write"] <= dr["write_max"], dr
print("drive speed vs the profile:", dr)
PY
# bench/cpu_split.py: the simulator's charge on the cores (the plan's trace) beside the run's
# CPU. Params on NVMe and two ranks: kernels, NVMe CPU and collectives in the model; the run's
# compute thread, NVMe lane and network lane used CPU.
"$ZPLAN" simulate "$WORK/p2/plan.yaml" --trace "$WORK/sim.json" > /dev/null
python3 - "$SRC/bench" "$WORK/sim.json" "$WORK/r2/summary.yaml" "$WORK/r2/trace.json" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import cpu_split
model = cpu_split.model_split(sys.argv[2], 2.0)
assert model["kernels"] > 0 and model["nvme"] > 0 and model["collectives"] > 0 and model["idle"] >= 0, model
assert model["step"] >= model["collectives"] + 2.0 * (model["kernels"] + model["nvme"]) * 0.999, model
run = cpu_split.run_split(open(sys.argv[3]).read())
assert run["compute"] > 0 and run["nvme_read"] > 0 and run["network"] > 0, run
assert abs(cpu_split.core_work_ms(run, 2.0) - 2.0 * sum(run.values())) < 1e-9
print("cpu split:", cpu_split.describe(model, run, 2.0, float("nan")))
# zrun's trace events carry their thread's CPU (args.cpu_us): positive, and never more than
# the event's own time (one thread).
tr = cpu_split.run_trace_split(sys.argv[4])
assert tr is not None, "no cpu_us in the run's trace"
for k in ("ops", "nvme_read", "network"):
    assert 0 < tr[f"{k}_cpu"] <= tr[f"{k}_wall"] * 1.01 + 0.01, (k, tr)
print("run's trace, per step:", {k: round(v, 3) for k, v in tr.items()})
PY
set +e
python3 "$SRC/bench/cpu_split.py" "$WORK/sim.json" "$WORK/r2/summary.yaml" --share 1 2> /dev/null; rc1=$?
python3 "$SRC/bench/cpu_split.py" "$WORK/r2/summary.yaml" "$WORK/r2/summary.yaml" --share 2 2> /dev/null; rc2=$?
set -e
[ "$rc1" -eq 2 ] && [ "$rc2" -eq 2 ] || { echo "cpu_split.py: bad input exit $rc1 / $rc2, expected 2"; exit 1; }
! grep -q "compute_speed:" "$WORK/r2b/summary.yaml" || { echo "--speed-checks 0 still checked"; exit 1; }
! grep -q "drive_speed:" "$WORK/r2b/summary.yaml" || { echo "--speed-checks 0 still checked the drive"; exit 1; }
# The drive check's file is gone with the run.
! ls "$WORK/nvme" | grep -q "zinf-drive-check" || { echo "the drive check left its file: $(ls "$WORK/nvme")"; exit 1; }
# Bad input: exit code 2 and the file named.
set +e
out=$("$ZRUN" --plan "$WORK/p1/plan.yaml" --data "$WORK/missing.txt" --steps 1 --out "$WORK/bad" 2>&1); rc=$?
set -e
[ "$rc" -eq 2 ] || { echo "missing data file: exit $rc, expected 2: $out"; exit 1; }
grep -q "missing.txt" <<<"$out" || { echo "error does not name the file: $out"; exit 1; }
echo "e2e: ok"
