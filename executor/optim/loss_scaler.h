// DynamicLossScaler: the loss scale for fp16 training (as in DeepSpeed's / Apex's dynamic
// scaler and torch.cuda.amp.GradScaler).
//
// Per step: backward on loss * scale(); look for inf/NaN in the (scaled) gradients
// (HasNonFinite on the host, CudaBackend::CheckNonFinite on the device, or an allreduced
// flag across ranks); then call Update(found_non_finite):
//   * non-finite: the step must be SKIPPED (Update returns false, skipped() is true); after
//     `hysteresis` consecutive overflows the scale is multiplied by backoff_factor
//     (clamped at min_scale) and the good-step counter resets.
//   * finite: the step is applied (returns true); after growth_interval consecutive good
//     steps the scale is multiplied by growth_factor (clamped at max_scale).
// Unscale the gradients with inv_scale() (e.g. AdamParams::grad_scale = inv_scale()) when
// applying. With dynamic = false the scale stays at init_scale (static scaling) but
// overflowing steps are still reported as skipped.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/status.h"

namespace zinf {

struct LossScalerOptions {
  bool dynamic = true;
  float init_scale = 65536.0f;  // 2^16
  float growth_factor = 2.0f;   // > 1
  float backoff_factor = 0.5f;  // in (0, 1)
  int64_t growth_interval = 1000;  // good steps between growths, >= 1
  int hysteresis = 1;           // consecutive overflows before a backoff, >= 1
  float min_scale = 1.0f;
  float max_scale = 16777216.0f;  // 2^24
};

class DynamicLossScaler {
 public:
  // InvalidArgument naming the field when an option is out of range.
  static Status Validate(const LossScalerOptions& o);
  explicit DynamicLossScaler(const LossScalerOptions& o = {});

  float scale() const { return scale_; }
  float inv_scale() const { return 1.0f / scale_; }
  // Returns true if the step should be applied, false if it must be skipped.
  bool Update(bool found_non_finite);
  bool skipped() const { return skipped_; }             // the last Update skipped
  int64_t skipped_steps() const { return skipped_steps_; }
  int64_t good_steps() const { return good_steps_; }     // since the last scale change / overflow
  int64_t steps() const { return steps_; }
  const LossScalerOptions& options() const { return opts_; }

  // True if any of x[0, n) is inf or NaN (host memory).
  static bool HasNonFinite(const float* x, size_t n);

 private:
  LossScalerOptions opts_;
  float scale_;
  bool skipped_ = false;
  int64_t skipped_steps_ = 0, good_steps_ = 0, steps_ = 0;
  int overflows_in_row_ = 0;
};

}  // namespace zinf
