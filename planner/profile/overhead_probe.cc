// Per-op overhead of the executor: a GPT so small that its kernels do almost no arithmetic,
// trained through the real model code (ResidentParamProvider), timed per op of its schedule.
// What it measures is what every op pays besides its arithmetic: kernel dispatch and thread
// team start-up, the provider's acquire/release, small elementwise passes.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "executor/backend/cpu/cpu_backend.h"
#include "executor/model/gpt.h"
#include "executor/model/param_provider.h"
#include "planner/profile/probes.h"

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
  ZINF_ASSIGN_OR_RETURN(auto params, ResidentParamProvider::Create(be.get(), gpt->groups()));
  ZINF_RETURN_IF_ERROR(params->Init(1));
  const int batch = 1;
  ZINF_RETURN_IF_ERROR(gpt->Prepare(batch));
  std::vector<int32_t> tokens(static_cast<size_t>(batch * cfg.seq_len)), targets(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    tokens[i] = static_cast<int32_t>(i % 64);
    targets[i] = static_cast<int32_t>((i + 1) % 64);
  }
  for (int w = 0; w < 3; ++w) ZINF_RETURN_IF_ERROR(gpt->ForwardBackward(*params, tokens.data(), targets.data(), batch).status());
  std::vector<double> times;
  double total = 0;
  const double budget = ctx.options().quick ? 0.1 : 0.4;
  while ((total < budget || times.size() < 10) && times.size() < 5000 && !ctx.cancelled()) {
    auto t0 = std::chrono::steady_clock::now();
    ZINF_ASSIGN_OR_RETURN(float loss, gpt->ForwardBackward(*params, tokens.data(), targets.data(), batch));
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!std::isfinite(loss)) return Internal("op overhead probe: non-finite loss");
    times.push_back(dt);
    total += dt;
  }
  std::sort(times.begin(), times.end());
  // Per op of a forward pass (the model costs backward as 2 x forward).
  const double fwd_ops = static_cast<double>(gpt->ForwardSchedule().size());
  hw.op_overhead_s = times[times.size() / 2] / (3.0 * fwd_ops);
  hw.provenance["device.op_overhead_s"] = fmt::format(
      "measured: {}, Gpt::ForwardBackward of a {}-layer GPT with hidden {} and {} tokens (no arithmetic to speak of) "
      "through ResidentParamProvider, {} threads: median step / (3 x {} forward ops)",
      ctx.Today(), cfg.n_layer, cfg.n_embd, batch * cfg.seq_len, be->threads(), fwd_ops);
  ctx.Progress("overhead", fmt::format("{:.1f} us per op", hw.op_overhead_s * 1e6));
  return Status::Ok();
}

}  // namespace zinf
