#include "core/speed_totals.h"

#include <algorithm>

namespace zinf {

void SpeedTotals::Add(double expected, double measured) {
  if (measured <= 0) return;
  const double r = expected / measured;
  min = checks == 0 ? r : std::min(min, r);
  max = checks == 0 ? r : std::max(max, r);
  ++checks;
  expected_s += expected;
  measured_s += measured;
}

}  // namespace zinf
