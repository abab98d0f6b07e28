#!/usr/bin/env bash
# Installs zinf's build and test dependencies (Debian packages only). Needs root or sudo.
set -euo pipefail
PKGS=(meson ninja-build g++ pkg-config libeigen3-dev libyaml-cpp-dev libfmt-dev liburing-dev
      libgtest-dev libbenchmark-dev libopenmpi-dev openmpi-bin nlohmann-json3-dev libcli11-dev)
missing=()
for p in "${PKGS[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#PKGS[@]} packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "deps: installing ${missing[*]}"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
