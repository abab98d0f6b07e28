// Host <-> device copy bandwidth through Backend::CopyH2D / CopyD2H. On the CPU backend the
// "device" is the arena, so this is a host copy into and out of it; every pass is verified.
#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "core/units.h"
#include "executor/backend/cpu/cpu_backend.h"
#include "planner/profile/probes.h"

namespace zinf {

Status ProbeDeviceCopy(ProfileContext& ctx, HwProfile& hw) {
  const size_t bytes = (ctx.options().quick ? 64u : 256u) << 20;
  ZINF_ASSIGN_OR_RETURN(auto backend, MakeCpuBackend(bytes + (1u << 20), ctx.options().threads));
  ZINF_ASSIGN_OR_RETURN(DeviceBuffer dev, backend->AllocBuffer(bytes));
  std::vector<uint8_t> src(bytes), dst(bytes);
  for (size_t i = 0; i < bytes; ++i) src[i] = static_cast<uint8_t>(i * 131 + 7);
  const int reps = ctx.options().quick ? 3 : 6;
  double h2d = 0, d2h = 0;
  for (int r = 0; r < reps && !ctx.cancelled(); ++r) {
    auto t0 = std::chrono::steady_clock::now();
    ZINF_RETURN_IF_ERROR(backend->CopyH2D(dev.data(), src.data(), bytes));
    ZINF_RETURN_IF_ERROR(backend->SynchronizeAll());
    double a = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    t0 = std::chrono::steady_clock::now();
    ZINF_RETURN_IF_ERROR(backend->CopyD2H(dst.data(), dev.data(), bytes));
    ZINF_RETURN_IF_ERROR(backend->SynchronizeAll());
    double b = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (std::memcmp(src.data(), dst.data(), bytes) != 0) return Internal("copy probe: data came back different");
    h2d = std::max(h2d, static_cast<double>(bytes) / a);
    d2h = std::max(d2h, static_cast<double>(bytes) / b);
    ctx.Progress("copy", fmt::format("pass {}/{}: h2d {}, d2h {}", r + 1, reps, FormatBandwidth(h2d), FormatBandwidth(d2h)));
  }
  hw.h2d_bw = hw.h2d_bw_alone = h2d;
  hw.d2h_bw = hw.d2h_bw_alone = d2h;
  hw.device_memory_bytes = ctx.options().device_memory_bytes > 0 ? ctx.options().device_memory_bytes : 4.0 * (1u << 30);
  hw.memory_bw = hw.host_mem_bw;
  const std::string m = fmt::format("measured {}: Backend::CopyH2D/CopyD2H of {} pageable host memory into the CPU arena, best of {}",
                                    ctx.Today(), FormatBytes(static_cast<double>(bytes)), reps);
  for (const char* k : {"bandwidth.h2d", "bandwidth.d2h", "bandwidth.h2d_alone", "bandwidth.d2h_alone"}) hw.provenance[k] = m;
  hw.provenance["device.memory"] = "the CPU backend's arena budget (zplan profile --device-memory)";
  hw.provenance["device.memory_bw"] = "CPU backend: the host memory copy bandwidth (the device is this CPU)";
  return Status::Ok();
}

}  // namespace zinf
