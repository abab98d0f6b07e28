// SpeedTotals: checks of how fast this machine runs now against its profile, accumulated.
// Each check times some work the profile also prices; expected / measured seconds is its
// speed (1: as profiled; 0.9: ten percent slower). zrun's compute checks (GEMMs) and drive
// checks (NVMe reads and writes) both report through it.
#pragma once

namespace zinf {

// Checks so far: the time-weighted ratio and the range of single checks.
struct SpeedTotals {
  int checks = 0;
  double expected_s = 0, measured_s = 0;
  double min = 0, max = 0;  // of single checks' ratios
  void Add(double expected, double measured);
  double Ratio() const { return measured_s > 0 ? expected_s / measured_s : 0.0; }
};

}  // namespace zinf
