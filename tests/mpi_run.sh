#!/usr/bin/env bash
# Runs a test binary on NP local MPI ranks: tests/mpi_run.sh NP BINARY [ARGS...]
# Works as root and oversubscribed (2-core CI boxes), loopback/shared memory only.
# Exit 77 (meson: skipped) when mpirun is not installed.
set -u
if [ $# -lt 2 ]; then
  echo "usage: $0 NP BINARY [ARGS...]" >&2
  exit 2
fi
np=$1
shift
if ! command -v mpirun >/dev/null 2>&1; then
  echo "mpirun not found: skipping MPI test" >&2
  exit 77
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if mpirun --version 2>&1 | grep -q "Open MPI"; then
  # self + shared-memory transport only; no CMA (ptrace may be forbidden in containers).
  exec mpirun --oversubscribe --bind-to none -np "$np" \
    --mca btl self,vader --mca btl_vader_single_copy_mechanism none \
    --mca oob_tcp_if_include lo "$@"
fi
exec mpirun -np "$np" "$@"  # MPICH / other launchers
