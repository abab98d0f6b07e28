#!/usr/bin/env bash
# zplan profile's NVMe probe side by side with fio on the same directory, block size and
# queue depth (io_uring, O_DIRECT), run one after the other in one go.
# Usage: bash bench/nvme_vs_fio.sh DIR [SIZE_MiB]   (needs build/ and, for the fio column, fio)
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:?usage: nvme_vs_fio.sh DIR [SIZE_MiB]}
SIZE=${2:-512}
Z=build/planner/zplan
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"; rm -f "$DIR/zinf-fio.dat"' EXIT
"$Z" profile --nvme-dir "$DIR" --out "$TMP/hw.yaml" 2> /dev/null > /dev/null
# Section-aware lookup of "section: key: value" in the profile YAML.
val() { awk -v sec="$1:" -v key="$2:" '$0 ~ "^[a-z]" {cur=$1} cur==sec && $1==key {print $2; exit}' "$TMP/hw.yaml"; }
BS=$(val nvme block_size) QD=$(val nvme queue_depth) ZR=$(val bandwidth nvme_read) ZW=$(val bandwidth nvme_write)
echo "zplan profile: best block $BS, queue depth $QD"
if ! command -v fio > /dev/null; then
  echo "fio is not installed (apt-get install fio); zinf alone: read $ZR B/s, write $ZW B/s"
  exit 0
fi
fio_bw() {  # fio_bw RW
  fio --name=zinf --filename="$DIR/zinf-fio.dat" --rw="$1" --bs="$BS" --iodepth="$QD" --ioengine=io_uring \
      --direct=1 --size="${SIZE}M" --output-format=json 2> /dev/null |
    python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]; print(j["read"]["bw_bytes"] + j["write"]["bw_bytes"])'
}
FW=$(fio_bw write)
FR=$(fio_bw read)
python3 - "$ZR" "$ZW" "$FR" "$FW" <<'PY'
import sys
zr, zw, fr, fw = map(float, sys.argv[1:])
print(f"{'':8}{'zinf':>14}{'fio':>14}{'zinf/fio':>10}")
print(f"{'read':8}{zr/1e9:>11.2f} GB/s{fr/1e9:>9.2f} GB/s{zr/fr:>10.2f}")
print(f"{'write':8}{zw/1e9:>11.2f} GB/s{fw/1e9:>9.2f} GB/s{zw/fw:>10.2f}")
PY
