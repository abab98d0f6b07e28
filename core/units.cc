#include "core/units.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

namespace zinf {
namespace {

struct Suffix {
  std::string_view name;
  double scale;
};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits "12.5 GiB" into 12.5 and "GiB". Fails on no number, NaN/inf, negatives.
Status SplitNumber(std::string_view text, double* value, std::string* unit) {
  std::string_view s = Trim(text);
  if (s.empty()) return InvalidArgument("empty value");
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr == s.data())
    return InvalidArgument(fmt::format("'{}' does not start with a number", text));
  if (!std::isfinite(v)) return InvalidArgument(fmt::format("'{}' is not finite", text));
  if (v < 0) return InvalidArgument(fmt::format("'{}' is negative", text));
  *value = v;
  *unit = std::string(Trim(std::string_view(ptr, s.data() + s.size() - ptr)));
  return Status::Ok();
}

template <size_t N>
Result<double> ParseWith(std::string_view text, const std::array<Suffix, N>& table,
                         std::string_view kind, bool case_sensitive) {
  double v = 0;
  std::string unit;
  ZINF_RETURN_IF_ERROR(SplitNumber(text, &v, &unit));
  std::string key = case_sensitive ? unit : Lower(unit);
  for (const auto& s : table) {
    std::string name = case_sensitive ? std::string(s.name) : Lower(s.name);
    if (key == name) return v * s.scale;
  }
  std::string allowed;
  for (const auto& s : table) {
    if (s.name.empty()) continue;
    if (!allowed.empty()) allowed += ", ";
    allowed += s.name;
  }
  return InvalidArgument(
      fmt::format("'{}': unknown {} unit '{}' (allowed: a plain number or {})", text, kind, unit, allowed));
}

constexpr std::array<Suffix, 15> kByteUnits{{
    {"", 1}, {"B", 1},
    {"KiB", kKiB}, {"MiB", kMiB}, {"GiB", kGiB}, {"TiB", kTiB}, {"PiB", kTiB * 1024},
    {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"PB", 1e15},
    {"K", kKiB}, {"M", kMiB}, {"G", kGiB},
}};

constexpr std::array<Suffix, 14> kBandwidthUnits{{
    {"", 1}, {"B/s", 1},
    {"KB/s", 1e3}, {"MB/s", 1e6}, {"GB/s", 1e9}, {"TB/s", 1e12},
    {"KiB/s", kKiB}, {"MiB/s", kMiB}, {"GiB/s", kGiB}, {"TiB/s", kTiB},
    {"Mbps", 1e6 / 8}, {"Gbps", 1e9 / 8}, {"Tbps", 1e12 / 8}, {"Gb/s", 1e9 / 8},
}};

constexpr std::array<Suffix, 6> kFlopUnits{{
    {"", 1}, {"FLOP/s", 1}, {"GFLOP/s", 1e9}, {"TFLOP/s", 1e12}, {"PFLOP/s", 1e15}, {"MFLOP/s", 1e6},
}};

constexpr std::array<Suffix, 5> kCountUnits{{
    {"", 1}, {"K", 1e3}, {"M", 1e6}, {"B", 1e9}, {"T", 1e12},
}};

}  // namespace

Result<double> ParseBytes(std::string_view text) {
  return ParseWith(text, kByteUnits, "size", /*case_sensitive=*/true);
}
Result<double> ParseBandwidth(std::string_view text) {
  return ParseWith(text, kBandwidthUnits, "bandwidth", true);
}
Result<double> ParseFlops(std::string_view text) {
  return ParseWith(text, kFlopUnits, "compute rate", false);
}
Result<double> ParseCount(std::string_view text) {
  return ParseWith(text, kCountUnits, "count", true);
}

std::string FormatBytes(double b) {
  const char* names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int i = 0;
  double v = b;
  while (std::fabs(v) >= 1024.0 && i < 5) {
    v /= 1024.0;
    ++i;
  }
  if (i == 0) return fmt::format("{:.0f} B", v);
  return fmt::format("{:.2f} {}", v, names[i]);
}

std::string FormatBandwidth(double bps) {
  if (bps >= 1e12) return fmt::format("{:.2f} TB/s", bps / 1e12);
  if (bps >= 1e9) return fmt::format("{:.2f} GB/s", bps / 1e9);
  if (bps >= 1e6) return fmt::format("{:.1f} MB/s", bps / 1e6);
  return fmt::format("{:.0f} B/s", bps);
}

std::string FormatFlops(double f) {
  if (f >= 1e15) return fmt::format("{:.2f} PFLOP/s", f / 1e15);
  if (f >= 1e12) return fmt::format("{:.2f} TFLOP/s", f / 1e12);
  if (f >= 1e9) return fmt::format("{:.2f} GFLOP/s", f / 1e9);
  return fmt::format("{:.0f} FLOP/s", f);
}

std::string FormatSeconds(double s) {
  if (s < 1e-3) return fmt::format("{:.0f} us", s * 1e6);
  if (s < 1.0) return fmt::format("{:.2f} ms", s * 1e3);
  if (s < 600.0) return fmt::format("{:.3f} s", s);
  return fmt::format("{:.1f} min", s / 60.0);
}

std::string FormatCount(double n) {
  if (n >= 1e12) return fmt::format("{:.2f}T", n / 1e12);
  if (n >= 1e9) return fmt::format("{:.2f}B", n / 1e9);
  if (n >= 1e6) return fmt::format("{:.1f}M", n / 1e6);
  if (n >= 1e3) return fmt::format("{:.1f}K", n / 1e3);
  return fmt::format("{:.0f}", n);
}

}  // namespace zinf
