// Fault hooks for the reliability tests, driven by environment variables (never set in
// normal use; documented in docs/formats.md):
//   ZINF_TEST_CRASH=POINT[:STEP[:RANK]]  at POINT (of step STEP, on rank RANK; omitted =
//                                        any) the process kills itself with SIGKILL, like
//                                        kill -9. POINTs: "step" (after forward+backward,
//                                        before the optimizer), "checkpoint" (rank 0, shard
//                                        files written, manifest not yet).
//   ZINF_TEST_HANG=POINT[:STEP[:RANK]]   the same places, but the process stops forever
//                                        (a hung rank: its peers must time out).
//   ZINF_TEST_NVME_FAULT=SPEC            faults injected into the NVMe store (FaultStore):
//                                        enospc_after=BYTES, eio_on_op=N, short_every=N or
//                                        corrupt_offset=BYTES (comma-separated).
#pragma once

#include <cstdint>
#include <optional>

#include "core/status.h"
#include "executor/storage/fault_store.h"

namespace zinf {

void TestHookPoint(const char* point, int64_t step, int rank);
// Empty when ZINF_TEST_NVME_FAULT is unset; InvalidArgument naming it when malformed.
Result<std::optional<FaultSpec>> TestNvmeFaultsFromEnv();

}  // namespace zinf
