#!/usr/bin/env bash
# End to end, bad input: the real zplan and zrun binaries on broken model, hardware, plan and
# data files and on unusable --nvme-dir paths. Each must exit non-zero (2 for bad input, see
# core/status.h ExitCodeFor) with a message on stderr naming the file and the problem.
# Usage: bad_input_test.sh ZPLAN ZRUN SOURCE_DIR
set -uo pipefail
ZPLAN=$1 ZRUN=$2 SRC=$3
WORK=$(mktemp -d /tmp/zinf-bad.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fails=0 passes=0 skips=0

# expect NAME RC PATTERN... -- CMD...: CMD must exit RC and its stderr contain every PATTERN.
expect() {
  local name=$1 want=$2
  shift 2
  local pats=()
  while [ "$1" != "--" ]; do pats+=("$1"); shift; done
  shift
  local err rc
  err=$("$@" 2>&1 >/dev/null); rc=$?
  if [ "$want" = "nonzero" ]; then
    [ "$rc" -ne 0 ] || { echo "FAIL $name: exit 0, expected non-zero"; fails=$((fails + 1)); return; }
  elif [ "$rc" -ne "$want" ]; then
    echo "FAIL $name: exit $rc, expected $want: $err"; fails=$((fails + 1)); return
  fi
  for p in "${pats[@]}"; do
    if ! grep -qF -- "$p" <<<"$err"; then
      echo "FAIL $name: stderr lacks '$p': $err"; fails=$((fails + 1)); return
    fi
  done
  passes=$((passes + 1))
}

# ---- zplan: model, hardware profile and plan files ----
HW=$SRC/hwprofiles/cpu-2core.yaml
TINY=$SRC/models/tiny.yaml
sed 's/^n_layer: 2$/n_layer: -1/' "$TINY" > "$WORK/neg.yaml"
sed 's/^hidden: 64$/hidden: 66/' "$TINY" > "$WORK/div.yaml"
sed 's/^n_layer: 2$/n_layer: [2]/' "$TINY" > "$WORK/type.yaml"
sed 's/^n_layer: 2$/n_layer: 1e30/' "$TINY" > "$WORK/absurd.yaml"
sed 's/^format: zinf.model\/v1$/format: zinf.model\/v9/' "$TINY" > "$WORK/version.yaml"
grep -v '^vocab:' "$TINY" > "$WORK/novocab.yaml"
{ cat "$TINY"; echo "n_layers: 2"; } > "$WORK/unknown.yaml"
: > "$WORK/empty.yaml"
head -c 4096 /dev/urandom > "$WORK/garbage.yaml"
printf '\x7fELF\x02\x01\x01\x00\x00\x00' > "$WORK/elf.yaml"
head -c 120 "$HW" > "$WORK/hw-truncated.yaml"
sed 's/^format: zinf.hwprofile\/v1$/format: zinf.hwprofile\/v2/' "$HW" > "$WORK/hw-version.yaml"
sed 's/^  host_memory: .*/  host_memory: -12GiB/' "$HW" > "$WORK/hw-neg.yaml"
sed 's/^  latency_s: .*/  latency_s: .nan/' "$HW" > "$WORK/hw-nan.yaml"
echo '{"model_type": "bert", "num_hidden_layers": 12, "hidden_size": 768}' > "$WORK/bert.json"
echo '{"model_type": "gpt2", "n_layer": "12", "n_embd": 768, "n_head": 12, "vocab_size": 50257}' > "$WORK/str.json"
echo '{"model_type": "gpt2", "n_layer": 12, "n_embd": 768,' > "$WORK/cut.json"

est() { "$ZPLAN" estimate --model "$1" --hw "$2"; }
expect model-missing 2 "$WORK/nope.yaml" -- est "$WORK/nope.yaml" "$HW"
expect model-empty 2 "$WORK/empty.yaml" "file is empty" -- est "$WORK/empty.yaml" "$HW"
expect model-garbage 2 "$WORK/garbage.yaml" -- est "$WORK/garbage.yaml" "$HW"
expect model-elf 2 "$WORK/elf.yaml" "control character" -- est "$WORK/elf.yaml" "$HW"
expect model-dir 2 "$WORK" -- est "$WORK" "$HW"
expect model-negative 2 "$WORK/neg.yaml" "key 'n_layer'" "allowed: 1 .. 100000" -- est "$WORK/neg.yaml" "$HW"
expect model-divisible 2 "$WORK/div.yaml" "key 'hidden'" "multiple of n_head" -- est "$WORK/div.yaml" "$HW"
expect model-type 2 "$WORK/type.yaml" "key 'n_layer'" "must be an integer" -- est "$WORK/type.yaml" "$HW"
expect model-absurd 2 "$WORK/absurd.yaml" "key 'n_layer'" "out of range" -- est "$WORK/absurd.yaml" "$HW"
expect model-version 2 "$WORK/version.yaml" "key 'format'" "allowed: zinf.model/v1" -- est "$WORK/version.yaml" "$HW"
expect model-missing-key 2 "$WORK/novocab.yaml" "key 'vocab': missing (required)" -- est "$WORK/novocab.yaml" "$HW"
expect model-unknown-key 2 "$WORK/unknown.yaml" "unknown key 'n_layers'" "allowed here" -- est "$WORK/unknown.yaml" "$HW"
expect hf-unsupported 2 "$WORK/bert.json" "key 'model_type'" "allowed: gpt2, llama, mistral" -- est "$WORK/bert.json" "$HW"
expect hf-string-number 2 "$WORK/str.json" "key 'n_layer'" "quoted string" -- est "$WORK/str.json" "$HW"
expect hf-truncated 2 "$WORK/cut.json" "syntax error" -- est "$WORK/cut.json" "$HW"
expect hw-truncated 2 "$WORK/hw-truncated.yaml" -- est "$TINY" "$WORK/hw-truncated.yaml"
expect hw-version 2 "$WORK/hw-version.yaml" "key 'format'" "allowed: zinf.hwprofile/v1" -- est "$TINY" "$WORK/hw-version.yaml"
expect hw-negative 2 "$WORK/hw-neg.yaml" "key 'node.host_memory'" "negative" -- est "$TINY" "$WORK/hw-neg.yaml"
expect hw-nan 2 "$WORK/hw-nan.yaml" "key 'network.latency_s'" "finite" -- est "$TINY" "$WORK/hw-nan.yaml"
expect hw-empty 2 "$WORK/empty.yaml" "file is empty" -- est "$TINY" "$WORK/empty.yaml"
expect hw-missing 2 "$WORK/nohw.yaml" -- est "$TINY" "$WORK/nohw.yaml"

# A good plan to break (parameters and optimizer states on NVMe, so zrun opens --nvme-dir).
mkdir -p "$WORK/nvme"
if ! "$ZPLAN" plan --model tiny --hw "$HW" --micro-batch 2 --device-memory 256MiB --strategy params+opt:nvme \
    --nvme-dir "$WORK/nvme" --out "$WORK/p" > "$WORK/plan.log" 2>&1; then
  echo "FAIL: zplan plan of the good plan: $(cat "$WORK/plan.log")"; exit 1
fi
PLAN=$WORK/p/plan.yaml
sed 's/^  micro_batch: .*/  micro_batch: 0/' "$PLAN" > "$WORK/plan-mb.yaml"
sed 's/^format: zinf.plan\/v1$/format: zinf.plan\/v0/' "$PLAN" > "$WORK/plan-version.yaml"
sed 's/^  params: nvme$/  params: gpu/' "$PLAN" > "$WORK/plan-tier.yaml"
head -c 300 "$PLAN" > "$WORK/plan-cut.yaml"
{ cat "$PLAN"; echo "---"; cat "$PLAN"; } > "$WORK/plan-twice.yaml"
# ds_config.json round trip: the DeepSpeed config zplan wrote reads back to the plan's
# placement and micro-batch; bad ds_config files exit 2 naming the key.
out=$("$ZPLAN" estimate --model tiny --hw "$HW" --ds-config "$WORK/p/ds_config.json" 2>&1)
if grep -qF "zinf strategy params+opt:nvme (params nvme, grads host, optimizer nvme), micro_batch 2" <<<"$out" &&
    grep -qF "params+opt:nvme" <<<"$(grep -F '<- ds_config' <<<"$out")"; then
  passes=$((passes + 1))
else
  echo "FAIL ds-config-round-trip: $out"; fails=$((fails + 1))
fi
echo '{"zero_optimization": {"stage": 2}}' > "$WORK/ds-stage2.json"
echo '{"zero_optimization": {"stage": 3, "offload_param": {"device": "nvme"}}}' > "$WORK/ds-nopath.json"
echo '{"train_micro_batch_size_per_gpu": "lots", "zero_optimization": {"stage": 3}}' > "$WORK/ds-mb.json"
expect ds-config-missing 2 "$WORK/ds-none.json" -- "$ZPLAN" estimate --model tiny --hw "$HW" --ds-config "$WORK/ds-none.json"
expect ds-config-stage2 2 "$WORK/ds-stage2.json" "key 'zero_optimization.stage'" "allowed: 3" -- "$ZPLAN" estimate --model tiny --hw "$HW" --ds-config "$WORK/ds-stage2.json"
expect ds-config-nvme-path 2 "key 'zero_optimization.offload_param.nvme_path'" -- "$ZPLAN" estimate --model tiny --hw "$HW" --ds-config "$WORK/ds-nopath.json"
expect ds-config-micro-batch 2 "key 'train_micro_batch_size_per_gpu'" "or \"auto\"" -- "$ZPLAN" estimate --model tiny --hw "$HW" --ds-config "$WORK/ds-mb.json"
expect ds-config-garbage 2 "$WORK/garbage.yaml" -- "$ZPLAN" estimate --model tiny --hw "$HW" --ds-config "$WORK/garbage.yaml"
expect simulate-bad-plan 2 "$WORK/plan-mb.yaml" "key 'training.micro_batch'" "allowed: 1 .." -- "$ZPLAN" simulate "$WORK/plan-mb.yaml"
expect simulate-missing-plan 2 "$WORK/none.yaml" -- "$ZPLAN" simulate "$WORK/none.yaml"
expect plan-calibrate-cuda 2 "--calibrate" "cuda backend" "$SRC/hwprofiles/dgx-a100-80g.yaml" -- "$ZPLAN" plan --model tiny --hw "$SRC/hwprofiles/dgx-a100-80g.yaml" --calibrate 0.1 --out "$WORK/cal-cuda"

# ---- zrun: plan, data, --nvme-dir ----
head -c 20000 "$SRC/README.md" > "$WORK/data.txt"
: > "$WORK/empty.txt"
printf 'too short' > "$WORK/short.txt"
printf '\x01\x00\x02' > "$WORK/odd.bin"
run() {  # run PLAN DATA [extra...]
  local plan=$1 data=$2
  shift 2
  "$ZRUN" --plan "$plan" --data "$data" --steps 1 --out "$WORK/run" --quiet --threads 1 "$@"
}
expect zrun-plan-missing 2 "$WORK/missing-plan.yaml" -- run "$WORK/missing-plan.yaml" "$WORK/data.txt"
expect zrun-plan-garbage 2 "$WORK/garbage.yaml" -- run "$WORK/garbage.yaml" "$WORK/data.txt"
expect zrun-plan-empty 2 "$WORK/empty.yaml" "file is empty" -- run "$WORK/empty.yaml" "$WORK/data.txt"
expect zrun-plan-micro-batch 2 "$WORK/plan-mb.yaml" "key 'training.micro_batch'" -- run "$WORK/plan-mb.yaml" "$WORK/data.txt"
expect zrun-plan-version 2 "$WORK/plan-version.yaml" "key 'format'" "allowed: zinf.plan/v1" -- run "$WORK/plan-version.yaml" "$WORK/data.txt"
expect zrun-plan-tier 2 "$WORK/plan-tier.yaml" "key 'placement.params'" "allowed: device, host, nvme" -- run "$WORK/plan-tier.yaml" "$WORK/data.txt"
expect zrun-plan-truncated 2 "$WORK/plan-cut.yaml" -- run "$WORK/plan-cut.yaml" "$WORK/data.txt"
expect zrun-plan-two-docs 2 "$WORK/plan-twice.yaml" "expected exactly one" -- run "$WORK/plan-twice.yaml" "$WORK/data.txt"
expect zrun-plan-is-model 2 "$TINY" "key 'format'" -- run "$TINY" "$WORK/data.txt"
expect zrun-data-missing 2 "$WORK/missing.txt" -- run "$PLAN" "$WORK/missing.txt"
expect zrun-data-empty 2 "$WORK/empty.txt" "data file is empty" -- run "$PLAN" "$WORK/empty.txt"
expect zrun-data-short 2 "$WORK/short.txt" "too short for seq_len 64" -- run "$PLAN" "$WORK/short.txt"
expect zrun-data-odd-bin 2 "$WORK/odd.bin" "even size" -- run "$PLAN" "$WORK/odd.bin"
expect zrun-data-dir 2 "$WORK" -- run "$PLAN" "$WORK"
expect zrun-nvme-missing 2 "$WORK/no-such-dir" "does not exist" -- run "$PLAN" "$WORK/data.txt" --nvme-dir "$WORK/no-such-dir"
expect zrun-nvme-under-file 2 "/etc/passwd/x" -- run "$PLAN" "$WORK/data.txt" --nvme-dir /etc/passwd/x
expect zrun-nvme-is-file 2 "$WORK/data.txt" "not a directory" -- run "$PLAN" "$WORK/data.txt" --nvme-dir "$WORK/data.txt"
# Read-only: chmod does not stop root; sysfs refuses new files even for root. Skip honestly
# if neither gives a read-only directory here.
RO=""
if [ "$(id -u)" -ne 0 ]; then
  mkdir -p "$WORK/ro" && chmod 555 "$WORK/ro" && RO=$WORK/ro
elif ! (: > /sys/zinf-probe.swap) 2>/dev/null; then
  RO=/sys
else
  rm -f /sys/zinf-probe.swap
fi
if [ -n "$RO" ]; then
  expect zrun-nvme-read-only nonzero "$RO" "writable" -- run "$PLAN" "$WORK/data.txt" --nvme-dir "$RO"
else
  echo "SKIP zrun-nvme-read-only: no read-only directory available"; skips=$((skips + 1))
fi

# ---- zplan profile --only / --update ----
expect profile-only-without-update 2 "--only needs --update" -- "$ZPLAN" profile --only gemm -o "$WORK/p.yaml"
expect profile-update-without-only 2 "--update needs --only" -- "$ZPLAN" profile --update "$HW" -o "$WORK/p.yaml"
expect profile-only-unknown 2 "no probe named 'gemmm'" "scheduler" -- "$ZPLAN" profile --only gemmm --update "$HW" -o "$WORK/p.yaml"
expect profile-update-missing 2 "$WORK/nope.yaml" -- "$ZPLAN" profile --only scheduler --update "$WORK/nope.yaml" -o "$WORK/p.yaml"
expect zrun-compute-nice-range 2 "--compute-nice" -- "$ZRUN" --plan "$PLAN" --data "$WORK/data.txt" --compute-nice 20

# ---- nothing lost: zplan simulate in a zrun output directory keeps zrun's measured trace ----
mkdir -p "$WORK/simrun" && echo '{"measured": true}' > "$WORK/simrun/trace.json"
zplan_abs=$(realpath "$ZPLAN")
sim_err=$(cd "$WORK/simrun" && "$zplan_abs" simulate "$PLAN" --hw "$HW" 2>&1 >/dev/null); sim_rc=$?
if [ "$sim_rc" -eq 0 ] && [ -s "$WORK/simrun/sim-trace.json" ] && grep -qF '"measured": true' "$WORK/simrun/trace.json"; then
  passes=$((passes + 1))
else
  echo "FAIL simulate-default-trace: exit $sim_rc, trace.json overwritten or sim-trace.json missing: $sim_err"; fails=$((fails + 1))
fi

# ---- zplan plan --calibrate: the plan records the speed; zplan simulate predicts at it ----
cal_out=$("$ZPLAN" plan --model tiny --hw "$HW" --calibrate 0.2 --out "$WORK/cal" 2>&1) && \
  sim_out=$("$ZPLAN" simulate "$WORK/cal/plan.yaml" --trace "$WORK/cal/sim.json" 2>&1); cal_rc=$?
if [ "$cal_rc" -eq 0 ] && grep -q "^  compute_speed: " "$WORK/cal/plan.yaml" && grep -qF "the profile's speed (" <<<"$cal_out" \
   && grep -qF "(the plan's calibration)" <<<"$sim_out" \
   && grep -qE "^step ([0-9.]+ [a-z]+) \(planned simulated \1\)" <<<"$sim_out"; then
  passes=$((passes + 1))
else
  echo "FAIL plan-calibrate: exit $cal_rc: $cal_out / $sim_out"; fails=$((fails + 1))
fi

# ---- zplan plan --calibrate far from the profile: a sanitizer build calibrates at ~0.01x a
# release build's profile (CI, stop 40: 0.0094), here a profile with GEMMs 300x as fast as this
# machine's stands in for that. The plan zplan writes must read back; a speed no plan may hold
# is refused before anything is written, naming the profile.
fast_hw() {  # the profile with its measured GEMM rates (gemm_curve) times $1
  awk -v f="$1" '/^  [a-z_]+:/ { g = ($1 == "gemm_curve:") }
    g && $1 == "y:" { printf "      y: %.17g\n", $2 * f; next }
    { print }' "$HW"
}
fast_hw 300 > "$WORK/hw-fast.yaml"
fast_hw 1e12 > "$WORK/hw-absurd.yaml"
fcal_out=$("$ZPLAN" plan --model tiny --hw "$WORK/hw-fast.yaml" --calibrate 0.2 --out "$WORK/cal-fast" 2>&1) && \
  fsim_out=$("$ZPLAN" simulate "$WORK/cal-fast/plan.yaml" --trace "$WORK/cal-fast/sim.json" 2>&1); fcal_rc=$?
fspeed=$(sed -n 's/^  compute_speed: //p' "$WORK/cal-fast/plan.yaml" 2>/dev/null)
if [ "$fcal_rc" -eq 0 ] && awk -v s="$fspeed" 'BEGIN { exit !(s > 0 && s < 0.05) }' \
   && grep -qF "(the plan's calibration)" <<<"$fsim_out"; then
  passes=$((passes + 1))
else
  echo "FAIL plan-calibrate-slow: exit $fcal_rc, compute_speed '$fspeed': $fcal_out / ${fsim_out:-}"; fails=$((fails + 1))
fi
expect plan-calibrate-absurd 2 "$WORK/hw-absurd.yaml" "outside" "zplan profile" -- \
  "$ZPLAN" plan --model tiny --hw "$WORK/hw-absurd.yaml" --calibrate 0.2 --out "$WORK/cal-absurd"
if [ -e "$WORK/cal-absurd/plan.yaml" ]; then
  echo "FAIL plan-calibrate-absurd: wrote $WORK/cal-absurd/plan.yaml"; fails=$((fails + 1))
fi

echo "bad_input e2e: $passes passed, $fails failed, $skips skipped"
[ "$fails" -eq 0 ]
