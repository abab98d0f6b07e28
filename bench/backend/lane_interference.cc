// What the NVMe lane takes from the compute (CPU backend): the time model charges each NVMe
// request the CPU the profile measured for it (nvme.cpu_per_request_s + cpu_per_byte_s, the
// lane thread's CRC-32C, completions and copies: NvmeCpuTime, planner/model/time_model.cc),
// held up by all of it. This times a GEMM thread team in alternating windows, with the lane
// idle and with it running read/write pairs of one size back to back (TimeLanePair, as the
// profile's lane curves and zrun's drive check do), and prints the team's loss per pair beside
// the lane thread's CPU time per pair: their ratio is what the model takes to be 1.
//
//   build/bench/backend/lane_interference DIR [BYTES...]   (default 65536 1048576 4194304)
//
// Run with zrun's OpenMP settings (OMP_WAIT_POLICY=passive GOMP_SPINCOUNT=30000) on a quiet
// machine; it writes a 256 MiB file in DIR and removes it. Measured on the 2-core VM
// (2026-12-06, 12 window pairs of 0.3 s, the median): loss / lane CPU 1.22, 1.05 and 1.23 at
// 64 KiB, 0.59 at 1 MiB, 1.29, 0.84 and 0.66 at 4 MiB: about 1, within this VM's noise.
#include <fmt/format.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "core/cpu_clock.h"
#include "executor/backend/cpu/kernels.h"
#include "executor/storage/lane_pair.h"
#include "executor/storage/pinned_host_pool.h"
#include "executor/storage/store_factory.h"
#include "planner/profile/timing.h"  // Median

namespace zinf {
namespace {

double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

int Measure(const std::string& dir, uint64_t bytes, int pairs_of_windows, double window_s) {
  constexpr int M = 512, N = 2048, K = 512;  // a cpu-medium linear's GEMM
  std::vector<float> a(size_t{M} * K, 0.01f), b(size_t{K} * N, 0.02f), c(size_t{M} * N);
  constexpr uint64_t kFile = uint64_t{256} << 20;
  auto pool = PinnedHostPool::Create(2 * bytes + (1 << 20), /*lock=*/false);
  if (!pool.ok()) return std::fprintf(stderr, "%s\n", pool.status().ToString().c_str()), 1;
  auto rbuf = (*pool)->AllocBuffer(bytes);
  auto wbuf = (*pool)->AllocBuffer(bytes);
  if (!rbuf.ok() || !wbuf.ok()) return std::fprintf(stderr, "lane_interference: no staging buffers\n"), 1;
  StorageOptions so;
  so.block_size_bytes = 1 << 20;
  so.queue_depth = 8;
  const std::string path = dir + "/zinf-lane-interference.dat";
  auto os = OpenStore(path, so, StoreBackend::kAuto, pool->get(), /*truncate=*/true);
  if (!os.ok()) return std::fprintf(stderr, "%s: %s\n", path.c_str(), os.status().ToString().c_str()), 1;
  Storage& st = *os->store;
  for (uint64_t off = 0; off < kFile; off += bytes)
    if (Status s = st.Write(off, wbuf->data(), bytes); !s.ok()) return std::fprintf(stderr, "%s\n", s.ToString().c_str()), 1;

  std::atomic<bool> on{false}, quit{false};
  std::atomic<long> pairs{0};
  std::atomic<double> lane_cpu{0};
  std::thread lane([&] {
    uint64_t i = 0;
    while (!quit.load()) {
      if (!on.load()) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        continue;
      }
      const double c0 = CurrentThreadCpuSeconds();
      (void)TimeLanePair(st, rbuf->data(), wbuf->data(), bytes, kFile, i++);
      lane_cpu.store(lane_cpu.load() + CurrentThreadCpuSeconds() - c0);
      pairs.fetch_add(1);
    }
  });
  std::vector<double> off_s, on_s, loss, cpu, rate;
  for (int w = 0; w < 2 * pairs_of_windows; ++w) {
    const bool with_lane = w % 2 == 1;
    const long p0 = pairs.load();
    const double c0 = lane_cpu.load();
    on.store(with_lane);
    const double t0 = Now();
    int n = 0;
    while (Now() - t0 < window_s) {
      cpu::Gemm(false, false, M, N, K, 1.f, a.data(), K, b.data(), N, 0.f, c.data(), N);
      ++n;
    }
    const double elapsed = Now() - t0, per = elapsed / n;
    on.store(false);
    if (!with_lane) {
      off_s.push_back(per);
    } else {
      const long dp = std::max(1L, pairs.load() - p0);
      on_s.push_back(per);
      loss.push_back((per - off_s.back()) * n / static_cast<double>(dp));
      cpu.push_back((lane_cpu.load() - c0) / static_cast<double>(dp));
      rate.push_back(static_cast<double>(dp) / elapsed);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  quit.store(true);
  lane.join();
  os->store.reset();
  std::remove(path.c_str());
  std::printf("%8s: GEMM %.3f ms alone, %.3f ms beside the lane (x%.3f); %.0f pairs/s; lane CPU %.1f us a pair, "
              "the team's loss %.1f us a pair: loss / CPU %.2f\n",
              fmt::format("{}K", bytes >> 10).c_str(), Median(off_s) * 1e3, Median(on_s) * 1e3, Median(on_s) / Median(off_s),
              Median(rate), Median(cpu) * 1e6, Median(loss) * 1e6, Median(loss) / Median(cpu));
  return 0;
}

}  // namespace
}  // namespace zinf

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    std::printf("usage: lane_interference DIR [BYTES...]\n"
                "  times a GEMM team alone and beside the NVMe lane's read/write pairs of BYTES (default 65536 1048576\n"
                "  4194304) in alternating windows; prints the team's loss per pair against the lane's CPU per pair\n");
    return argc < 2 ? 2 : 0;
  }
  std::vector<uint64_t> sizes;
  for (int i = 2; i < argc; ++i) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(argv[i], &end, 0);
    if (end == argv[i] || *end != '\0' || v < 4096 || v % 4096 != 0 || v > (uint64_t{64} << 20)) {
      std::fprintf(stderr, "lane_interference: BYTES '%s' must be a multiple of 4096 in 4096..64 MiB\n", argv[i]);
      return 2;
    }
    sizes.push_back(v);
  }
  if (sizes.empty()) sizes = {65536, 1 << 20, 4 << 20};
  for (uint64_t b : sizes)
    if (int rc = zinf::Measure(argv[1], b, 12, 0.3); rc != 0) return rc;
  return 0;
}
