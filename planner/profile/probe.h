// Profiler probes: each measures one part of the machine into the HwProfile, verifying the
// data it moves while it measures, and records provenance (method, parameters, date).
// planner/profile is the one part of the planner that links executor libraries: it measures
// the very kernels, copies, I/O paths and collectives zrun runs.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/hw_profile.h"
#include "core/status.h"

namespace zinf {

class Comm;

struct ProfileOptions {
  std::string nvme_dir;         // empty -> skip the NVMe probe (recorded as not measured)
  bool quick = false;           // < 1 minute on a 2-core box
  double device_memory_bytes = 0;  // CPU backend: the arena budget to record
  int threads = 0;              // 0 -> all cores
  Comm* comm = nullptr;         // MPI ranks for the collective probe (null: 2 thread ranks)
  // Re-measure only these probes (names as in AllProbes) into `base`, keeping its other
  // figures: a compute-only refresh takes a minute where the whole profile takes minutes.
  // With threads 0 they run with the base's threads per device (cores / gpus_per_node).
  std::vector<std::string> only;
  const HwProfile* base = nullptr;  // required with `only`
};

// Shared state of one profiling run: progress on stderr, cancellation (Ctrl-C), files to
// remove at the end whatever happens.
class ProfileContext {
 public:
  explicit ProfileContext(ProfileOptions o);
  ~ProfileContext();  // removes registered files
  const ProfileOptions& options() const { return opts_; }
  // Progress of a probe: a status line rewritten in place on a terminal; on a redirected
  // stderr, whole lines (each probe's first and last, and between them at most one every 5 s).
  void Progress(const std::string& probe, const std::string& what);
  void EndProgress();  // ends the status line (terminal) or prints the held-back line (log)
  bool cancelled() const;
  void RegisterTempFile(const std::string& path);
  void RemoveTempFiles();
  std::string Today() const;

 private:
  ProfileOptions opts_;
  std::vector<std::string> temp_files_;
  bool tty_;
  std::string last_probe_, pending_;  // pending_: the last line held back (printed before the next probe's)
  std::chrono::steady_clock::time_point last_line_{};
};

// Installs SIGINT/SIGTERM handlers that set the cancel flag (probes stop at the next check).
void InstallCancelHandlers();
bool CancelRequested();

struct Probe {
  std::string name;
  std::function<Status(ProfileContext&, HwProfile&)> run;
};

// CPU backend: the devices a profile measured with `threads` compute threads (0: all cores)
// describes, cores / threads of them (zrun runs cores / ranks threads per rank).
int64_t CpuDevicesPerNode(int64_t cores, int threads);

// Probes in run order.
std::vector<Probe> AllProbes();

// Runs every probe (or options.only's, over options.base) and fills a profile of this
// machine (backend cpu). Errors: InvalidArgument for an unknown probe name in `only` (the
// message lists the names) or `only` without a base.
Result<HwProfile> ProfileThisMachine(const ProfileOptions& o);

}  // namespace zinf
