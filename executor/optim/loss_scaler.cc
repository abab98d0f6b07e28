#include "executor/optim/loss_scaler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace zinf {

Status DynamicLossScaler::Validate(const LossScalerOptions& o) {
  auto bad = [](const char* key, const std::string& why) {
    return InvalidArgument(fmt::format("loss scaler: {}: {}", key, why));
  };
  if (!(o.init_scale > 0.0f) || !std::isfinite(o.init_scale)) return bad("init_scale", "must be finite and > 0");
  if (!(o.growth_factor > 1.0f)) return bad("growth_factor", "must be > 1");
  if (!(o.backoff_factor > 0.0f && o.backoff_factor < 1.0f)) return bad("backoff_factor", "must be in (0, 1)");
  if (o.growth_interval < 1) return bad("growth_interval", "must be >= 1");
  if (o.hysteresis < 1) return bad("hysteresis", "must be >= 1");
  if (!(o.min_scale > 0.0f) || !(o.max_scale >= o.min_scale)) {
    return bad("min_scale/max_scale", "need 0 < min_scale <= max_scale");
  }
  return Status::Ok();
}

DynamicLossScaler::DynamicLossScaler(const LossScalerOptions& o)
    : opts_(o), scale_(o.dynamic ? std::clamp(o.init_scale, o.min_scale, o.max_scale) : o.init_scale) {}

bool DynamicLossScaler::Update(bool found_non_finite) {
  ++steps_;
  if (found_non_finite) {
    skipped_ = true;
    ++skipped_steps_;
    good_steps_ = 0;
    if (opts_.dynamic && ++overflows_in_row_ >= opts_.hysteresis) {
      scale_ = std::max(scale_ * opts_.backoff_factor, opts_.min_scale);
      overflows_in_row_ = 0;
    }
    return false;
  }
  skipped_ = false;
  overflows_in_row_ = 0;
  if (opts_.dynamic && ++good_steps_ >= opts_.growth_interval) {
    scale_ = std::min(scale_ * opts_.growth_factor, opts_.max_scale);
    good_steps_ = 0;
  }
  return true;
}

bool DynamicLossScaler::HasNonFinite(const float* x, size_t n) {
  bool bad = false;
  for (size_t i = 0; i < n; ++i) bad |= !std::isfinite(x[i]);
  return bad;
}

}  // namespace zinf
