#!/usr/bin/env bash
# Side-by-side CPU training step: zinf (zplan + zrun, strategy none, 1 rank)
# against PyTorch (bench/torch/gpt_torch.py) on the same GPT and batch, one
# after the other in one run. Prints one table at the end.
#
# Environment overrides:
#   BUILD     zinf build dir            (default: <repo>/build)
#   PYTHON    interpreter with torch    (default: /usr/bin/python3, Debian's python3-torch)
#   THREADS   threads for both          (default: 2)
#   STEPS     steps per run             (default: 8; zinf mean excludes step 0,
#                                        torch runs 1 warm-up + STEPS-1 timed)
#   MODELS    "name:micro_batch ..."    (default: "tiny:8 small:8 cpu-medium:4";
#                                        cpu-medium at 4 keeps the run within ~5 min)
#   KERNELS   1 = also print torch kernel timings per model (default: 0)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BUILD="${BUILD:-$ROOT/build}"
PYTHON="${PYTHON:-/usr/bin/python3}"
THREADS="${THREADS:-2}"
STEPS="${STEPS:-8}"
MODELS="${MODELS:-tiny:8 small:8 cpu-medium:4}"
KERNELS="${KERNELS:-0}"
ZPLAN="$BUILD/planner/zplan"
ZRUN="$BUILD/executor/zrun/zrun"

for b in "$ZPLAN" "$ZRUN"; do
  [[ -x "$b" ]] || { echo "missing $b (build zinf first)" >&2; exit 1; }
done
"$PYTHON" -c 'import torch' 2>/dev/null || {
  echo "$PYTHON cannot import torch (apt-get install -y python3-torch)" >&2; exit 1; }

TMP="$(mktemp -d -t zinf-vs-torch.XXXXXX)"
trap 'rm -rf "$TMP"' EXIT
CORPUS="$TMP/corpus.txt"
cat "$ROOT"/docs/*.md "$ROOT"/README.md > "$CORPUS"

echo "machine: $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg); threads $THREADS; steps $STEPS"
echo "torch: $("$PYTHON" -c 'import torch; print(torch.__version__)'), libblas.so.3 -> $(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || echo '?')"
echo

ROWS=()
for spec in $MODELS; do
  name="${spec%%:*}"; mb="${spec##*:}"
  yaml="$ROOT/models/$name.yaml"
  seq="$(awk -F': *' '$1=="seq_len"{print $2}' "$yaml")"
  tokens=$((mb * seq))

  # --- zinf ---
  "$ZPLAN" plan --model "$name" --hw cpu-2core --micro-batch "$mb" --device-memory 1GiB \
    --strategy none --out "$TMP/plan-$name" > "$TMP/zplan-$name.log" 2>&1 \
    || { cat "$TMP/zplan-$name.log" >&2; exit 1; }
  echo "== $name: zrun (batch ${mb}x${seq}) =="
  "$ZRUN" --plan "$TMP/plan-$name/plan.yaml" --data "$CORPUS" --steps "$STEPS" \
    --out "$TMP/run-$name" --threads "$THREADS" > "$TMP/zrun-$name.log" 2>&1 \
    || { cat "$TMP/zrun-$name.log" >&2; exit 1; }
  grep -v 'zrun: step ' "$TMP/zrun-$name.log" | sed 's/^/  /' || true
  zstep="$(awk -F, 'NR>2{s+=$3; n++} END{if(n) printf "%.6f", s/n}' "$TMP/run-$name/metrics.csv")"
  zparams="$(grep -oE 'B/param x [0-9]+ params' "$TMP/plan-$name/plan.yaml" | head -1 | awk '{print $3}')"

  # --- torch ---
  echo "== $name: torch (batch ${mb}x${seq}) =="
  mode=step; [[ "$KERNELS" == 1 ]] && mode=all
  OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-$THREADS}" OMP_NUM_THREADS="$THREADS" \
  OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}" \
  "$PYTHON" "$HERE/gpt_torch.py" --model "$yaml" --micro-batch "$mb" --threads "$THREADS" \
    --warmup 1 --steps $((STEPS - 1)) --corpus "$CORPUS" --mode "$mode" > "$TMP/torch-$name.log" 2>&1 \
    || { cat "$TMP/torch-$name.log" >&2; exit 1; }
  grep -v '^RESULT ' "$TMP/torch-$name.log" | sed 's/^/  /'
  tline="$(grep '^RESULT kind=step' "$TMP/torch-$name.log")"
  tstep="$(sed -E 's/.* mean_s=([^ ]+).*/\1/' <<<"$tline")"
  params="$(sed -E 's/.* params=([^ ]+).*/\1/' <<<"$tline")"
  [[ -n "$zparams" && "$zparams" != "$params" ]] && \
    echo "  WARNING: parameter count differs: zinf $zparams, torch $params"
  ROWS+=("$name $params $tokens $zstep $tstep")
  echo
done

echo "zinf: zrun strategy none, 1 rank, mean step_s over steps 1..$((STEPS - 1)) of metrics.csv"
echo "torch: fp32 eager, AdamW, mean over $((STEPS - 1)) steps after 1 warm-up"
printf '%-11s %11s %11s %12s %12s %11s %13s %13s\n' \
  model params tokens/step "zinf step s" "torch step s" torch/zinf "zinf tok/s" "torch tok/s"
for r in "${ROWS[@]}"; do
  read -r name params tokens zs ts <<<"$r"
  awk -v n="$name" -v p="$params" -v t="$tokens" -v z="$zs" -v q="$ts" 'BEGIN{
    printf "%-11s %11d %11d %12.4f %12.4f %11.2f %13.0f %13.0f\n", n, p, t, z, q, q/z, t/z, t/q }'
done
