#!/usr/bin/env bash
# Configures (once) and builds zinf into ./build. Extra args go to `meson setup`.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
if [ ! -f "$BUILD/build.ninja" ]; then
  meson setup "$BUILD" "$@"
fi
ninja -C "$BUILD" -j"${JOBS:-$(nproc)}"
