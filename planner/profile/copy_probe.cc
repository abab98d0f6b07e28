// Host <-> device copy bandwidth through Backend::CopyH2D / CopyD2H. On the CPU backend the
// "device" is the arena, so this is a host copy into and out of it; every pass is verified.
#include <fmt/format.h>

#include <chrono>
#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#include "core/units.h"
#include "executor/backend/cpu/cpu_backend.h"
#include "executor/storage/pinned_host_pool.h"
#include "planner/profile/probes.h"

namespace zinf {

Status ProbeDeviceCopy(ProfileContext& ctx, HwProfile& hw) {
  const size_t bytes = (ctx.options().quick ? 64u : 256u) << 20;
  ZINF_ASSIGN_OR_RETURN(auto backend, MakeCpuBackend(bytes + (1u << 20), ctx.options().threads));
  ZINF_ASSIGN_OR_RETURN(DeviceBuffer dev, backend->AllocBuffer(bytes));
  const int reps = ctx.options().quick ? 3 : 6;
  // Best-of-reps H2D and D2H from a host buffer, verified after every round trip.
  auto measure = [&](uint8_t* src, uint8_t* dst, const char* what, double* h2d, double* d2h) -> Status {
    for (size_t i = 0; i < bytes; ++i) src[i] = static_cast<uint8_t>(i * 131 + 7);
    for (int r = 0; r < reps && !ctx.cancelled(); ++r) {
      auto t0 = std::chrono::steady_clock::now();
      ZINF_RETURN_IF_ERROR(backend->CopyH2D(dev.data(), src, bytes));
      ZINF_RETURN_IF_ERROR(backend->SynchronizeAll());
      double a = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::memset(dst, 0, bytes);
      t0 = std::chrono::steady_clock::now();
      ZINF_RETURN_IF_ERROR(backend->CopyD2H(dst, dev.data(), bytes));
      ZINF_RETURN_IF_ERROR(backend->SynchronizeAll());
      double b = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (std::memcmp(src, dst, bytes) != 0) return Internal(fmt::format("copy probe ({}): data came back different", what));
      *h2d = std::max(*h2d, static_cast<double>(bytes) / a);
      *d2h = std::max(*d2h, static_cast<double>(bytes) / b);
      ctx.Progress("copy", fmt::format("{} pass {}/{}: h2d {}, d2h {}", what, r + 1, reps, FormatBandwidth(*h2d), FormatBandwidth(*d2h)));
    }
    return Status::Ok();
  };
  std::vector<uint8_t> src(bytes), dst(bytes);
  double h2d = 0, d2h = 0, ph2d = 0, pd2h = 0;
  ZINF_RETURN_IF_ERROR(measure(src.data(), dst.data(), "pageable", &h2d, &d2h));
  // Pinned (page-locked where the limits allow) staging, as zrun's NVMe path uses.
  ZINF_ASSIGN_OR_RETURN(auto pool, PinnedHostPool::Create(2 * bytes, /*lock=*/true));
  ZINF_ASSIGN_OR_RETURN(PinnedBuffer ps, pool->AllocBuffer(bytes));
  ZINF_ASSIGN_OR_RETURN(PinnedBuffer pd, pool->AllocBuffer(bytes));
  ZINF_RETURN_IF_ERROR(measure(ps.as<uint8_t>(), pd.as<uint8_t>(), "pinned", &ph2d, &pd2h));
  // All devices at once: one copy per core-sized rank slot, concurrently, each into its own
  // arena region (ranks on this box share its memory bandwidth). Per-device share recorded.
  const int devices = std::max(1, static_cast<int>(hw.cpu_cores));
  const size_t each = bytes / static_cast<size_t>(devices) / 4096 * 4096;
  double all_h2d = 0, all_d2h = 0;
  for (int r = 0; r < reps && !ctx.cancelled() && each > 0; ++r) {
    std::vector<std::thread> ts;
    std::vector<double> th(static_cast<size_t>(devices)), td(static_cast<size_t>(devices));
    std::vector<Status> st(static_cast<size_t>(devices));
    for (int d = 0; d < devices; ++d) {
      ts.emplace_back([&, d] {
        uint8_t* dv = dev.as<uint8_t>() + static_cast<size_t>(d) * each;
        uint8_t* hs = ps.as<uint8_t>() + static_cast<size_t>(d) * each;
        uint8_t* hd = pd.as<uint8_t>() + static_cast<size_t>(d) * each;
        auto t0 = std::chrono::steady_clock::now();
        st[static_cast<size_t>(d)] = backend->CopyH2D(dv, hs, each);
        th[static_cast<size_t>(d)] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        t0 = std::chrono::steady_clock::now();
        if (st[static_cast<size_t>(d)].ok()) st[static_cast<size_t>(d)] = backend->CopyD2H(hd, dv, each);
        td[static_cast<size_t>(d)] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      });
    }
    for (auto& t : ts) t.join();
    for (const Status& x : st) ZINF_RETURN_IF_ERROR(x);
    if (std::memcmp(ps.data(), pd.data(), each * static_cast<size_t>(devices)) != 0)
      return Internal("copy probe (all devices): data came back different");
    all_h2d = std::max(all_h2d, static_cast<double>(each) / *std::max_element(th.begin(), th.end()));
    all_d2h = std::max(all_d2h, static_cast<double>(each) / *std::max_element(td.begin(), td.end()));
  }
  // zrun stages NVMe traffic through pinned buffers and host-tier shards through ordinary
  // host memory; the pinned figures are recorded (the pageable ones are in the provenance).
  hw.h2d_bw_alone = ph2d;
  hw.d2h_bw_alone = pd2h;
  hw.h2d_bw = all_h2d > 0 ? all_h2d : ph2d;
  hw.d2h_bw = all_d2h > 0 ? all_d2h : pd2h;
  hw.device_memory_bytes = ctx.options().device_memory_bytes > 0 ? ctx.options().device_memory_bytes : 4.0 * (1u << 30);
  hw.memory_bw = hw.host_mem_bw;
  const std::string m = fmt::format(
      "measured: {}, Backend::CopyH2D/CopyD2H of {} into the CPU arena, best of {}: pinned{} {} / {} (alone, recorded), "
      "pageable {} / {}; all {} devices at once (concurrent copies, per device) {} / {}",
      ctx.Today(), FormatBytes(static_cast<double>(bytes)), reps, pool->locked() ? "" : " (mlock refused: " + pool->lock_error() + ")",
      FormatBandwidth(ph2d), FormatBandwidth(pd2h), FormatBandwidth(h2d), FormatBandwidth(d2h), devices,
      FormatBandwidth(all_h2d), FormatBandwidth(all_d2h));
  for (const char* k : {"bandwidth.h2d", "bandwidth.d2h", "bandwidth.h2d_alone", "bandwidth.d2h_alone"}) hw.provenance[k] = m;
  hw.provenance["device.memory"] = "setting: the CPU backend's arena budget (zplan profile --device-memory)";
  hw.provenance["device.memory_bw"] = "measured: the host memory copy bandwidth (the device is this CPU)";
  return Status::Ok();
}

}  // namespace zinf
