// Per-op overhead of the executor: a GPT so small that its kernels do almost no arithmetic,
// trained through the real model code on the real ZeRO-3 engine (one rank, states on the
// device), timed per op of its schedule. What it measures is what every op pays besides its
// arithmetic: kernel dispatch and thread team start-up, the engine's acquire/release, the
// gradient hand-off to the reduce lane, small elementwise passes.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "executor/backend/cpu/cpu_backend.h"
#include "executor/model/gpt.h"
#include "executor/comm/loopback_comm.h"
#include "executor/zero3/coordinator.h"
#include "planner/profile/probes.h"
#include "planner/profile/timing.h"

namespace zinf {

Status ProbeOpOverhead(ProfileContext& ctx, HwProfile& hw) {
  GptConfig cfg;
  cfg.vocab = 64;
  cfg.seq_len = 8;
  cfg.n_layer = 4;
  cfg.n_embd = 32;
  cfg.n_head = 2;
  ZINF_ASSIGN_OR_RETURN(auto be, MakeCpuBackend(64u << 20, ctx.options().threads));
  ZINF_ASSIGN_OR_RETURN(auto gpt, Gpt::Create(cfg, be.get(), nullptr, 0));
  const int batch = 1;
  ZINF_RETURN_IF_ERROR(gpt->Prepare(batch));
  std::vector<int32_t> tokens(static_cast<size_t>(batch * cfg.seq_len)), targets(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    tokens[i] = static_cast<int32_t>(i % 64);
    targets[i] = static_cast<int32_t>((i + 1) % 64);
  }
  LoopbackComm comm;
  Zero3Options zo;
  zo.placement = {Tier::kDevice, Tier::kDevice, Tier::kDevice};
  ZINF_ASSIGN_OR_RETURN(auto params, Zero3Engine::Create(gpt->groups(), gpt->StepSchedule(), be.get(), &comm, zo));
  ZINF_RETURN_IF_ERROR(params->InitParams(1));
  auto step = [&]() -> Result<float> {
    ZINF_RETURN_IF_ERROR(params->BeginStep(1.0f));
    ZINF_ASSIGN_OR_RETURN(float loss, gpt->ForwardBackward(*params, tokens.data(), targets.data(), 1));
    ZINF_RETURN_IF_ERROR(params->FinishBackward());
    return loss;
  };
  for (int w = 0; w < 3; ++w) ZINF_RETURN_IF_ERROR(step().status());
  std::vector<double> times;
  double total = 0;
  const double budget = ctx.options().quick ? 0.1 : 0.4;
  while ((total < budget || times.size() < 10) && times.size() < 5000 && !ctx.cancelled()) {
    auto t0 = std::chrono::steady_clock::now();
    ZINF_ASSIGN_OR_RETURN(float loss, step());
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!std::isfinite(loss)) return Internal("op overhead probe: non-finite loss");
    times.push_back(dt);
    total += dt;
  }
  // Per op of a forward pass (the model costs backward as 2 x forward).
  const double fwd_ops = static_cast<double>(gpt->ForwardSchedule().size());
  hw.op_overhead_s = Median(times) / (3.0 * fwd_ops);
  hw.provenance["device.op_overhead_s"] = fmt::format(
      "measured: {}, Gpt::ForwardBackward of a {}-layer GPT with hidden {} and {} tokens (no arithmetic to speak of) "
      "on the ZeRO-3 engine (1 rank, states on the device), {} threads: median step / (3 x {} forward ops)",
      ctx.Today(), cfg.n_layer, cfg.n_embd, batch * cfg.seq_len, be->threads(), fwd_ops);
  ctx.Progress("overhead", fmt::format("{:.1f} us per op", hw.op_overhead_s * 1e6));
  // GELU (tanh approximation) forward over a transformer-sized activation.
  {
    const size_t n = 4u << 20;
    ZINF_ASSIGN_OR_RETURN(DeviceBuffer x, be->AllocBuffer(n * 4));
    ZINF_ASSIGN_OR_RETURN(DeviceBuffer y, be->AllocBuffer(n * 4));
    std::vector<float> host(n);
    for (size_t i = 0; i < n; ++i) host[i] = static_cast<float>((i % 2001) * 0.004 - 4.0);
    ZINF_RETURN_IF_ERROR(be->CopyH2D(x.data(), host.data(), n * 4));
    be->GeluFwd(x.as<float>(), y.as<float>(), n);
    std::vector<double> gt;
    TimeRuns(0, ctx.options().quick ? 5 : 15, [&] { be->GeluFwd(x.as<float>(), y.as<float>(), n); }, &gt);
    ZINF_RETURN_IF_ERROR(be->CopyD2H(host.data(), y.data(), 4 * 16));
    const double x0 = -4.0, ref = 0.5 * x0 * (1 + std::tanh(0.7978845608 * (x0 + 0.044715 * x0 * x0 * x0)));
    if (std::fabs(host[0] - ref) > 1e-4) return Internal(fmt::format("gelu probe: gelu(-4) = {}, expected {}", host[0], ref));
    hw.gelu_elems_per_s = static_cast<double>(n) / Median(gt);
    // Backward: dX = dY * gelu'(X), in place on dY as the executor runs it.
    ZINF_ASSIGN_OR_RETURN(DeviceBuffer dy, be->AllocBuffer(n * 4));
    std::vector<double> bt;
    for (int r = 0; r < (ctx.options().quick ? 5 : 15); ++r) {
      ZINF_RETURN_IF_ERROR(be->Memset(dy.data(), 0, n * 4));
      auto t0 = std::chrono::steady_clock::now();
      be->GeluBwd(dy.as<float>(), x.as<float>(), dy.as<float>(), n);
      bt.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    hw.gelu_bwd_elems_per_s = static_cast<double>(n) / Median(bt);
    hw.provenance["device.gelu_bwd_elems_per_s"] = fmt::format(
        "measured: {}, Backend::GeluBwd (in place) over {} elements, {} threads, median of {} runs", ctx.Today(), n,
        be->threads(), bt.size());
    hw.provenance["device.gelu_elems_per_s"] = fmt::format(
        "measured: {}, Backend::GeluFwd over {} elements, {} threads, median of {} runs", ctx.Today(), n, be->threads(),
        gt.size());
    ctx.Progress("overhead", fmt::format("GELU {:.2f} G elements/s forward, {:.2f} backward", hw.gelu_elems_per_s / 1e9,
                                         hw.gelu_bwd_elems_per_s / 1e9));
  }
  return Status::Ok();
}

}  // namespace zinf
