// Human-readable units and axis ticks for reports and charts.
//   HumanBytes(1.5 * 2^30) == "1.5 GiB"     HumanSeconds(0.0123) == "12.3 ms"
//   HumanFlops(3.12e14)    == "312 TFLOP/s" HumanCount(1.75e11)  == "175B"
// Non-finite values format as "n/a" (never "nan"/"inf").
#pragma once

#include <string>
#include <vector>

namespace zinf::reports {

enum class Unit {
  kNone,            // plain numbers, k/M/G/T above 1000
  kBytes,           // B, KiB, MiB, GiB, TiB, PiB (1024^k)
  kSeconds,         // ns, us, ms, s
  kFlops,           // FLOP/s .. EFLOP/s (1000^k)
  kCount,           // K, M, B, T (e.g. parameters)
  kBytesPerSecond,  // B/s, KB/s, MB/s, GB/s, TB/s (decimal, as vendors quote)
  kPercent,         // value is a fraction: 0.42 -> "42%"
};

// `sig` significant digits, trailing zeros trimmed.
std::string HumanBytes(double bytes, int sig = 3);
std::string HumanSeconds(double seconds, int sig = 3);
std::string HumanFlops(double flop_per_s, int sig = 3);
std::string HumanCount(double n, int sig = 3);
std::string HumanBandwidth(double bytes_per_s, int sig = 3);
std::string FormatValue(double v, Unit unit, int sig = 3);

struct Tick {
  double value;       // in data units
  std::string label;  // formatted with the axis unit
};

struct AxisTicks {
  double lo = 0, hi = 1;  // the (expanded) axis domain, in data units; lo < hi
  std::vector<Tick> ticks;
};

// "Nice" step (1, 2, 2.5 or 5 times a power of ten) close to raw > 0.
double NiceStep(double raw);
// Ticks on a linear axis covering [lo, hi] (about `target` of them); the domain is widened
// to whole steps. All labels share one prefix (0, 2 GiB, 4 GiB, ...).
AxisTicks LinearTicks(double lo, double hi, Unit unit, int target = 6);
// Ticks on a log10 axis covering [lo, hi], 0 < lo <= hi: decades (1-2-5 when the range is
// short); bytes use powers of two (1 KiB, 1 MiB, ... or 256 MiB, 512 MiB, ...).
AxisTicks Log10Ticks(double lo, double hi, Unit unit);

// A coordinate for SVG attributes: at most 2 decimals, non-finite -> "0".
std::string SvgNum(double v);

}  // namespace zinf::reports
