// Training checkpoints: every rank's shards of the fp32 parameters and Adam's m and v, plus
// the step, the Adam step count and what the data sampler needs, in one directory per step:
//
//   ROOT/step-000120/rank-00000.bin ... rank-<R-1>.bin   per group, in group order, the real
//                                                        (unpadded) elements of the rank's
//                                                        shard: params, then m, then v
//   ROOT/step-000120/manifest.yaml                       zinf.checkpoint/v1: step, ranks,
//                                                        groups, each file's bytes + CRC-32C
//   ROOT/latest                                          "step-000120"
//
// Atomic: the ranks write into step-N.tmp/, fsync their files; rank 0 writes the manifest
// (temporary name, fsync, rename), renames the directory to step-N, fsyncs ROOT and only
// then points `latest` at it. A crash at any point leaves the previous checkpoint intact
// and `latest` pointing at a complete one; stale .tmp directories are removed by the next
// save. Older checkpoints beyond `keep` are deleted after the new one is complete.
//
// Restore: any rank count. Rank r' of R' reads the element range of each group it now owns
// from whichever old ranks' files hold it (re-sharding), after checking every file it reads
// against the manifest's size and CRC-32C. With the same rank count the state is restored
// bit for bit, so the losses after a resume equal an uninterrupted run's exactly.
// The data sampler is stateless (a batch is a pure function of the step), so the step is
// its whole position; there is no other RNG state in training (no dropout).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "executor/comm/comm.h"
#include "executor/model/param_groups.h"
#include "executor/zero3/coordinator.h"

namespace zinf {

struct CheckpointMeta {
  int64_t step = 0;          // steps completed: training resumes at this step index
  int64_t adam_step = 0;
  int ranks = 1;
  std::string model;         // the plan's model name
  uint64_t seed = 0;         // initialisation seed (informational once trained)
  std::string data_path;
  int64_t data_tokens = 0;   // the data file must have as many tokens on resume
  float lr = 0;
};

struct CheckpointFile {
  int rank = 0;
  std::string name;          // "rank-00003.bin"
  uint64_t bytes = 0;
  uint32_t crc32c = 0;
};

struct CheckpointManifest {
  CheckpointMeta meta;
  std::vector<std::string> group_names;
  std::vector<uint64_t> group_numel;
  std::vector<CheckpointFile> files;
};

std::string CheckpointDirName(int64_t step);  // "step-000120"

// Collective: every rank calls it with the same arguments (crash_hook: tests only).
Status SaveCheckpoint(const std::string& root, const CheckpointMeta& meta, const std::vector<ParamGroup>& groups,
                      Zero3Engine& engine, Comm& comm, int keep = 2);

// `path` is a checkpoint root (uses `latest`, else the newest complete step-* directory)
// or one step directory. NotFound when there is none.
Result<std::string> ResolveCheckpoint(const std::string& path);
Result<CheckpointManifest> LoadManifest(const std::string& step_dir);

// Collective: restores the engine's params, m, v and Adam step from a step directory.
// Checks that the groups match (names and sizes); the rank count may differ.
Result<CheckpointMeta> RestoreCheckpoint(const std::string& step_dir, const std::vector<ParamGroup>& groups,
                                         Zero3Engine& engine, Comm& comm);

// The full fp32 parameters of every group, assembled from a checkpoint's files on this host
// (no communication; used by the safetensors export).
Status ReadCheckpointParams(const std::string& step_dir, const std::vector<ParamGroup>& groups,
                            std::vector<std::vector<float>>* out);

}  // namespace zinf
