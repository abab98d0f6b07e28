#include "reports/format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <span>

namespace zinf::reports {
namespace {

struct Prefix {
  double scale;
  const char* suffix;
};

struct UnitTable {
  std::span<const Prefix> prefixes;
  const char* sep;  // between number and suffix
  size_t unit_index;  // the entry with scale 1 (used for zero)
};

constexpr Prefix kBytes[] = {{1, "B"}, {1024.0, "KiB"}, {1048576.0, "MiB"},
                             {1073741824.0, "GiB"}, {1099511627776.0, "TiB"},
                             {1125899906842624.0, "PiB"}};
constexpr Prefix kSeconds[] = {{1e-9, "ns"}, {1e-6, "us"}, {1e-3, "ms"}, {1, "s"}};
constexpr Prefix kFlops[] = {{1, "FLOP/s"},     {1e3, "kFLOP/s"},  {1e6, "MFLOP/s"},
                             {1e9, "GFLOP/s"},  {1e12, "TFLOP/s"}, {1e15, "PFLOP/s"},
                             {1e18, "EFLOP/s"}};
constexpr Prefix kCount[] = {{1, ""}, {1e3, "K"}, {1e6, "M"}, {1e9, "B"}, {1e12, "T"}};
constexpr Prefix kBandwidth[] = {{1, "B/s"}, {1e3, "KB/s"}, {1e6, "MB/s"}, {1e9, "GB/s"},
                                 {1e12, "TB/s"}};
constexpr Prefix kPlain[] = {{1, ""}, {1e3, "k"}, {1e6, "M"}, {1e9, "G"}, {1e12, "T"}};
constexpr Prefix kPercentP[] = {{0.01, "%"}};

UnitTable TableFor(Unit u) {
  switch (u) {
    case Unit::kBytes: return {kBytes, " ", 0};
    case Unit::kSeconds: return {kSeconds, " ", 3};
    case Unit::kFlops: return {kFlops, " ", 0};
    case Unit::kCount: return {kCount, "", 0};
    case Unit::kBytesPerSecond: return {kBandwidth, " ", 0};
    case Unit::kPercent: return {kPercentP, "", 0};
    case Unit::kNone: break;
  }
  return {kPlain, "", 0};
}

// Index of the largest prefix whose scale <= |v| (the unit entry for zero).
size_t PickPrefix(const UnitTable& t, double abs_v) {
  if (abs_v == 0) return t.unit_index;
  size_t idx = 0;
  for (size_t i = 0; i < t.prefixes.size(); ++i)
    if (abs_v >= t.prefixes[i].scale * (1 - 1e-12)) idx = i;
  return idx;
}

std::string TrimZeros(std::string s) {
  if (s.find('.') == std::string::npos) return s;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

// Decimals giving `sig` significant digits for |x| (x already scaled).
int DecimalsFor(double abs_x, int sig) {
  if (abs_x == 0) return 0;
  int digits = static_cast<int>(std::floor(std::log10(abs_x))) + 1;
  return std::clamp(sig - digits, 0, 12);
}

// Fewest decimals that represent `step` exactly enough.
int DecimalsForStep(double step) {
  for (int d = 0; d <= 10; ++d) {
    double x = step * std::pow(10.0, d);
    if (std::fabs(x - std::round(x)) < 1e-6 * std::max(1.0, x)) return d;
  }
  return 10;
}

std::string Join(const std::string& num, const UnitTable& t, size_t idx) {
  const char* suffix = t.prefixes[idx].suffix;
  if (*suffix == '\0') return num;
  return num + t.sep + suffix;
}

}  // namespace

std::string FormatValue(double v, Unit unit, int sig) {
  if (!std::isfinite(v)) return "n/a";
  sig = std::clamp(sig, 1, 15);
  UnitTable t = TableFor(unit);
  std::string sign = v < 0 ? "-" : "";
  double a = std::fabs(v);
  if (unit == Unit::kNone && a > 0 && a < 1e-4) return fmt::format("{:.{}e}", v, sig - 1);
  size_t idx = PickPrefix(t, a);
  double x = a / t.prefixes[idx].scale;
  int dec = DecimalsFor(x, sig);
  // Rounding may carry into the next prefix: 1023.9 MiB -> 1 GiB.
  double rounded = std::round(x * std::pow(10.0, dec)) / std::pow(10.0, dec);
  if (idx + 1 < t.prefixes.size() &&
      rounded * t.prefixes[idx].scale >= t.prefixes[idx + 1].scale * (1 - 1e-12)) {
    ++idx;
    x = a / t.prefixes[idx].scale;
    dec = DecimalsFor(x, sig);
  }
  std::string num = TrimZeros(fmt::format("{:.{}f}", x, dec));
  if (num == "0") sign.clear();
  return Join(sign + num, t, idx);
}

std::string HumanBytes(double bytes, int sig) { return FormatValue(bytes, Unit::kBytes, sig); }
std::string HumanSeconds(double s, int sig) { return FormatValue(s, Unit::kSeconds, sig); }
std::string HumanFlops(double f, int sig) { return FormatValue(f, Unit::kFlops, sig); }
std::string HumanCount(double n, int sig) { return FormatValue(n, Unit::kCount, sig); }
std::string HumanBandwidth(double b, int sig) {
  return FormatValue(b, Unit::kBytesPerSecond, sig);
}

double NiceStep(double raw) {
  if (!(raw > 0) || !std::isfinite(raw)) return 1;
  double p = std::pow(10.0, std::floor(std::log10(raw)));
  double m = raw / p;
  double nice = m <= 1.0 ? 1 : m <= 2.0 ? 2 : m <= 2.5 ? 2.5 : m <= 5.0 ? 5 : 10;
  return nice * p;
}

AxisTicks LinearTicks(double lo, double hi, Unit unit, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  if (lo > hi) std::swap(lo, hi);
  if (hi - lo <= std::max(std::fabs(hi), std::fabs(lo)) * 1e-12) {
    if (lo == 0 && hi == 0) {
      hi = 1;
    } else {
      double d = std::max(std::fabs(lo), std::fabs(hi)) * 0.1;
      lo -= d;
      hi += d;
    }
  }
  UnitTable t = TableFor(unit);
  size_t idx = PickPrefix(t, std::max(std::fabs(lo), std::fabs(hi)));
  double scale = t.prefixes[idx].scale;
  double slo = lo / scale, shi = hi / scale;
  double step = NiceStep((shi - slo) / std::max(1, target));
  double first = std::floor(slo / step + 1e-9) * step;
  double last = std::ceil(shi / step - 1e-9) * step;
  int dec = DecimalsForStep(step);
  AxisTicks out;
  out.lo = first * scale;
  out.hi = last * scale;
  int n = static_cast<int>(std::lround((last - first) / step));
  for (int i = 0; i <= n; ++i) {
    double s = first + i * step;
    if (std::fabs(s) < step * 1e-9) s = 0;
    std::string label = s == 0 ? "0" : Join(fmt::format("{:.{}f}", s, dec), t, idx);
    out.ticks.push_back({s * scale, std::move(label)});
  }
  return out;
}

AxisTicks Log10Ticks(double lo, double hi, Unit unit) {
  if (!(lo > 0) || !std::isfinite(lo)) lo = 1;
  if (!(hi > 0) || !std::isfinite(hi)) hi = lo * 10;
  if (lo > hi) std::swap(lo, hi);
  std::vector<double> cand;
  if (unit == Unit::kBytes) {
    int e0 = static_cast<int>(std::floor(std::log2(lo) + 1e-9));
    int e1 = static_cast<int>(std::ceil(std::log2(hi) - 1e-9));
    if (e1 <= e0) e1 = e0 + 1;
    int span = e1 - e0;
    int stride = span <= 9 ? 1 : span <= 18 ? 2 : 10 * ((span + 89) / 90);
    int a = static_cast<int>(std::floor(static_cast<double>(e0) / stride)) * stride;
    int b = static_cast<int>(std::ceil(static_cast<double>(e1) / stride)) * stride;
    for (int e = a; e <= b; e += stride) cand.push_back(std::ldexp(1.0, e));
  } else {
    int k0 = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
    int k1 = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
    if (k1 <= k0) k1 = k0 + 1;
    int n = k1 - k0;
    int stride = n <= 8 ? 1 : (n + 7) / 8;
    for (int k = k0; k <= k1; ++k) {
      double p = std::pow(10.0, k);
      if (n <= 3) {
        for (double m : {1.0, 2.0, 5.0}) cand.push_back(m * p);
      } else if ((k - k0) % stride == 0) {
        cand.push_back(p);
      }
    }
    if (n > 8 && cand.back() < hi) cand.push_back(cand.back() * std::pow(10.0, stride));
  }
  // Tighten the domain to the candidates bracketing [lo, hi].
  double dlo = cand.front(), dhi = cand.back();
  for (double c : cand) {
    if (c <= lo * (1 + 1e-9)) dlo = c;
  }
  for (auto it = cand.rbegin(); it != cand.rend(); ++it) {
    if (*it >= hi * (1 - 1e-9)) dhi = *it;
  }
  if (dhi <= dlo) dhi = dlo * 10;
  AxisTicks out;
  out.lo = dlo;
  out.hi = dhi;
  for (double c : cand) {
    if (c >= dlo * (1 - 1e-9) && c <= dhi * (1 + 1e-9)) out.ticks.push_back({c, FormatValue(c, unit)});
  }
  return out;
}

std::string SvgNum(double v) {
  if (!std::isfinite(v)) return "0";
  std::string s = TrimZeros(fmt::format("{:.2f}", v));
  if (s == "-0") s = "0";
  return s;
}

}  // namespace zinf::reports
