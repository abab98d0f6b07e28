// zplan profile: measure this machine into a hardware profile YAML (CPU backend).
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "core/units.h"
#include "planner/cli/commands.h"
#include "executor/comm/mpi_comm.h"
#include "executor/comm/mpi_session.h"
#include "planner/profile/probe.h"
#include "planner/profile/probes.h"

namespace zinf {
namespace {

struct ProfileArgs {
  std::string out;
  std::string nvme_dir;
  bool quick = false;
  std::string device_memory = "4GiB";
  std::string name;
  int threads = 0;
  std::vector<std::string> only;
  std::string update;
};

int RunProfile(const ProfileArgs& a) {
  ProfileOptions o;
  o.nvme_dir = a.nvme_dir;
  o.quick = a.quick;
  o.threads = a.threads;
  o.only = a.only;
  HwProfile base;
  if (!a.update.empty()) {
    Result<HwProfile> b = LoadHwProfile(a.update);
    if (!b.ok()) return Fail(b.status());
    base = std::move(*b);
    o.base = &base;
  }
  Result<double> dm = ParseBytes(a.device_memory);
  if (!dm.ok()) return Fail(InvalidArgument("--device-memory: " + dm.status().message()));
  o.device_memory_bytes = *dm;
  InstallCancelHandlers();
  // Under mpirun: rank 0 profiles, every rank takes part in the collective sweep.
  std::unique_ptr<MpiSession> mpi;
  std::unique_ptr<Comm> comm;
  if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE")) {
    auto s = MpiSession::Init(nullptr, nullptr);
    if (!s.ok()) return Fail(s.status());
    mpi = std::move(*s);
    auto c = MpiComm::Create();
    if (!c.ok()) return Fail(c.status());
    comm = std::move(*c);
    o.comm = comm.get();
    if (comm->rank() != 0) {
      CollectiveCurve cc;
      Status st = MeasureCollectiveCurve(*comm, o.quick, &cc);
      comm.reset();
      return st.ok() ? 0 : Fail(st);
    }
  }
  Result<HwProfile> hw = ProfileThisMachine(o);
  comm.reset();
  if (!hw.ok()) return Fail(hw.status());
  if (!a.name.empty()) hw->name = a.name;
  Status s = SaveHwProfile(*hw, a.out);
  if (!s.ok()) return Fail(s);
  std::printf("zplan profile: wrote %s\n", a.out.c_str());
  std::printf("  GEMM %s (peak curve point %s), memory copy %s, device copy %s\n", FormatFlops(hw->achievable_flops).c_str(),
              FormatFlops(hw->peak_flops).c_str(), FormatBandwidth(hw->host_mem_bw).c_str(), FormatBandwidth(hw->h2d_bw).c_str());
  std::printf("  NVMe read %s write %s (block %s, queue depth %lld), CPU Adam %.3g params/s, allgather %s\n",
              FormatBandwidth(hw->nvme_read_bw).c_str(), FormatBandwidth(hw->nvme_write_bw).c_str(),
              FormatBytes(static_cast<double>(hw->nvme_block_size)).c_str(), (long long)hw->nvme_queue_depth,
              hw->cpu_adam_params_per_s, FormatBandwidth(hw->intra_node_bw).c_str());
  return 0;
}

}  // namespace

void RegisterProfile(CLI::App& app, std::function<void(int)> set_rc) {
  auto args = std::make_shared<ProfileArgs>();
  CLI::App* cmd = app.add_subcommand("profile", "measure this machine (GEMM, memory, copies, NVMe over io_uring, CPU Adam, collectives)");
  cmd->add_option("--out,-o", args->out, "profile YAML to write")->required();
  cmd->add_option("--nvme-dir", args->nvme_dir, "directory on the NVMe drive for the I/O probe (files are removed afterwards)");
  cmd->add_flag("--quick", args->quick, "a shorter profile (under a minute on 2 cores)");
  cmd->add_option("--device-memory", args->device_memory, "CPU backend: the device arena budget to record")->capture_default_str();
  cmd->add_option("--name", args->name, "profile name (default: measured-<hostname>)");
  cmd->add_option("--threads", args->threads, "threads for compute probes (default: all cores)")->check(CLI::Range(0, 4096));
  cmd->add_option("--only", args->only,
                  "re-measure only these probes (collectives, memory, gemm, copy, nvme, adam, overhead, scheduler, coupling, wake; comma-separated) "
                  "into the --update profile, keeping its other figures")
      ->delimiter(',');
  cmd->add_option("--update", args->update,
                  "the profile that --only re-measures into (written to --out), with its threads per device unless --threads");
  cmd->callback([args, set_rc] {
    if (!args->only.empty() && args->update.empty()) {
      set_rc(Fail(InvalidArgument("zplan profile: --only needs --update PROFILE (the figures it does not re-measure)")));
      return;
    }
    if (args->only.empty() && !args->update.empty()) {
      set_rc(Fail(InvalidArgument("zplan profile: --update needs --only PROBES (without it the whole profile is measured anew)")));
      return;
    }
    set_rc(RunProfile(*args));
  });
}

}  // namespace zinf
