// Units: parse and format sizes, bandwidths, rates and counts.
// Sizes: "32GiB", "32 GB", "1.5TB", "4096", "512 MiB" (binary prefixes KiB..PiB = 1024^k,
// decimal KB..PB = 1000^k; plain numbers are bytes). Bandwidths: "12 GB/s", "12GiB/s",
// "800 Gbps" (bits), "1.6e9" (bytes/s). Rates: "70 TFLOP/s", "312e12". Counts: "175B", "1.2T",
// "125M", "7e9".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace zinf {

constexpr double kKiB = 1024.0;
constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kTiB = kGiB * 1024.0;

Result<double> ParseBytes(std::string_view text);      // -> bytes
Result<double> ParseBandwidth(std::string_view text);  // -> bytes per second
Result<double> ParseFlops(std::string_view text);      // -> FLOP per second
Result<double> ParseCount(std::string_view text);      // -> plain count

std::string FormatBytes(double bytes);          // "1.50 GiB"
std::string FormatBandwidth(double bytes_per_s);  // "12.00 GB/s" (decimal, as vendors quote)
std::string FormatFlops(double flops);          // "70.00 TFLOP/s"
std::string FormatSeconds(double s);            // "812 us", "12.30 ms", "4.560 s", "12.5 min"
std::string FormatCount(double n);              // "175.00B", "1.20T", "125.0M", "50.3K"

}  // namespace zinf
