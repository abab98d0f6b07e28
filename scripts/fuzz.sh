#!/usr/bin/env bash
# Fuzzes zinf's file readers with libFuzzer (clang, -fsanitize=fuzzer,address,undefined):
# model YAML, Hugging Face config.json, hardware profile, plan and DeepSpeed ds_config.
# Builds into build-fuzz/ (core/*.cc compiled directly, no meson), then runs each harness for
# FUZZ_SECONDS (default 60) from a seed corpus (models/, hwprofiles/, tests/core/data/,
# tests/fuzz/seeds/ and the regression inputs). Crashing inputs land in
# build-fuzz/crashes/<reader>/; add each to tests/core/data/fuzz_regressions/<reader>/.
#   FUZZ_SECONDS=60 READERS="model hf hw plan ds_config" bash scripts/fuzz.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${FUZZ_BUILD:-build-fuzz}
SECONDS_EACH=${FUZZ_SECONDS:-60}
READERS=${READERS:-"model hf hw plan ds_config"}
CXX=${FUZZ_CXX:-clang++}
JOBS=${JOBS:-2}
command -v "$CXX" > /dev/null || { echo "fuzz.sh: $CXX not found (apt-get install clang)"; exit 1; }
mkdir -p "$OUT/obj"
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
CXXFLAGS="-std=c++20 -O1 -g -fno-omit-frame-pointer -I. $SAN"

# core/*.cc, instrumented for coverage (fuzzer-no-link); rebuilt when any core file changed.
stamp=$OUT/obj/.stamp
if [ ! -f "$stamp" ] || [ -n "$(find core tests/fuzz -newer "$stamp" -name '*.[ch]*' | head -1)" ]; then
  echo "fuzz.sh: compiling core/ with $CXX"
  ls core/*.cc | xargs -P "$JOBS" -I{} sh -c \
    "$CXX $CXXFLAGS -fsanitize=fuzzer-no-link -c {} -o $OUT/obj/\$(basename {} .cc).o" || exit 1
  touch "$stamp"
  rm -f "$OUT"/fuzz_*
fi
id_of() { case $1 in model) echo 1 ;; hf) echo 2 ;; hw) echo 3 ;; plan) echo 4 ;; ds_config) echo 5 ;; esac; }
for r in $READERS; do
  [ -x "$OUT/fuzz_$r" ] && continue
  $CXX $CXXFLAGS -fsanitize=fuzzer -DZINF_FUZZ_READER="$(id_of "$r")" tests/fuzz/fuzz_reader.cc "$OUT"/obj/*.o \
    -lyaml-cpp -lfmt -o "$OUT/fuzz_$r" || exit 1
done

seeds() {  # the seed files of a reader, one directory per line
  local d=tests/core/data/fuzz_regressions/$1
  [ -d "$d" ] && echo "$d"
  [ -d "tests/fuzz/seeds/$1" ] && echo "tests/fuzz/seeds/$1"
}
rc=0
summary=""
for r in $READERS; do
  corpus=$OUT/corpus/$r crashes=$OUT/crashes/$r
  mkdir -p "$corpus" "$crashes"
  case $r in
    model) cp models/*.yaml "$corpus/" ;;
    hf) cp tests/core/data/*.json "$corpus/" ;;
    hw) cp hwprofiles/*.yaml "$corpus/" ;;
  esac
  # shellcheck disable=SC2046
  "$OUT/fuzz_$r" "$corpus" $(seeds "$r") -dict=tests/fuzz/yaml.dict -max_total_time="$SECONDS_EACH" -timeout=10 \
    -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1 -artifact_prefix="$crashes/" > "$OUT/$r.log" 2>&1
  status=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$OUT/$r.log" | grep -o '[0-9]*$' | tail -1)
  found=$(ls "$crashes" | wc -l)
  line="$r: exit $status, ${execs:-?} execs in ${SECONDS_EACH}s, corpus $(ls "$corpus" | wc -l), crash files $found"
  echo "fuzz.sh: $line"
  summary+="$line"$'\n'
  if [ "$status" -ne 0 ]; then
    rc=1
    grep -m1 -A30 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|round trip failed' "$OUT/$r.log"
  fi
done
printf '%s' "$summary"
exit $rc
