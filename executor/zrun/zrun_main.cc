// zrun: run a zplan plan for real (ZeRO-3 on the CPU backend, several ranks under mpirun,
// NVMe offload through io_uring) and report measured against predicted.
// Exit codes: 0 ok, 1 runtime failure, 2 bad input or usage.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <unistd.h>

#include <csignal>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>
#include <thread>

#include "core/cpu_clock.h"
#include "core/file_util.h"
#include "core/hw_profile.h"
#include "core/process_env.h"
#include "core/units.h"
#include "executor/comm/loopback_comm.h"
#include "executor/comm/mpi_comm.h"
#include "executor/comm/mpi_session.h"
#include "executor/comm/shm_comm.h"
#include "executor/train/checkpoint.h"
#include "executor/train/compute_priority.h"
#include "executor/train/test_hooks.h"
#include "executor/backend/speed_check.h"
#include "executor/storage/drive_check.h"
#include "executor/train/trainer.h"
#include "executor/zrun/run_report.h"
#include "reports/chrome_trace.h"

namespace {

using namespace zinf;

struct Args {
  std::string plan, data, out = "zrun-out", nvme_dir;
  int64_t steps = 10;
  float lr = 3e-4f;
  uint64_t seed = 1234;
  int threads = 0;
  int compute_nice = -1;  // -1: DefaultComputeNice
  std::string bind = "auto";  // auto | core | none
  bool quiet = false;
  bool allow_backend_mismatch = false;
  std::string checkpoint_dir, resume, export_safetensors;
  int64_t checkpoint_every = 0;
  int keep_checkpoints = 2;
  int64_t trace_steps = 10;
  double comm_timeout_s = 600;
  std::string comm = "auto";  // auto | mpi | shm
  int speed_checks = 32;      // compute-speed checks between steps, about evenly spaced (0: none)
};

volatile std::sig_atomic_t g_stop_signal = 0;
// The first SIGINT/SIGTERM stops after the current step (checkpointed); a second one ends
// the process at once with the signal's default action.
void OnStopSignal(int sig) {
  if (g_stop_signal) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
  g_stop_signal = sig;
}

// Rows of an earlier run's metrics.csv for steps before `first_step` (a resumed run keeps
// them and appends its own).
std::string PriorMetricsRows(const std::string& path, int64_t first_step) {
  auto text = ReadFile(path);
  if (!text.ok()) return "";
  std::istringstream in(*text);
  std::string line, out;
  std::getline(in, line);  // header
  while (std::getline(in, line))
    if (!line.empty() && std::strtoll(line.c_str(), nullptr, 10) < first_step) out += line + "\n";
  return out;
}

bool UnderMpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(v)) return true;
  return false;
}

// Whether the ranks' collectives go through a shared-memory segment: --comm shm, or auto
// with every rank on this node (their host names, gathered over `mpi`, all equal).
Result<bool> UseShmComm(const std::string& kind, Comm& mpi) {
  if (kind == "mpi" || mpi.size() == 1) return false;
  char host[64] = {};
  ::gethostname(host, sizeof(host) - 1);
  std::vector<char> all(sizeof(host) * static_cast<size_t>(mpi.size()));
  ZINF_RETURN_IF_ERROR(mpi.AllGatherBytes(host, sizeof(host), all.data()));
  int nodes_differ = 0;
  for (int q = 1; q < mpi.size(); ++q)
    if (std::memcmp(all.data(), all.data() + static_cast<size_t>(q) * sizeof(host), sizeof(host)) != 0) ++nodes_differ;
  if (nodes_differ > 0 && kind == "shm")
    return InvalidArgument(fmt::format("{} of {} ranks run on another host than rank 0; shared memory needs one node",
                                       nodes_differ, mpi.size()));
  return nodes_differ == 0;
}

Status Run(const Args& a, Comm& comm, const std::string& plan_path) {
  const int rank = comm.rank();
  ZINF_ASSIGN_OR_RETURN(Plan plan, LoadPlan(plan_path));
  if (plan.backend != "cpu" && !a.allow_backend_mismatch)
    return InvalidArgument(fmt::format("{}: key 'hardware.backend' is '{}', but this zrun runs the CPU backend; plan with a CPU "
                                       "profile (zplan profile) or pass --allow-backend-mismatch", plan_path, plan.backend));
  ZINF_RETURN_IF_ERROR(MakeDirs(a.out));
  TrainOptions o;
  o.data_path = a.data;
  o.lr = a.lr;
  o.seed = a.seed;
  o.threads = a.threads;
  o.nvme_dir = a.nvme_dir;
  if (!o.nvme_dir.empty()) plan.knobs.nvme_dir = o.nvme_dir;
  ZINF_ASSIGN_OR_RETURN(o.nvme_faults, TestNvmeFaultsFromEnv());
  if (!a.resume.empty()) {
    ZINF_ASSIGN_OR_RETURN(o.resume_from, ResolveCheckpoint(a.resume));
    if (rank == 0 && !a.quiet) std::fprintf(stderr, "zrun: resuming from %s\n", o.resume_from.c_str());
  }
  // More ranks than cores: each rank's threads on one core of their own (before the lanes and
  // the thread team exist, so that they inherit it), unless the launcher bound them already.
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  const int on_node = RanksOnThisNode(comm.size());
  if (a.bind == "core") {
    ZINF_RETURN_IF_ERROR(BindThreadToCpu(LocalRank(rank)).WithContext("--bind core"));
  } else if (a.bind == "auto" && cores > 0 && on_node > cores && ThreadAffinityIsUnrestricted()) {
    // An optimisation only: where the kernel refuses, the rank runs unbound.
    if (Status st = BindThreadToCpu(LocalRank(rank)); !st.ok() && !a.quiet)
      std::fprintf(stderr, "zrun: rank %d runs unbound (--bind auto): %s\n", rank, st.ToString().c_str());
  }
  auto trainer = Trainer::Create(plan, &comm, o);
  if (!trainer.ok()) return trainer.status();
  Trainer& t = **trainer;
  // After the workers exist (they keep their priority); kernels run on this thread.
  const int nice = a.compute_nice >= 0 ? a.compute_nice : DefaultComputeNice(on_node, cores);
  ZINF_RETURN_IF_ERROR(SetThreadNice(nice));
  reports::ChromeTraceWriter trace;
  trace.SetMetadata("source", "measured");
  trace.SetMetadata("plan", plan_path);
  trace.SetMaxEvents(size_t{2} << 20);  // ~0.3 GB at most, whatever the plan
  if (a.trace_steps > 0) t.engine().SetTrace(&trace, rank);
  RunSummary sum;
  sum.plan_path = plan_path;
  sum.data_path = a.data;
  sum.ranks = comm.size();
  const std::string metrics_path = a.out + "/metrics.csv";
  const std::string prior_rows = t.start_step() > 0 ? PriorMetricsRows(metrics_path, t.start_step()) : "";
  auto checkpoint = [&](int64_t done) -> Status {
    if (a.checkpoint_dir.empty()) return Status::Ok();
    Status st = t.SaveCheckpoint(a.checkpoint_dir, done, a.keep_checkpoints);
    if (st.ok() && rank == 0 && !a.quiet)
      std::fprintf(stderr, "\nzrun: checkpoint %s/%s\n", a.checkpoint_dir.c_str(), CheckpointDirName(done).c_str());
    return st.WithContext(fmt::format("checkpoint after step {}", done));
  };
  int64_t done = t.start_step();
  // CPU time of this rank's threads from the end of the first step to the end of the last.
  auto cpu_now = [&] {
    const Zero3Stats io = t.engine().stats();
    return CpuSnapshot{ProcessCpuSeconds(), CurrentThreadCpuSeconds(), io.nvme_cpu_s, io.h2d_cpu_s, io.comm_cpu_s, ReadNodeCpuTimes()};
  };
  CpuSnapshot cpu_first;
  // The plan's profile where it is readable: the speed checks' rates, the NVMe bound's bandwidths.
  const Result<HwProfile> hw = LoadHwProfile(plan.hw_path);
  // Compute-speed checks after the first step and then every `every` steps, on rank 0 alone (as
  // the profile measured). Rank 0 decides and tells the others, so every rank meets the barriers.
  std::unique_ptr<SpeedCheck> speed;
  if (a.speed_checks > 0 && rank == 0 && hw.ok()) {
    ZINF_ASSIGN_OR_RETURN(speed, SpeedCheck::Create(&t.backend(), plan, *hw));
  }
  // Drive-speed checks beside them where the plan puts anything on NVMe: a few reads and
  // writes of the lane curves' kind through a store of the plan's settings, in its directory.
  // A diagnostic: where it cannot start or fails, the run goes on without it (a warning).
  std::unique_ptr<DriveCheck> drive;
  SpeedTotals drive_read, drive_write;  // its totals so far
  const Placement& pl = plan.knobs.placement;
  if (a.speed_checks > 0 && rank == 0 && hw.ok() &&
      (pl.params == Tier::kNvme || pl.grads == Tier::kNvme || pl.optimizer == Tier::kNvme)) {
    DriveCheckOptions dco;
    dco.dir = a.nvme_dir.empty() ? plan.knobs.nvme_dir : a.nvme_dir;
    dco.io.block_size_bytes = static_cast<uint64_t>(plan.knobs.nvme_block_size);
    dco.io.queue_depth = static_cast<uint32_t>(plan.knobs.nvme_queue_depth);
    Result<std::unique_ptr<DriveCheck>> dc = DriveCheck::Create(dco, *hw);
    if (dc.ok()) drive = std::move(*dc);
    else std::fprintf(stderr, "zrun: warning: no drive-speed checks: %s\n", dc.status().ToString().c_str());
  }
  float checking = speed || drive ? 1.0f : 0.0f;
  if (comm.size() > 1) ZINF_RETURN_IF_ERROR(comm.Broadcast(&checking, 1, 0));
  const int64_t every = std::max<int64_t>(1, (a.steps - t.start_step()) / std::max(1, a.speed_checks));
  CpuSnapshot cpu_checks;  // what the checks cost, left out of the CPU per step
  auto check_speed = [&]() -> Status {
    const CpuSnapshot before = cpu_now();
    if (comm.size() > 1) ZINF_RETURN_IF_ERROR(comm.Barrier());
    if (speed) speed->Run();
    if (drive) {
      if (Status st = drive->Run(); st.ok()) {
        drive_read = drive->read_totals();
        drive_write = drive->write_totals();
      } else {
        std::fprintf(stderr, "zrun: warning: drive-speed checks stopped: %s\n", st.ToString().c_str());
        drive.reset();
      }
    }
    if (comm.size() > 1) ZINF_RETURN_IF_ERROR(comm.Barrier());
    AddCpuBetween(&cpu_checks, before, cpu_now());
    return Status::Ok();
  };
  for (int64_t s = t.start_step(); s < a.steps; ++s) {
    const double ts = trace.NowUs();
    ZINF_ASSIGN_OR_RETURN(StepResult r, t.Step(s));
    if (s == t.start_step()) cpu_first = cpu_now();
    else if (s + 1 == a.steps) sum.cpu = CpuBetween(cpu_first, cpu_now(), static_cast<double>(s - t.start_step()), cpu_checks);
    if (s - t.start_step() < a.trace_steps) trace.Complete(fmt::format("step {}", s), "step", ts, trace.NowUs() - ts, rank, 5);
    if (s - t.start_step() + 1 == a.trace_steps) t.engine().SetTrace(nullptr, rank);  // the trace stays bounded
    sum.steps.push_back(r);
    done = s + 1;
    if (checking > 0 && (s - t.start_step()) % every == 0) ZINF_RETURN_IF_ERROR(check_speed());
    if (rank == 0) {
      std::string csv = MetricsCsv(sum);
      ZINF_RETURN_IF_ERROR(WriteFileAtomic(metrics_path, csv.insert(csv.find('\n') + 1, prior_rows)));
    }
    if (rank == 0 && !a.quiet) {
      std::fprintf(stderr, "\rzrun: step %lld/%lld  loss %.4f  step %s  %.0f tokens/s   ", (long long)(s + 1),
                   (long long)a.steps, r.loss, FormatSeconds(r.step_s).c_str(), r.tokens_per_s);
      std::fflush(stderr);
    }
    // A signal on any rank stops every rank after the same step.
    float stop = g_stop_signal ? 1.0f : 0.0f;
    if (comm.size() > 1) ZINF_RETURN_IF_ERROR(comm.AllReduce(&stop, 1));
    if (stop > 0) {
      ZINF_RETURN_IF_ERROR(checkpoint(done));
      return Aborted(fmt::format("stopped by a signal after step {}{}", done,
                                 a.checkpoint_dir.empty() ? " (no --checkpoint-dir: state not saved)"
                                                          : "; continue with --resume " + a.checkpoint_dir));
    }
    if (a.checkpoint_every > 0 && done % a.checkpoint_every == 0 && done < a.steps) ZINF_RETURN_IF_ERROR(checkpoint(done));
  }
  if (rank == 0 && !a.quiet && !sum.steps.empty()) std::fprintf(stderr, "\n");
  if (!sum.steps.empty() || t.start_step() == 0) ZINF_RETURN_IF_ERROR(checkpoint(done));
  if (!a.export_safetensors.empty()) {
    ZINF_RETURN_IF_ERROR(t.ExportSafetensors(a.export_safetensors, {{"format", "pt"},
                                                                    {"producer", "zinf zrun"},
                                                                    {"model", plan.model.name},
                                                                    {"step", std::to_string(done)}}));
    if (rank == 0) std::printf("zrun: wrote %s (fp32 weights after %lld steps)\n", a.export_safetensors.c_str(), (long long)done);
  }
  if (sum.steps.empty()) {
    if (rank == 0) std::printf("zrun: the checkpoint is at step %lld, nothing to train for --steps %lld\n", (long long)done,
                               (long long)a.steps);
    return Status::Ok();
  }
  trace.SetThreadName(rank, 5, "step");
  Summarise(sum);
  sum.device_peak_bytes = static_cast<double>(t.backend().Peak());
  sum.host_bytes = t.engine().host_bytes() + t.activation_host_bytes();
  sum.nvme_bytes = t.engine().nvme_bytes();
  sum.io = t.engine().stats();
  if (speed) {
    sum.speed = speed->totals();
    sum.memory_speed = speed->memory_totals();
  }
  sum.drive_read = drive_read;
  sum.drive_write = drive_write;
  if (hw.ok()) {  // each rank's share of the node's drive
    const double g = static_cast<double>(plan.knobs.gpus_per_node);
    sum.nvme_read_bw = hw->nvme_read_bw_node > 0 ? hw->nvme_read_bw_node / g : hw->nvme_read_bw;
    sum.nvme_write_bw = hw->nvme_write_bw_node > 0 ? hw->nvme_write_bw_node / g : hw->nvme_write_bw;
  }
  const std::string suffix = rank == 0 ? "" : fmt::format("-rank{}", rank);
  if (trace.dropped() > 0) trace.SetMetadata("dropped_events", std::to_string(trace.dropped()));
  ZINF_RETURN_IF_ERROR(trace.Write(a.out + "/trace" + suffix + ".json"));
  if (rank != 0) return Status::Ok();
  ZINF_RETURN_IF_ERROR(WriteFileAtomic(a.out + "/summary.yaml", SummaryYaml(sum, plan)));
  ZINF_RETURN_IF_ERROR(WriteRunReport(sum, plan, a.out + "/report.html"));
  const double pred = plan.prediction.step_time_s;
  std::printf("zrun: %s, %d rank(s), %zu steps: loss %.4f -> %.4f\n", plan.model.name.c_str(), comm.size(), sum.steps.size(),
              sum.steps.front().loss, sum.steps.back().loss);
  std::printf("  step time measured %s, predicted %s (%s): error %+.1f%%\n", FormatSeconds(sum.measured_step_s).c_str(),
              FormatSeconds(pred).c_str(), plan.prediction.model.c_str(), pred > 0 ? 100.0 * (sum.measured_step_s - pred) / pred : 0.0);
  std::printf("  peak device %s (budget %s, predicted %s), host %s, nvme %s\n", FormatBytes(sum.device_peak_bytes).c_str(),
              FormatBytes(plan.knobs.device_budget_bytes).c_str(), FormatBytes(plan.prediction.device_bytes).c_str(),
              FormatBytes(sum.host_bytes).c_str(), FormatBytes(sum.nvme_bytes).c_str());
  if (sum.speed.checks > 0)
    std::printf("  compute ran at %.2fx the profile's GEMM rates (%d checks between steps: %.2f .. %.2f)\n", sum.speed.Ratio(),
                sum.speed.checks, sum.speed.min, sum.speed.max);
  if (sum.memory_speed.checks > 0)
    std::printf("  memory copies ran at %.2fx the profile's bandwidth (%d checks: %.2f .. %.2f)\n", sum.memory_speed.Ratio(),
                sum.memory_speed.checks, sum.memory_speed.min, sum.memory_speed.max);
  if (sum.drive_read.checks > 0)
    std::printf("  the drive read at %.2fx and wrote at %.2fx the profile's lane rates (%d checks between steps)\n",
                sum.drive_read.Ratio(), sum.drive_write.Ratio(), sum.drive_read.checks);
  if (const NvmeBound nb = NvmeBoundPerStep(sum); nb.bound_s > 0)
    std::printf("  nvme %s read + %s written per step: bound %s at the profile's bandwidths; step/bound %.2f\n",
                FormatBytes(nb.read_bytes).c_str(), FormatBytes(nb.write_bytes).c_str(), FormatSeconds(nb.bound_s).c_str(),
                sum.measured_step_s / nb.bound_s);
  if (sum.cpu.measured)
    std::printf("  cpu per step (rank 0): compute %s, nvme lane %s, h2d lane %s, network lane %s, other %s; node's cores %.0f%% busy\n",
                FormatSeconds(sum.cpu.compute).c_str(), FormatSeconds(sum.cpu.nvme_read).c_str(), FormatSeconds(sum.cpu.h2d).c_str(),
                FormatSeconds(sum.cpu.network).c_str(), FormatSeconds(sum.cpu.other).c_str(), 100 * sum.cpu.node_busy_fraction);
  std::printf("  wrote %s/{metrics.csv, summary.yaml, report.html, trace.json}\n", a.out.c_str());
  return Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  EnsurePassiveOpenMpWait(argv);
  Args a;
  CLI::App app{"zrun: run a zplan plan (ZeRO-3 on the CPU backend; several ranks under mpirun).\n"
               "Exit codes: 0 ok, 1 runtime failure, 2 bad input or usage."};
  app.add_option("--plan", a.plan, "plan.yaml from zplan plan")->required();
  app.add_option("--data", a.data, "training data: any text file (byte-level) or a uint16 .bin token file")->required();
  app.add_option("--steps", a.steps, "optimizer steps in total (a resumed run continues up to this step)")->check(CLI::Range(int64_t{1}, int64_t{1} << 40))->capture_default_str();
  app.add_option("--out", a.out, "output directory")->capture_default_str();
  app.add_option("--lr", a.lr, "Adam learning rate")->capture_default_str();
  app.add_option("--seed", a.seed, "initialisation seed")->capture_default_str();
  app.add_option("--threads", a.threads, "compute threads per rank (default: cores / ranks)");
  app.add_option("--compute-nice", a.compute_nice,
                 "nice value of the compute thread, 0..19 (default: 10 when the node runs more ranks than cores, so "
                 "that communication and I/O workers are not queued behind compute, else 0)")
      ->check(CLI::Range(0, 19));
  app.add_option("--bind", a.bind,
                 "pin the rank's threads to one CPU (the local rank's, modulo the CPUs allowed): auto (when the node runs "
                 "more ranks than cores and the launcher did not bind them), core (always), none")
      ->check(CLI::IsMember({"auto", "core", "none"}))
      ->capture_default_str();
  app.add_option("--nvme-dir", a.nvme_dir, "override the plan's NVMe directory");
  app.add_option("--checkpoint-dir", a.checkpoint_dir,
                 "write checkpoints here (every --checkpoint-every steps, at the end, and on SIGINT/SIGTERM: the first signal stops "
                 "after the current step, a second one at once)");
  app.add_option("--checkpoint-every", a.checkpoint_every, "steps between checkpoints (0: only at the end)")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--keep-checkpoints", a.keep_checkpoints, "complete checkpoints kept (older ones are deleted; 0: all)")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--resume", a.resume,
                 "continue from a checkpoint (a --checkpoint-dir, or one step-N directory in it); --steps is the total; "
                 "any rank count (re-shards)");
  app.add_option("--export-safetensors", a.export_safetensors, "write the consolidated fp32 weights here at the end");
  app.add_option("--comm-timeout", a.comm_timeout_s,
                 "seconds a collective may wait for the other ranks before the run stops with an error (0: forever)")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--comm", a.comm,
                 "collectives between ranks: shm (a shared-memory segment; the ranks sleep while they wait), mpi, or "
                 "auto (shm when every rank is on this node, else mpi)")
      ->check(CLI::IsMember({"auto", "mpi", "shm"}))->capture_default_str();
  app.add_option("--trace-steps", a.trace_steps, "steps recorded in trace.json (the first ones; bounds its size)")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--speed-checks", a.speed_checks,
                 "CPU backend: times to check the compute's speed against the plan's profile between steps (the plan's "
                 "linear GEMMs on rank 0, the other ranks waiting; at least 20 ms each, not counted in the step times; "
                 "reported as compute_speed in summary.yaml); where the plan puts anything on NVMe, also the drive's "
                 "(4 reads and 4 writes of 4 MiB on rank 0 through a store of the plan's settings, against the profile's "
                 "lane curves; reported as drive_speed; any backend); 0: none")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_flag("--quiet", a.quiet, "no progress line");
  app.add_flag("--allow-backend-mismatch", a.allow_backend_mismatch, "run a plan made for another backend on the CPU backend");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int r = app.exit(e);
    return r == 0 ? 0 : 2;
  }
  std::unique_ptr<MpiSession> mpi;
  std::unique_ptr<Comm> comm, boot;
  if (UnderMpi()) {
    auto s = MpiSession::Init(&argc, &argv);
    if (!s.ok()) {
      std::fprintf(stderr, "zrun: error: %s\n", s.status().ToString().c_str());
      return 1;
    }
    mpi = std::move(*s);
    CommOptions co;
    co.timeout_s = a.comm_timeout_s;
    auto c = MpiComm::Create(co);
    if (!c.ok()) {
      std::fprintf(stderr, "zrun: error: %s\n", c.status().ToString().c_str());
      return 1;
    }
    comm = std::move(*c);
    Result<bool> shm = UseShmComm(a.comm, *comm);
    if (shm.ok() && *shm) {
      auto sc = ShmComm::ConnectOverComm(*comm, co);
      if (sc.ok()) {
        boot = std::move(comm);  // kept for the job's lifetime; the training collectives go through shm
        comm = std::move(*sc);
      } else if (a.comm == "shm") {
        shm = sc.status();
      } else if (comm->rank() == 0) {  // every rank saw the failure (ConnectOverComm agrees on it)
        std::fprintf(stderr, "zrun: warning: shared-memory collectives unavailable (%s); using MPI\n",
                     sc.status().ToString().c_str());
      }
    }
    if (!shm.ok()) {
      std::fprintf(stderr, "zrun: error: rank %d: --comm %s: %s\n", comm->rank(), a.comm.c_str(),
                   shm.status().ToString().c_str());
      comm.reset();
      boot.reset();
      if (mpi) MpiSession::Abort(2);
      return 2;
    }
  } else {
    comm = std::make_unique<LoopbackComm>();
  }
  std::signal(SIGINT, OnStopSignal);
  std::signal(SIGTERM, OnStopSignal);
  Status st = Run(a, *comm, a.plan);
  if (!st.ok()) {
    std::fprintf(stderr, "zrun: error: rank %d: %s\n", comm->rank(), st.ToString().c_str());
    if (mpi && comm->size() > 1) {
      comm.reset();
      boot.reset();
      MpiSession::Abort(ExitCodeFor(st));
    }
    return ExitCodeFor(st);
  }
  comm.reset();
  boot.reset();
  return 0;
}
