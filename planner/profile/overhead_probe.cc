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
  ZINF_ASSIGN_OR_RETURN(auto be, MakeCpuBackend(256u << 20, ctx.options().threads));
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
  // The elementwise kernels costed at measured rates (kernel_probe.cc), on the same backend.
  return ProbeElementwiseKernels(ctx, *be, hw);
}

}  // namespace zinf
