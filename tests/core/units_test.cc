#include "core/units.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace zinf {
namespace {

double Bytes(const std::string& s) {
  Result<double> r = ParseBytes(s);
  EXPECT_TRUE(r.ok()) << s << ": " << r.status().ToString();
  return r.ok() ? *r : -1;
}
double Bw(const std::string& s) {
  Result<double> r = ParseBandwidth(s);
  EXPECT_TRUE(r.ok()) << s << ": " << r.status().ToString();
  return r.ok() ? *r : -1;
}
double Fl(const std::string& s) {
  Result<double> r = ParseFlops(s);
  EXPECT_TRUE(r.ok()) << s << ": " << r.status().ToString();
  return r.ok() ? *r : -1;
}
double Cnt(const std::string& s) {
  Result<double> r = ParseCount(s);
  EXPECT_TRUE(r.ok()) << s << ": " << r.status().ToString();
  return r.ok() ? *r : -1;
}

TEST(ParseBytes, PlainNumbersAreBytes) {
  EXPECT_EQ(Bytes("4096"), 4096);
  EXPECT_EQ(Bytes("0"), 0);
  EXPECT_EQ(Bytes("1.5e3"), 1500);
  EXPECT_EQ(Bytes("  7 B  "), 7);
  EXPECT_EQ(Bytes("7B"), 7);
}

TEST(ParseBytes, BinarySuffixes) {
  EXPECT_EQ(Bytes("1KiB"), 1024.0);
  EXPECT_EQ(Bytes("512 MiB"), 512.0 * 1024 * 1024);
  EXPECT_EQ(Bytes("32GiB"), 32.0 * kGiB);
  EXPECT_EQ(Bytes("2 TiB"), 2 * kTiB);
  EXPECT_EQ(Bytes("1PiB"), kTiB * 1024);
  // Bare K, M, G are binary too.
  EXPECT_EQ(Bytes("4K"), 4096);
  EXPECT_EQ(Bytes("1M"), kMiB);
  EXPECT_EQ(Bytes("3G"), 3 * kGiB);
}

TEST(ParseBytes, DecimalSuffixes) {
  EXPECT_EQ(Bytes("1KB"), 1e3);
  EXPECT_EQ(Bytes("5 MB"), 5e6);
  EXPECT_EQ(Bytes("32 GB"), 32e9);
  EXPECT_EQ(Bytes("1.5TB"), 1.5e12);
  EXPECT_EQ(Bytes("2PB"), 2e15);
}

TEST(ParseBytes, SuffixesAreCaseSensitive) {
  // "gb" could mean gigabits or gigabytes: refuse rather than guess.
  EXPECT_FALSE(ParseBytes("32gib").ok());
  EXPECT_FALSE(ParseBytes("32 gb").ok());
  EXPECT_FALSE(ParseBytes("1 kb").ok());
}

TEST(ParseBytes, BadInput) {
  for (const char* bad : {"", "   ", "GB", "abc", "12 XB", "-1", "-1GB", "nan", "NaN GB", "inf", "-inf",
                          "1e400", "1..5GB", "+", "12 GB/s", "0x10"}) {
    Result<double> r = ParseBytes(bad);
    EXPECT_FALSE(r.ok()) << "'" << bad << "' was accepted as " << (r.ok() ? *r : 0);
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << bad;
    }
  }
}

TEST(ParseBytes, Messages) {
  Result<double> unit = ParseBytes("12 XB");
  ASSERT_FALSE(unit.ok());
  const std::string& m = unit.status().message();
  EXPECT_NE(m.find("'12 XB'"), std::string::npos) << m;
  EXPECT_NE(m.find("unknown size unit 'XB'"), std::string::npos) << m;
  EXPECT_NE(m.find("GiB"), std::string::npos) << m;  // lists what is allowed
  EXPECT_NE(m.find("TB"), std::string::npos) << m;
  EXPECT_NE(ParseBytes("").status().message().find("empty"), std::string::npos);
  EXPECT_NE(ParseBytes("-3 GB").status().message().find("negative"), std::string::npos);
  EXPECT_NE(ParseBytes("nan").status().message().find("not finite"), std::string::npos);
  EXPECT_NE(ParseBytes("GB").status().message().find("does not start with a number"), std::string::npos);
}

TEST(ParseBandwidth, BytesAndBits) {
  EXPECT_EQ(Bw("12 GB/s"), 12e9);
  EXPECT_EQ(Bw("12GiB/s"), 12 * kGiB);
  EXPECT_EQ(Bw("800 Gbps"), 100e9);  // bits: 800 / 8 GB/s
  EXPECT_EQ(Bw("200 Gb/s"), 25e9);
  EXPECT_EQ(Bw("100 Mbps"), 12.5e6);
  EXPECT_EQ(Bw("3.2 Tbps"), 400e9);
  EXPECT_EQ(Bw("1.6e9"), 1.6e9);
  EXPECT_EQ(Bw("5 B/s"), 5);
  EXPECT_EQ(Bw("1 KB/s"), 1e3);
  EXPECT_EQ(Bw("1 MB/s"), 1e6);
  EXPECT_EQ(Bw("2 TB/s"), 2e12);
  EXPECT_EQ(Bw("1 KiB/s"), kKiB);
  EXPECT_EQ(Bw("1 MiB/s"), kMiB);
  EXPECT_EQ(Bw("1 TiB/s"), kTiB);
}

TEST(ParseBandwidth, BadInput) {
  for (const char* bad : {"", "12 GB", "12 gb/s", "fast", "-1 GB/s", "nan GB/s", "12 GBps"}) {
    EXPECT_FALSE(ParseBandwidth(bad).ok()) << "'" << bad << "'";
  }
  EXPECT_NE(ParseBandwidth("12 GB").status().message().find("unknown bandwidth unit 'GB'"), std::string::npos);
}

TEST(ParseFlops, RatesAnyCase) {
  EXPECT_EQ(Fl("70 TFLOP/s"), 70e12);
  EXPECT_EQ(Fl("312e12"), 312e12);
  EXPECT_EQ(Fl("70 tflop/s"), 70e12);
  EXPECT_EQ(Fl("1 PFLOP/s"), 1e15);
  EXPECT_EQ(Fl("5 GFLOP/s"), 5e9);
  EXPECT_EQ(Fl("3 MFLOP/s"), 3e6);
  EXPECT_EQ(Fl("42 FLOP/s"), 42);
  EXPECT_FALSE(ParseFlops("70 TFLOPS").ok());
  EXPECT_FALSE(ParseFlops("-1 TFLOP/s").ok());
  EXPECT_FALSE(ParseFlops("").ok());
  EXPECT_NE(ParseFlops("1 XFLOP/s").status().message().find("unknown compute rate unit"), std::string::npos);
}

TEST(ParseCount, Suffixes) {
  EXPECT_EQ(Cnt("175B"), 175e9);
  EXPECT_EQ(Cnt("1.2T"), 1.2e12);
  EXPECT_EQ(Cnt("125M"), 125e6);
  EXPECT_EQ(Cnt("50K"), 50e3);
  EXPECT_EQ(Cnt("7e9"), 7e9);
  EXPECT_EQ(Cnt("12"), 12);
  EXPECT_FALSE(ParseCount("175b").ok());  // case-sensitive like sizes
  EXPECT_FALSE(ParseCount("1 G").ok());
  EXPECT_FALSE(ParseCount("-5M").ok());
  EXPECT_FALSE(ParseCount("").ok());
}

TEST(FormatBytes, BinaryPrefixes) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1024), "1.00 KiB");
  EXPECT_EQ(FormatBytes(1.5 * kGiB), "1.50 GiB");
  EXPECT_EQ(FormatBytes(512 * kMiB), "512.00 MiB");
  EXPECT_EQ(FormatBytes(2 * kTiB), "2.00 TiB");
  EXPECT_EQ(FormatBytes(3 * kTiB * 1024), "3.00 PiB");
  EXPECT_EQ(FormatBytes(kTiB * 1024 * 2048), "2048.00 PiB");  // largest prefix is PiB
}

TEST(FormatBandwidth, DecimalPrefixes) {
  EXPECT_EQ(FormatBandwidth(12e9), "12.00 GB/s");
  EXPECT_EQ(FormatBandwidth(1.5e12), "1.50 TB/s");
  EXPECT_EQ(FormatBandwidth(2.5e6), "2.5 MB/s");
  EXPECT_EQ(FormatBandwidth(500), "500 B/s");
}

TEST(FormatFlops, Prefixes) {
  EXPECT_EQ(FormatFlops(70e12), "70.00 TFLOP/s");
  EXPECT_EQ(FormatFlops(1.2e15), "1.20 PFLOP/s");
  EXPECT_EQ(FormatFlops(5e9), "5.00 GFLOP/s");
  EXPECT_EQ(FormatFlops(100), "100 FLOP/s");
}

TEST(FormatSeconds, Ranges) {
  EXPECT_EQ(FormatSeconds(812e-6), "812 us");
  EXPECT_EQ(FormatSeconds(0.0123), "12.30 ms");
  EXPECT_EQ(FormatSeconds(4.56), "4.560 s");
  EXPECT_EQ(FormatSeconds(750), "12.5 min");
}

TEST(FormatCount, Prefixes) {
  EXPECT_EQ(FormatCount(175e9), "175.00B");
  EXPECT_EQ(FormatCount(1.2e12), "1.20T");
  EXPECT_EQ(FormatCount(125e6), "125.0M");
  EXPECT_EQ(FormatCount(50257), "50.3K");
  EXPECT_EQ(FormatCount(12), "12");
}

TEST(Units, FormatThenParseIsClose) {
  for (double v : {3e9, 1.6e9, 25.6e9, 900e9, 2.039e12}) {
    Result<double> r = ParseBandwidth(FormatBandwidth(v));
    ASSERT_TRUE(r.ok()) << FormatBandwidth(v);
    EXPECT_NEAR(*r, v, v * 5e-3) << FormatBandwidth(v);
  }
  for (double v : {80 * kGiB, 1.5 * kTiB, 4096.0 * 3}) {
    Result<double> r = ParseBytes(FormatBytes(v));
    ASSERT_TRUE(r.ok()) << FormatBytes(v);
    EXPECT_NEAR(*r, v, v * 5e-3) << FormatBytes(v);
  }
  for (double v : {125e12, 989e12, 1.5e15}) {
    Result<double> r = ParseFlops(FormatFlops(v));
    ASSERT_TRUE(r.ok()) << FormatFlops(v);
    EXPECT_NEAR(*r, v, v * 5e-3);
  }
  for (double v : {175e9, 6.74e9, 1.2e12}) {
    Result<double> r = ParseCount(FormatCount(v));
    ASSERT_TRUE(r.ok()) << FormatCount(v);
    EXPECT_NEAR(*r, v, v * 5e-3);
  }
}

}  // namespace
}  // namespace zinf
