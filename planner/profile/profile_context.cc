#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <set>
#include <thread>

#include "planner/profile/probe.h"
#include "planner/profile/probes.h"

namespace zinf {
namespace {

std::atomic<bool> g_cancel{false};
std::mutex g_files_mu;
std::vector<std::string>* g_files = nullptr;  // the live context's temp files, for the handler

extern "C" void OnSignal(int) {
  g_cancel.store(true);
  // Best effort inside the handler: unlink is async-signal-safe.
  if (g_files) {
    for (const auto& f : *g_files) ::unlink(f.c_str());
  }
}

}  // namespace

void InstallCancelHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool CancelRequested() { return g_cancel.load(); }

ProfileContext::ProfileContext(ProfileOptions o) : opts_(std::move(o)), tty_(::isatty(STDERR_FILENO) == 1) {
  std::lock_guard<std::mutex> l(g_files_mu);
  g_files = &temp_files_;
}

ProfileContext::~ProfileContext() {
  RemoveTempFiles();
  std::lock_guard<std::mutex> l(g_files_mu);
  g_files = nullptr;
}

void ProfileContext::Progress(const std::string& probe, const std::string& what) {
  if (tty_) {  // one status line, rewritten in place
    std::fprintf(stderr, "\r\033[Kzplan profile: [%s] %s", probe.c_str(), what.c_str());
    std::fflush(stderr);
    return;
  }
  // A log (stderr redirected): whole lines, each probe's first and last (its result) and between
  // them at most one every kLogEvery seconds: a profile is a few dozen lines, not a thousand.
  constexpr double kLogEvery = 5.0;
  const std::string line = fmt::format("zplan profile: [{}] {}\n", probe, what);
  const auto now = std::chrono::steady_clock::now();
  if (probe == last_probe_ && std::chrono::duration<double>(now - last_line_).count() < kLogEvery) {
    pending_ = line;
    return;
  }
  if (probe != last_probe_) std::fputs(pending_.c_str(), stderr);
  pending_.clear();
  last_probe_ = probe;
  last_line_ = now;
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

void ProfileContext::EndProgress() {
  if (tty_) std::fprintf(stderr, "\n");
  std::fputs(pending_.c_str(), stderr);
  pending_.clear();
}

bool ProfileContext::cancelled() const { return CancelRequested(); }

void ProfileContext::RegisterTempFile(const std::string& path) {
  std::lock_guard<std::mutex> l(g_files_mu);
  temp_files_.push_back(path);
}

void ProfileContext::RemoveTempFiles() {
  std::lock_guard<std::mutex> l(g_files_mu);
  for (const auto& f : temp_files_) ::unlink(f.c_str());
  temp_files_.clear();
}

std::string ProfileContext::Today() const {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

std::vector<Probe> AllProbes() {
  // Collectives first: under mpirun the other ranks wait in them (within their timeout).
  return {{"collectives", ProbeCollectives}, {"memory", ProbeHostMemory}, {"gemm", ProbeGemm},
          {"copy", ProbeDeviceCopy},         {"nvme", ProbeNvme},         {"adam", ProbeAdam},
          {"overhead", ProbeOpOverhead},     {"scheduler", ProbeScheduler}, {"coupling", ProbeCoupling},
          {"wake", ProbeFetchWake},          {"cuda", ProbeCuda}};  // last: overrides the device values when ZINF_PROFILE_BACKEND=cuda
}

int64_t CpuDevicesPerNode(int64_t cores, int threads) {
  return threads > 0 && threads < cores ? cores / threads : 1;
}

namespace {
HwProfile FreshProfile(const ProfileContext& ctx, const ProfileOptions& o) {
  HwProfile hw;
  char host[256] = "this-box";
  ::gethostname(host, sizeof host - 1);
  hw.name = "measured-" + std::string(host);
  hw.backend = "cpu";
  hw.description = fmt::format("measured by zplan profile{} on {}", o.quick ? " --quick" : "", ctx.Today());
  hw.cpu_cores = std::max(1u, std::thread::hardware_concurrency());
  // The compute probes' threads are one device: all cores by default, else cores / threads
  // devices (a --threads 1 profile describes ranks that run one thread each, as zrun's do
  // when the node runs as many ranks as cores or more).
  hw.gpus_per_node = CpuDevicesPerNode(hw.cpu_cores, o.threads);
  long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  hw.host_memory_bytes = static_cast<double>(pages) * static_cast<double>(page);
  hw.provenance["node.gpus_per_node"] =
      hw.gpus_per_node == 1 ? "setting: CPU backend, one device (this CPU with a capped arena) per rank"
                            : fmt::format("setting: CPU backend, {} devices of {} threads each (cores / --threads)",
                                          hw.gpus_per_node, o.threads);
  hw.provenance["node.cpu_cores"] = "measured: std::thread::hardware_concurrency()";
  hw.provenance["node.host_memory"] = "measured: sysconf(_SC_PHYS_PAGES) x page size";
  return hw;
}
}  // namespace

Result<HwProfile> ProfileThisMachine(const ProfileOptions& o) {
  const std::vector<Probe> probes = AllProbes();
  std::set<std::string> only;
  for (const std::string& name : o.only) {
    bool known = false;
    for (const Probe& p : probes) known = known || p.name == name;
    if (!known) {
      std::string names;
      for (const Probe& p : probes) names += (names.empty() ? "" : ", ") + p.name;
      return InvalidArgument(fmt::format("zplan profile: no probe named '{}' (probes: {})", name, names));
    }
    only.insert(name);
  }
  if (!only.empty() && o.base == nullptr)
    return InvalidArgument("zplan profile: re-measuring some probes needs the profile they update");
  if (!o.nvme_dir.empty() && (only.empty() || only.count("nvme")))
    ZINF_RETURN_IF_ERROR(CheckNvmeDir(o.nvme_dir));  // fail before minutes of probes
  // Re-measured probes run with the base profile's threads per device unless told otherwise,
  // so a --threads profile stays one (its other figures were measured that way).
  ProfileOptions eff = o;
  if (!only.empty() && eff.threads == 0 && o.base->backend == "cpu" && o.base->gpus_per_node > 1)
    eff.threads = static_cast<int>(std::max<int64_t>(1, o.base->cpu_cores / o.base->gpus_per_node));
  ProfileContext ctx(eff);
  HwProfile hw = only.empty() ? FreshProfile(ctx, o) : *o.base;
  if (!only.empty()) {
    std::string names;
    for (const std::string& n : only) names += (names.empty() ? "" : ",") + n;
    hw.description += fmt::format("; {} re-measured on {}", names, ctx.Today());
  }
  for (const Probe& p : probes) {
    if (ctx.cancelled()) break;
    if (!only.empty() && !only.count(p.name)) continue;
    Status s = p.run(ctx, hw);
    if (!s.ok()) {
      ctx.EndProgress();
      return s.WithContext("probe " + p.name);
    }
  }
  ctx.EndProgress();
  if (ctx.cancelled()) return Aborted("zplan profile: interrupted; temporary files removed, no profile written");
  return hw;
}

}  // namespace zinf
