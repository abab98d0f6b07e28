#!/usr/bin/env bash
# Builds and runs every test suite (unit, mpi, nvme, gpu; gpu tests skip without a GPU),
# then prints "N passed, N failed, N skipped".
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
bash scripts/build.sh || { echo "0 passed, 1 failed"; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
meson test -C "$BUILD" --print-errorlogs --num-processes "${TEST_JOBS:-2}" "$@"
rc=$?
python3 - "$BUILD/meson-logs/testlog.json" <<'PY'
import json, sys
p = f = s = 0
try:
    for line in open(sys.argv[1]):
        r = json.loads(line).get("result", "")
        if r in ("OK", "EXPECTEDFAIL"): p += 1
        elif r == "SKIP": s += 1
        else: f += 1
except FileNotFoundError:
    f = 1
print(f"{p} passed, {f} failed, {s} skipped")
PY
exit $rc
