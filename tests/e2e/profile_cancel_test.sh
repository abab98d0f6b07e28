#!/usr/bin/env bash
# zplan profile: Ctrl-C (SIGINT) during the NVMe probe stops it with an error, leaves no
# file in --nvme-dir and writes no profile; a bad --nvme-dir fails at once naming it.
# Usage: profile_cancel_test.sh ZPLAN
set -uo pipefail
ZPLAN=$1
WORK=$(mktemp -d /tmp/zinf-cancel.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/nvme"
"$ZPLAN" profile --nvme-dir "$WORK/nvme" --out "$WORK/hw.yaml" > "$WORK/log" 2>&1 &
pid=$!
for _ in $(seq 1 2400); do  # wait (up to 240 s: the compute probes run first) for the probe's file to appear
  ls "$WORK/nvme" | grep -q . && break
  sleep 0.1
done
ls "$WORK/nvme" | grep -q . || { echo "the NVMe probe never started"; kill $pid; exit 1; }
kill -INT $pid
wait $pid
rc=$?
[ "$rc" -ne 0 ] || { echo "interrupted profile exited 0"; exit 1; }
[ -z "$(ls -A "$WORK/nvme")" ] || { echo "files left behind: $(ls "$WORK/nvme")"; exit 1; }
[ ! -e "$WORK/hw.yaml" ] || { echo "a profile was written after Ctrl-C"; exit 1; }
grep -q "interrupted" "$WORK/log" || { echo "no message: $(cat "$WORK/log")"; exit 1; }
out=$("$ZPLAN" profile --nvme-dir "$WORK/missing" --out "$WORK/x.yaml" 2>&1); rc=$?
[ "$rc" -eq 2 ] && grep -q "$WORK/missing" <<<"$out" || { echo "bad dir: exit $rc: $out"; exit 1; }
echo "profile cancel: ok"
