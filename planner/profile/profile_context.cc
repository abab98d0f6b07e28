#include <fmt/format.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <ctime>
#include <mutex>
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

ProfileContext::ProfileContext(ProfileOptions o) : opts_(std::move(o)) {
  std::lock_guard<std::mutex> l(g_files_mu);
  g_files = &temp_files_;
}

ProfileContext::~ProfileContext() {
  RemoveTempFiles();
  std::lock_guard<std::mutex> l(g_files_mu);
  g_files = nullptr;
}

void ProfileContext::Progress(const std::string& probe, const std::string& what) {
  std::fprintf(stderr, "\r\033[Kzplan profile: [%s] %s", probe.c_str(), what.c_str());
  std::fflush(stderr);
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
          {"overhead", ProbeOpOverhead},
          {"cuda", ProbeCuda}};  // last: overrides the device values when ZINF_PROFILE_BACKEND=cuda
}

Result<HwProfile> ProfileThisMachine(const ProfileOptions& o) {
  if (!o.nvme_dir.empty()) ZINF_RETURN_IF_ERROR(CheckNvmeDir(o.nvme_dir));  // fail before minutes of probes
  ProfileContext ctx(o);
  HwProfile hw;
  char host[256] = "this-box";
  ::gethostname(host, sizeof host - 1);
  hw.name = "measured-" + std::string(host);
  hw.backend = "cpu";
  hw.description = fmt::format("measured by zplan profile{} on {}", o.quick ? " --quick" : "", ctx.Today());
  hw.gpus_per_node = 1;
  hw.cpu_cores = std::max(1u, std::thread::hardware_concurrency());
  long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  hw.host_memory_bytes = static_cast<double>(pages) * static_cast<double>(page);
  hw.provenance["node.gpus_per_node"] = "setting: CPU backend, one device (this CPU with a capped arena) per rank";
  hw.provenance["node.cpu_cores"] = "measured: std::thread::hardware_concurrency()";
  hw.provenance["node.host_memory"] = "measured: sysconf(_SC_PHYS_PAGES) x page size";
  for (const Probe& p : AllProbes()) {
    if (ctx.cancelled()) break;
    Status s = p.run(ctx, hw);
    if (!s.ok()) {
      std::fprintf(stderr, "\n");
      return s.WithContext("probe " + p.name);
    }
  }
  std::fprintf(stderr, "\n");
  if (ctx.cancelled()) return Aborted("zplan profile: interrupted; temporary files removed, no profile written");
  return hw;
}

}  // namespace zinf
