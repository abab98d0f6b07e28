// NVMe bandwidth over the executor's own I/O path (io_uring, O_DIRECT, registered buffers;
// the documented fallbacks where unavailable), sweeping block size and queue depth for
// writes and reads separately, like DeepSpeed's aio sweep. Every read is checked against
// the CRC-32C of what was written. The probe file is removed afterwards (also on Ctrl-C).
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "core/cpu_clock.h"
#include "core/units.h"
#include "executor/storage/crc32c.h"
#include "executor/storage/lane_pair.h"
#include "executor/storage/pinned_host_pool.h"
#include "executor/storage/store_factory.h"
#include "executor/train/compute_priority.h"
#include "planner/profile/lane_adam.h"
#include "planner/profile/probes.h"
#include "planner/profile/timing.h"

namespace zinf {

const NvmeSetting* PickNvmeSetting(const std::vector<NvmeSetting>& measured) {
  const NvmeSetting* best = nullptr;
  auto cost = [](const NvmeSetting& m) { return 1.0 / m.read_bw + 1.0 / m.write_bw; };
  for (const NvmeSetting& m : measured) {
    if (m.read_bw <= 0 || m.write_bw <= 0) continue;
    if (!best || cost(m) < cost(*best)) best = &m;
  }
  return best;
}

namespace {
// Per request of `bytes`: the CPU seconds of this process (all its threads, user + system) of
// n writes and n reads, each waited before the next is issued and each with the CRC-32C of its
// buffer, as zrun's NVMe lane issues a shard's read or write; and the reads' median wall time.
struct RequestCost {
  double cpu_s = 0;
  double read_wall_s = 0;
};

Result<RequestCost> CostPerRequest(Storage& store, PinnedBuffer& wbuf, PinnedBuffer& rbuf, uint64_t bytes,
                                   uint64_t file_bytes, int n) {
  const uint64_t slots = file_bytes / bytes;
  volatile uint32_t sink = 0;
  std::vector<double> reads;
  const double c0 = ProcessCpuSeconds();
  for (int i = 0; i < n; ++i) {
    const uint64_t off = (static_cast<uint64_t>(i) * 7919 % slots) * bytes;  // scattered, like swap extents
    sink = sink + Crc32c(wbuf.data(), bytes);
    ZINF_RETURN_IF_ERROR(store.Write(off, wbuf.data(), bytes));
    const auto t0 = std::chrono::steady_clock::now();
    ZINF_RETURN_IF_ERROR(store.Read(off, rbuf.data(), bytes));
    reads.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    sink = sink + Crc32c(rbuf.data(), bytes);
  }
  return RequestCost{(ProcessCpuSeconds() - c0) / (2.0 * n), Median(reads)};
}

// The wall times of n waited reads of `bytes` while a spinning thread holds every CPU this
// process may run on, as the compute's thread team holds them while zrun's NVMe lane reads a
// shard: the completion's wake-up then waits for the scheduler to give the lane a core (59-68
// us a 64 KiB read on this 2-core VM against 15-25 us idle, at the median). Their mean and
// median: the wake-ups have a long tail (zrun's reads of small-nvme-r1 took 68-200 us at the
// median and 138-275 us on average), and a step pays the mean.
struct BusyReads {
  double mean_s = 0, median_s = 0;
  int spinners = 0;  // the CPUs held
};
Result<BusyReads> BusyReadWall(Storage& store, PinnedBuffer& rbuf, uint64_t bytes, uint64_t file_bytes, int n) {
  const uint64_t slots = file_bytes / bytes;
  const int cpus = AllowedCpuCount();
  std::atomic<bool> stop{false};
  std::vector<std::thread> spinners;
  for (int c = 0; c < cpus; ++c)
    spinners.emplace_back([&stop] {
      volatile double x = 1.0;
      while (!stop.load(std::memory_order_relaxed)) x = x * 1.0000001 + 1e-9;
    });
  std::vector<double> reads;
  Status st = Status::Ok();
  for (int i = 0; i < n && st.ok(); ++i) {
    const uint64_t off = (static_cast<uint64_t>(i) * 104729 % slots) * bytes;
    const auto t0 = std::chrono::steady_clock::now();
    st = store.Read(off, rbuf.data(), bytes);
    reads.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  stop = true;
  for (std::thread& t : spinners) t.join();
  ZINF_RETURN_IF_ERROR(st);
  return BusyReads{Mean(reads), Median(reads), cpus};
}
// The NVMe lane's rate by transfer size, as zrun's optimizer drives it: a read of a group's
// states, then a write of the previous group's, each waited before the next is issued and
// each CRC-32C'd. Rounds over the sizes in turn; per size the mean wall time of a read and of
// a write in each round, the median round. The drive's rate for these depends on the size
// and on the mix: on this VM zrun's optimizer read 1.58-1.85 GB/s and wrote 1.82-2.24 GB/s
// (v30's NVMe plans, groups of 1 KiB to 13 MiB) while the 16 MiB sweep above, each direction
// alone, read 1.9-3.2 GB/s and wrote 0.9-2.0 GB/s (their refreshed profiles).
struct LaneCurves {
  std::vector<CurvePoint> read, write;
};
Result<LaneCurves> MeasureLane(Storage& store, PinnedBuffer& wbuf, PinnedBuffer& rbuf, uint64_t file_bytes, bool quick,
                               ProfileContext& ctx) {
  const std::vector<uint64_t> sizes = quick ? std::vector<uint64_t>{64 << 10, 1 << 20, 4 << 20}
                                            : std::vector<uint64_t>{64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20};
  const uint64_t per_round = quick ? (8ull << 20) : (32ull << 20);  // bytes each way per size and round
  std::vector<std::vector<double>> rd(sizes.size()), wr(sizes.size());
  for (int round = 0; round < kProbeRounds && !ctx.cancelled(); ++round) {
    for (size_t i = 0; i < sizes.size() && !ctx.cancelled(); ++i) {
      const uint64_t bytes = sizes[i];
      const int n = static_cast<int>(std::clamp<uint64_t>(per_round / bytes, 4, 256));
      double rs = 0, ws = 0;
      for (int j = 0; j < n; ++j) {
        ZINF_ASSIGN_OR_RETURN(LanePair p, TimeLanePair(store, rbuf.data(), wbuf.data(), bytes, file_bytes,
                                                       static_cast<uint64_t>(j + round * n)));
        rs += p.read_s;
        ws += p.write_s;
      }
      rd[i].push_back(rs / n);
      wr[i].push_back(ws / n);
    }
  }
  if (ctx.cancelled()) return Aborted("nvme probe interrupted");
  LaneCurves c;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const double b = static_cast<double>(sizes[i]);
    c.read.push_back({b, b / Median(rd[i])});
    c.write.push_back({b, b / Median(wr[i])});
  }
  return c;
}
}  // namespace

Status CheckNvmeDir(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return NotFound(fmt::format("--nvme-dir {}: does not exist", dir));
  if (!S_ISDIR(st.st_mode)) return InvalidArgument(fmt::format("--nvme-dir {}: not a directory", dir));
  if (::access(dir.c_str(), W_OK) != 0) return IoError(fmt::format("--nvme-dir {}: not writable", dir));
  return Status::Ok();
}

Status ProbeNvme(ProfileContext& ctx, HwProfile& hw) {
  const std::string& dir = ctx.options().nvme_dir;
  if (dir.empty()) {
    for (const char* k : {"bandwidth.nvme_read", "bandwidth.nvme_write", "bandwidth.nvme_read_node", "bandwidth.nvme_write_node", "node.nvme_capacity"})
      hw.provenance[k] = "not measured: zplan profile ran without --nvme-dir";
    return Status::Ok();
  }
  ZINF_RETURN_IF_ERROR(CheckNvmeDir(dir));
  const bool quick = ctx.options().quick;
  const uint64_t file_bytes = quick ? (128ull << 20) : (512ull << 20);
  std::vector<NvmeSetting> settings;
  for (uint64_t b : quick ? std::vector<uint64_t>{256 << 10, 1 << 20} : std::vector<uint64_t>{64 << 10, 256 << 10, 1 << 20, 4 << 20})
    for (uint32_t d : quick ? std::vector<uint32_t>{4, 16} : std::vector<uint32_t>{1, 4, 16, 32}) settings.push_back({b, d});
  const uint64_t chunk = 16ull << 20;  // one request; the store splits it into blocks
  ZINF_ASSIGN_OR_RETURN(auto pool, PinnedHostPool::Create(2 * chunk, /*lock=*/true));
  ZINF_ASSIGN_OR_RETURN(PinnedBuffer wbuf, pool->AllocBuffer(chunk));
  ZINF_ASSIGN_OR_RETURN(PinnedBuffer rbuf, pool->AllocBuffer(chunk));
  for (uint64_t i = 0; i < chunk / 8; ++i) wbuf.as<uint64_t>()[i] = i * 0x9e3779b97f4a7c15ull + 1;
  const std::string path = fmt::format("{}/zinf-profile-{}.dat", dir, ::getpid());
  ctx.RegisterTempFile(path);
  std::vector<NvmeSetting> results;
  std::string kind, note;
  // Lay the file out once, untimed: zrun's swap files are written when the run starts and
  // then overwritten in place every step, and on a filesystem a first write also allocates
  // its blocks (ext4 under O_DIRECT: 0.4-0.76 GB/s here, against 1.6 GB/s for zrun's
  // steady-state optimizer writes on the same disk). Every setting below overwrites it.
  {
    ctx.Progress("nvme", fmt::format("laying out a {} file", FormatBytes(static_cast<double>(file_bytes))));
    StorageOptions so;
    so.block_size_bytes = settings.back().block;
    so.queue_depth = settings.back().depth;
    ZINF_ASSIGN_OR_RETURN(OpenedStore os, OpenStore(path, so, StoreBackend::kAuto, pool.get(), /*truncate=*/true));
    for (uint64_t off = 0; off < file_bytes && !ctx.cancelled(); off += chunk)
      ZINF_RETURN_IF_ERROR(os.store->Write(off, wbuf.data(), chunk));
    ZINF_RETURN_IF_ERROR(os.store->Flush());
  }
  for (size_t si = 0; si < settings.size() && !ctx.cancelled(); ++si) {
    const NvmeSetting& s = settings[si];
    StorageOptions so;
    so.block_size_bytes = s.block;
    so.queue_depth = s.depth;
    ZINF_ASSIGN_OR_RETURN(OpenedStore os, OpenStore(path, so, StoreBackend::kAuto, pool.get(), /*truncate=*/false));
    kind = os.store->kind();
    note = os.note;
    std::vector<uint32_t> crcs;
    auto t0 = std::chrono::steady_clock::now();
    for (uint64_t off = 0; off < file_bytes; off += chunk) {
      wbuf.as<uint64_t>()[0] = off;  // each chunk differs
      crcs.push_back(Crc32c(wbuf.data(), chunk));
      ZINF_RETURN_IF_ERROR(os.store->Write(off, wbuf.data(), chunk));
      if (ctx.cancelled()) break;
    }
    ZINF_RETURN_IF_ERROR(os.store->Flush());
    double wt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    t0 = std::chrono::steady_clock::now();
    size_t i = 0;
    for (uint64_t off = 0; off < file_bytes && !ctx.cancelled(); off += chunk, ++i) {
      ZINF_RETURN_IF_ERROR(os.store->Read(off, rbuf.data(), chunk));
      if (Crc32c(rbuf.data(), chunk) != crcs[i])
        return Corrupt(fmt::format("{}: data read back at offset {} differs from what was written", path, off));
    }
    double rt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    NvmeSetting m = s;
    m.write_bw = static_cast<double>(file_bytes) / wt;
    m.read_bw = static_cast<double>(file_bytes) / rt;
    results.push_back(m);
    ctx.Progress("nvme", fmt::format("{}/{}: block {} depth {}: write {}, read {}", si + 1, settings.size(), FormatBytes(static_cast<double>(s.block)),
                                     s.depth, FormatBandwidth(m.write_bw), FormatBandwidth(m.read_bw)));
  }
  const NvmeSetting* pick = PickNvmeSetting(results);
  // The CPU one request costs, at the picked setting, for a small and a large request:
  // a fixed part per request and a part per byte (CRC-32C, copies), fitted through both.
  RequestCost cost_small, cost_large;
  BusyReads busy_small;
  LaneCurves lane;
  LaneAdamCoupling beside;
  const uint64_t small = 64 << 10, large = 4 << 20;
  if (pick && !ctx.cancelled()) {
    ctx.Progress("nvme", "CPU time per request");
    StorageOptions so;
    so.block_size_bytes = pick->block;
    so.queue_depth = pick->depth;
    ZINF_ASSIGN_OR_RETURN(OpenedStore os, OpenStore(path, so, StoreBackend::kAuto, pool.get(), /*truncate=*/false));
    ZINF_ASSIGN_OR_RETURN(cost_small, CostPerRequest(*os.store, wbuf, rbuf, small, file_bytes, quick ? 200 : 1000));
    ZINF_ASSIGN_OR_RETURN(cost_large, CostPerRequest(*os.store, wbuf, rbuf, large, file_bytes, quick ? 20 : 60));
    ctx.Progress("nvme", "read latency with every core busy");
    ZINF_ASSIGN_OR_RETURN(busy_small, BusyReadWall(*os.store, rbuf, small, file_bytes, quick ? 200 : 1000));
    ctx.Progress("nvme", "the lane's rate by transfer size (reads and writes alternating)");
    ZINF_ASSIGN_OR_RETURN(lane, MeasureLane(*os.store, wbuf, rbuf, file_bytes, quick, ctx));
    ctx.Progress("nvme", "the lane beside CPU Adam");
    ZINF_ASSIGN_OR_RETURN(beside, MeasureLaneBesideAdam(*os.store, rbuf.data(), wbuf.data(), quick ? (1 << 20) : (4 << 20),
                                                        file_bytes, AllowedCpuCount(), quick, ctx));
  }
  ctx.RemoveTempFiles();
  if (results.empty()) return Aborted("nvme probe interrupted");
  if (!pick) return Internal("nvme probe: no setting measured a positive bandwidth");
  const double cpu_small = cost_small.cpu_s, cpu_large = cost_large.cpu_s;
  if (cpu_small > 0 && cpu_large > 0) {
    hw.nvme_cpu_per_byte_s = std::max(0.0, (cpu_large - cpu_small) / static_cast<double>(large - small));
    hw.nvme_cpu_per_request_s = std::max(0.0, cpu_small - hw.nvme_cpu_per_byte_s * static_cast<double>(small));
    const std::string cpu_method = fmt::format(
        "measured: {}, CPU time of this process (all threads, user + system) per request through the same store at "
        "block {} depth {}, each request waited and CRC-32C'd as zrun's NVMe lane does: {} per {} request, {} per {} "
        "request; the line through both",
        ctx.Today(), FormatBytes(static_cast<double>(pick->block)), pick->depth, FormatSeconds(cpu_small),
        FormatBytes(static_cast<double>(small)), FormatSeconds(cpu_large), FormatBytes(static_cast<double>(large)));
    hw.provenance["nvme.cpu_per_request_s"] = cpu_method;
    hw.provenance["nvme.cpu_per_byte_s"] = cpu_method;
    ctx.Progress("nvme", fmt::format("CPU {} per request + {} per MiB", FormatSeconds(hw.nvme_cpu_per_request_s),
                                     FormatSeconds(hw.nvme_cpu_per_byte_s * (1 << 20))));
  }
  hw.nvme_read_bw = hw.nvme_read_bw_node = pick->read_bw;
  if (cost_small.read_wall_s > 0 && cost_large.read_wall_s > 0) {
    // A read's wall time beyond its bytes at the picked setting's bandwidth, from the small
    // request (where it dominates); the large one is reported beside it.
    hw.nvme_read_latency_s = std::max(0.0, cost_small.read_wall_s - static_cast<double>(small) / pick->read_bw);
    hw.provenance["nvme.read_latency_s"] = fmt::format(
        "measured: {}, median wall time of a {} read through the same store at block {} depth {}, waited before the "
        "next (as zrun's NVMe lane reads a shard), less {} at the read bandwidth: {} (a {} read: {})",
        ctx.Today(), FormatBytes(static_cast<double>(small)), FormatBytes(static_cast<double>(pick->block)), pick->depth,
        FormatBytes(static_cast<double>(small)), FormatSeconds(cost_small.read_wall_s), FormatBytes(static_cast<double>(large)),
        FormatSeconds(cost_large.read_wall_s));
    ctx.Progress("nvme", fmt::format("read latency {} per request", FormatSeconds(hw.nvme_read_latency_s)));
    if (busy_small.mean_s > 0) {
      hw.nvme_read_latency_busy_s = std::max(0.0, busy_small.mean_s - static_cast<double>(small) / pick->read_bw);
      hw.provenance["nvme.read_latency_busy_s"] = fmt::format(
          "measured: {}, mean wall time of a {} read as for nvme.read_latency_s, with a spinning thread on each of the "
          "{} CPUs this process may use (as the compute's threads hold them during a pass), less {} at the read "
          "bandwidth: {} (median {})",
          ctx.Today(), FormatBytes(static_cast<double>(small)), busy_small.spinners, FormatBytes(static_cast<double>(small)),
          FormatSeconds(busy_small.mean_s), FormatSeconds(busy_small.median_s));
      ctx.Progress("nvme", fmt::format("read latency with the cores busy {} per request", FormatSeconds(hw.nvme_read_latency_busy_s)));
    }
  }
  hw.nvme_write_bw = hw.nvme_write_bw_node = pick->write_bw;
  if (!lane.read.empty()) {
    hw.nvme_lane_read_curve = lane.read;
    hw.nvme_lane_write_curve = lane.write;
    std::string pts;
    for (size_t i = 0; i < lane.read.size(); ++i)
      pts += fmt::format("{}{} {}/{}", i ? ", " : "", FormatBytes(lane.read[i].x), FormatBandwidth(lane.read[i].y), FormatBandwidth(lane.write[i].y));
    const std::string lane_method = fmt::format(
        "measured: {}, the same store at block {} depth {}: reads and writes of one size alternating at scattered offsets, "
        "each waited before the next and CRC-32C'd (as zrun's optimizer lane reads a group's states and writes the "
        "previous group's); x = bytes of a transfer, y = x / its mean wall time, the median of {} rounds; read/write: {}",
        ctx.Today(), FormatBytes(static_cast<double>(pick->block)), pick->depth, kProbeRounds, pts);
    hw.provenance["nvme.lane_read_curve"] = lane_method;
    hw.provenance["nvme.lane_write_curve"] = lane_method;
    ctx.Progress("nvme", "lane read/write: " + pts);
  }
  if (beside.read > 0 && beside.write > 0 && beside.adam > 0) {
    hw.nvme_lane_read_beside_adam = beside.read;
    hw.nvme_lane_write_beside_adam = beside.write;
    hw.nvme_adam_beside_lane = beside.adam;
    const std::string method = fmt::format(
        "measured: {}, the same store: {} rounds of {} lane pairs (a {} read, then a write, as for the lane curves) alone, "
        "the same (and more until two passes end inside them) beside CPU Adam passes over {} params on {} threads run back to "
        "back on another thread, and those passes "
        "alone; the median over rounds of the mean beside over the mean alone: read {:.2f}x, write {:.2f}x, Adam {:.2f}x",
        ctx.Today(), beside.rounds, beside.pairs, FormatBytes(static_cast<double>(beside.bytes)), beside.adam_params, beside.threads,
        beside.read, beside.write, beside.adam);
    for (const char* k : {"nvme.lane_read_beside_adam", "nvme.lane_write_beside_adam", "nvme.adam_beside_lane"}) hw.provenance[k] = method;
    ctx.Progress("nvme", fmt::format("beside CPU Adam: lane reads {:.2f}x, writes {:.2f}x; Adam {:.2f}x", beside.read, beside.write, beside.adam));
  }
  struct statvfs vfs {};
  if (::statvfs(dir.c_str(), &vfs) == 0) {
    hw.nvme_capacity_bytes = static_cast<double>(vfs.f_bavail) * static_cast<double>(vfs.f_frsize);
    hw.provenance["node.nvme_capacity"] = fmt::format("measured: {}, free space of {} (statvfs)", ctx.Today(), dir);
  }
  hw.nvme_block_size = static_cast<int64_t>(pick->block);
  hw.nvme_queue_depth = static_cast<int64_t>(pick->depth);
  const NvmeSetting* best_r = &results[0];
  const NvmeSetting* best_w = &results[0];
  for (const NvmeSetting& m : results) {
    if (m.read_bw > best_r->read_bw) best_r = &m;
    if (m.write_bw > best_w->write_bw) best_w = &m;
  }
  const std::string method = fmt::format(
      "measured: {}, executor Storage '{}'{} on {}, {} file laid out first (writes overwrite it in place, as zrun's "
      "swap files are), 16 MiB requests, sweep of {} block-size x queue-depth settings; "
      "read and write at block {} depth {}, the setting of least 1/read + 1/write (zrun runs both at one setting; best "
      "read {} at block {} depth {}, best write {} at block {} depth {}); CRC-32C verified",
      ctx.Today(), kind, note.empty() ? "" : " (" + note + ")", dir, FormatBytes(static_cast<double>(file_bytes)), results.size(),
      FormatBytes(static_cast<double>(pick->block)), pick->depth, FormatBandwidth(best_r->read_bw),
      FormatBytes(static_cast<double>(best_r->block)), best_r->depth, FormatBandwidth(best_w->write_bw),
      FormatBytes(static_cast<double>(best_w->block)), best_w->depth);
  for (const char* k : {"bandwidth.nvme_read", "bandwidth.nvme_write", "bandwidth.nvme_read_node", "bandwidth.nvme_write_node"})
    hw.provenance[k] = method;
  return Status::Ok();
}

}  // namespace zinf
