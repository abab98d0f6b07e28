#!/usr/bin/env bash
# End to end, reliability of zrun:
#   * kill -9 in the middle of a step, in the middle of a checkpoint, and at a random moment
#     from outside: --resume continues, and every loss equals the uninterrupted run's bit
#     for bit (metrics.csv prints losses with 9 significant digits, exact for float);
#   * a 2-rank run resumed on 1 rank (re-sharding) continues within float tolerance;
#   * a full disk under the NVMe store stops the run with an error naming the swap file,
#     and the last checkpoint still resumes;
#   * a rank that dies or hangs under mpirun ends the job with an error, not a hang;
#   * the safetensors export is well formed.
# Usage: zrun_resume_test.sh ZPLAN ZRUN SOURCE_DIR
set -euo pipefail
ZPLAN=$1 ZRUN=$2 SRC=$3
WORK=$(mktemp -d /tmp/zinf-resume.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
cat "$SRC"/docs/*.md "$SRC"/README.md > "$WORK/corpus.txt"
mkdir -p "$WORK/nvme"
for g in 1 2; do
  "$ZPLAN" plan --model tiny --hw "$SRC/hwprofiles/cpu-2core.yaml" --gpus-per-node $g --micro-batch $((4 / g)) \
    --device-memory 256MiB --strategy all:nvme --nvme-dir "$WORK/nvme" --out "$WORK/p$g" > /dev/null
done
zrun() { "$ZRUN" --data "$WORK/corpus.txt" --quiet --threads 1 "$@"; }
losses() { tail -n +2 "$1/metrics.csv" | cut -d, -f1,2; }
fail() { echo "FAIL: $*"; exit 1; }

zrun --plan "$WORK/p1/plan.yaml" --steps 8 --out "$WORK/ref" --export-safetensors "$WORK/ref.safetensors" > /dev/null
[ "$(losses "$WORK/ref" | wc -l)" -eq 8 ] || fail "reference run has no 8 steps"

# 1. kill -9 in the middle of step 5 (after its backward, before its optimizer step).
set +e
ZINF_TEST_CRASH=step:5 zrun --plan "$WORK/p1/plan.yaml" --steps 8 --out "$WORK/a" --checkpoint-dir "$WORK/ck-a" \
  --checkpoint-every 2 > /dev/null 2>&1; rc=$?
set -e
[ "$rc" -eq 137 ] || fail "crash mid-step: exit $rc, expected 137 (SIGKILL)"
[ "$(cat "$WORK/ck-a/latest")" = step-000004 ] || fail "latest is $(cat "$WORK/ck-a/latest"), expected step-000004"
zrun --plan "$WORK/p1/plan.yaml" --steps 8 --out "$WORK/a" --checkpoint-dir "$WORK/ck-a" --resume "$WORK/ck-a" \
  --export-safetensors "$WORK/a.safetensors" > /dev/null
diff <(losses "$WORK/ref") <(losses "$WORK/a") || fail "losses after a crash mid-step differ from the uninterrupted run"
cmp -s "$WORK/ref.safetensors" "$WORK/a.safetensors" || fail "final weights differ after resume"
echo "kill -9 mid-step: resumed from step 4, 8 losses and the weights bitwise equal"

# 2. kill -9 in the middle of the checkpoint after step 4 (shards written, no manifest).
set +e
ZINF_TEST_CRASH=checkpoint:4 zrun --plan "$WORK/p1/plan.yaml" --steps 8 --out "$WORK/b" --checkpoint-dir "$WORK/ck-b" \
  --checkpoint-every 2 > /dev/null 2>&1; rc=$?
set -e
[ "$rc" -eq 137 ] || fail "crash mid-checkpoint: exit $rc, expected 137"
[ "$(cat "$WORK/ck-b/latest")" = step-000002 ] || fail "latest moved to an incomplete checkpoint"
[ -d "$WORK/ck-b/step-000004.tmp" ] || fail "expected the incomplete step-000004.tmp to be left behind"
zrun --plan "$WORK/p1/plan.yaml" --steps 8 --out "$WORK/b" --checkpoint-dir "$WORK/ck-b" --checkpoint-every 2 \
  --resume "$WORK/ck-b" > /dev/null
diff <(losses "$WORK/ref") <(losses "$WORK/b") || fail "losses after a crash mid-checkpoint differ"
[ ! -e "$WORK/ck-b/step-000004.tmp" ] || fail "the stale temporary checkpoint was not cleaned up"
echo "kill -9 mid-checkpoint: the previous checkpoint (step 2) resumed, losses bitwise equal"

# 3. kill -9 from outside at whatever moment the run is in once a checkpoint exists.
"$ZRUN" --data "$WORK/corpus.txt" --quiet --threads 1 --plan "$WORK/p1/plan.yaml" --steps 200 --out "$WORK/c" --checkpoint-dir "$WORK/ck-c" --checkpoint-every 3 \
  > /dev/null 2>&1 &
pid=$!
for _ in $(seq 1 600); do [ -f "$WORK/ck-c/latest" ] && break; sleep 0.05; done
sleep 0.$((RANDOM % 10))
kill -9 $pid 2>/dev/null || true
wait $pid 2>/dev/null || true
[ -f "$WORK/ck-c/latest" ] || fail "no checkpoint was written before the kill"
resumed=$(sed 's/step-0*//' "$WORK/ck-c/latest")
zrun --plan "$WORK/p1/plan.yaml" --steps $((resumed + 3)) --out "$WORK/c" --resume "$WORK/ck-c" > /dev/null
zrun --plan "$WORK/p1/plan.yaml" --steps $((resumed + 3)) --out "$WORK/c-ref" > /dev/null
diff <(losses "$WORK/c-ref") <(losses "$WORK/c" | head -n $((resumed + 3))) || fail "losses after an external kill -9 differ"
echo "external kill -9: resumed at step $resumed, losses bitwise equal"

# 3b. SIGTERM: the run finishes its step, checkpoints and says how to continue.
"$ZRUN" --data "$WORK/corpus.txt" --quiet --threads 1 --plan "$WORK/p1/plan.yaml" --steps 100000 --out "$WORK/t" --checkpoint-dir "$WORK/ck-t" > "$WORK/t.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do [ -f "$WORK/t/metrics.csv" ] && break; sleep 0.05; done
kill -TERM $pid
set +e; wait $pid; rc=$?; set -e
[ "$rc" -eq 1 ] || fail "SIGTERM: exit $rc, expected 1: $(cat "$WORK/t.log")"
grep -q "stopped by a signal after step" "$WORK/t.log" || fail "SIGTERM: no message: $(cat "$WORK/t.log")"
stopped=$(sed 's/step-0*//' "$WORK/ck-t/latest")
[ "$(losses "$WORK/t" | wc -l)" -eq "$stopped" ] || fail "SIGTERM: checkpoint at $stopped but metrics has other steps"
echo "SIGTERM: stopped after step $stopped with a checkpoint"

# 4. re-shard: 2 ranks -> 1 rank.
mpirun -np 2 "$ZRUN" --plan "$WORK/p2/plan.yaml" --data "$WORK/corpus.txt" --quiet --threads 1 --steps 4 --out "$WORK/d" \
  --checkpoint-dir "$WORK/ck-d" > /dev/null
zrun --plan "$WORK/p1/plan.yaml" --steps 8 --out "$WORK/d" --resume "$WORK/ck-d" > /dev/null
python3 - "$WORK/ref/metrics.csv" "$WORK/d/metrics.csv" <<'PY'
import csv, sys
a = [float(r["loss"]) for r in csv.DictReader(open(sys.argv[1]))]
b = [float(r["loss"]) for r in csv.DictReader(open(sys.argv[2]))]
assert len(a) == len(b) == 8, (a, b)
for i, (x, y) in enumerate(zip(a, b)):
    assert abs(x - y) <= 1e-5 * abs(x), f"step {i}: {x} vs {y}"
PY
echo "2 ranks -> 1 rank: losses within 1e-5 of the 1-rank run"

# 5. the NVMe store's disk fills up mid-run: a clear error, and the checkpoint resumes.
set +e
out=$(ZINF_TEST_NVME_FAULT=enospc_after=12000000 zrun --plan "$WORK/p1/plan.yaml" --steps 8 --out "$WORK/e" \
  --checkpoint-dir "$WORK/ck-e" --checkpoint-every 2 2>&1); rc=$?
set -e
[ "$rc" -eq 1 ] || fail "disk full: exit $rc, expected 1: $out"
grep -q "zinf-rank0.swap" <<<"$out" || fail "the disk-full error does not name the swap file: $out"
grep -qi "space" <<<"$out" || fail "the disk-full error does not say so: $out"
[ -f "$WORK/ck-e/latest" ] || fail "no checkpoint survived the disk-full failure ($out)"
zrun --plan "$WORK/p1/plan.yaml" --steps 8 --out "$WORK/e" --resume "$WORK/ck-e" > /dev/null
diff <(losses "$WORK/ref") <(losses "$WORK/e") || fail "losses after the disk-full stop and resume differ"
echo "disk full: stopped with '$(grep -o 'NoSpace[^[]*' <<<"$out" | head -1 | cut -c1-90)...', resumed bitwise"

# 6. a rank dies (SIGKILL) or hangs under mpirun: the job ends with an error within the timeout.
for mode in CRASH HANG; do
  set +e
  start=$(date +%s)
  out=$(timeout 120 mpirun -np 2 -x ZINF_TEST_$mode=step:2:1 "$ZRUN" --plan "$WORK/p2/plan.yaml" \
    --data "$WORK/corpus.txt" --quiet --threads 1 --steps 6 --out "$WORK/f" --comm-timeout 5 2>&1); rc=$?
  set -e
  took=$(( $(date +%s) - start ))
  [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "rank 1 $mode: exit $rc after ${took}s (124 = hung): $out"
  [ "$took" -lt 100 ] || fail "rank 1 $mode: the job took ${took}s to stop"
  if [ $mode = HANG ]; then grep -q "timed out\|deadline\|Aborted" <<<"$out" || fail "no timeout error: $out"; fi
  echo "rank 1 $mode: the job stopped in ${took}s with exit $rc"
done

# 7. the export is a valid safetensors file with the GPT's tensors.
python3 - "$WORK/ref.safetensors" <<'PY'
import json, struct, sys
data = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", data[:8])[0]
h = json.loads(data[8:8 + n])
names = [k for k in h if k != "__metadata__"]
assert "wte" in names and "h0.attn.qkv.weight" in names, names
end = max(v["data_offsets"][1] for k, v in h.items() if k != "__metadata__")
assert 8 + n + end == len(data), (8 + n + end, len(data))
assert all(h[k]["dtype"] == "F32" for k in names)
print(f"safetensors: {len(names)} tensors, {end} bytes, metadata {h.get('__metadata__')}")
PY
echo "e2e resume: ok"
