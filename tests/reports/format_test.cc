#include "reports/format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "reports/escape.h"
#include "tests/reports/xml_check.h"

namespace zinf::reports {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

TEST(Format, Bytes) {
  EXPECT_EQ(HumanBytes(0), "0 B");
  EXPECT_EQ(HumanBytes(512), "512 B");
  EXPECT_EQ(HumanBytes(1536), "1.5 KiB");
  EXPECT_EQ(HumanBytes(1.5 * kGiB), "1.5 GiB");
  EXPECT_EQ(HumanBytes(80 * kGiB), "80 GiB");
  EXPECT_EQ(HumanBytes(2.0 * 1024 * kGiB), "2 TiB");
  EXPECT_EQ(HumanBytes(1023.99 * 1024 * 1024), "1 GiB");  // rounding carries to the next unit
  EXPECT_EQ(HumanBytes(-3 * kGiB), "-3 GiB");
}

TEST(Format, SecondsFlopsCounts) {
  EXPECT_EQ(HumanSeconds(0.0123), "12.3 ms");
  EXPECT_EQ(HumanSeconds(812e-6), "812 us");
  EXPECT_EQ(HumanSeconds(4.56), "4.56 s");
  EXPECT_EQ(HumanSeconds(0), "0 s");
  EXPECT_EQ(HumanSeconds(250e-9), "250 ns");
  EXPECT_EQ(HumanFlops(3.12e14), "312 TFLOP/s");
  EXPECT_EQ(HumanFlops(4.5e10), "45 GFLOP/s");
  EXPECT_EQ(HumanCount(1.75e11), "175B");
  EXPECT_EQ(HumanCount(1.3e12), "1.3T");
  EXPECT_EQ(HumanCount(125e6), "125M");
  EXPECT_EQ(HumanCount(7), "7");
  EXPECT_EQ(HumanBandwidth(12.5e9), "12.5 GB/s");
  EXPECT_EQ(FormatValue(0.425, Unit::kPercent), "42.5%");
  EXPECT_EQ(FormatValue(2.5e6, Unit::kNone), "2.5M");
  EXPECT_EQ(FormatValue(0.125, Unit::kNone), "0.125");
}

TEST(Format, NonFiniteIsNa) {
  EXPECT_EQ(HumanBytes(std::numeric_limits<double>::quiet_NaN()), "n/a");
  EXPECT_EQ(HumanSeconds(std::numeric_limits<double>::infinity()), "n/a");
  EXPECT_EQ(SvgNum(std::numeric_limits<double>::quiet_NaN()), "0");
  EXPECT_EQ(SvgNum(-0.001), "0");
  EXPECT_EQ(SvgNum(12.345), "12.35");
}

TEST(Format, NiceSteps) {
  EXPECT_DOUBLE_EQ(NiceStep(0.9), 1);
  EXPECT_DOUBLE_EQ(NiceStep(1.3), 2);
  EXPECT_DOUBLE_EQ(NiceStep(2.2), 2.5);
  EXPECT_DOUBLE_EQ(NiceStep(3.7), 5);
  EXPECT_DOUBLE_EQ(NiceStep(7), 10);
  EXPECT_DOUBLE_EQ(NiceStep(0.03), 0.05);
}

TEST(Format, LinearTicksShareOnePrefix) {
  AxisTicks t = LinearTicks(0, 7.3 * kGiB, Unit::kBytes);
  ASSERT_GE(t.ticks.size(), 3u);
  EXPECT_EQ(t.ticks.front().label, "0");
  EXPECT_DOUBLE_EQ(t.lo, 0);
  EXPECT_GE(t.hi, 7.3 * kGiB);
  for (size_t i = 1; i < t.ticks.size(); ++i)
    EXPECT_NE(t.ticks[i].label.find("GiB"), std::string::npos) << t.ticks[i].label;
  AxisTicks s = LinearTicks(0, 0.0123, Unit::kSeconds);
  EXPECT_NE(s.ticks.back().label.find("ms"), std::string::npos);
  AxisTicks frac = LinearTicks(0, 7.4, Unit::kNone, 3);  // step 2.5 needs one decimal
  EXPECT_EQ(frac.ticks[1].label, "2.5");
  AxisTicks flat = LinearTicks(5, 5, Unit::kNone);
  EXPECT_LT(flat.lo, flat.hi);
  AxisTicks zero = LinearTicks(0, 0, Unit::kNone);
  EXPECT_DOUBLE_EQ(zero.lo, 0);
  EXPECT_DOUBLE_EQ(zero.hi, 1);
}

TEST(Format, LogTicks) {
  AxisTicks t = Log10Ticks(3, 2e6, Unit::kNone);
  EXPECT_LE(t.lo, 3);
  EXPECT_GE(t.hi, 2e6);
  for (const auto& k : t.ticks) {
    double l = std::log10(k.value);
    EXPECT_NEAR(l, std::round(l), 1e-9) << k.label;  // decades only for a wide range
  }
  AxisTicks narrow = Log10Ticks(120, 700, Unit::kNone);  // 1-2-5 within a short range
  EXPECT_DOUBLE_EQ(narrow.lo, 100);
  EXPECT_DOUBLE_EQ(narrow.hi, 1000);
  EXPECT_EQ(narrow.ticks.size(), 4u);  // 100 200 500 1000
  AxisTicks bytes = Log10Ticks(1024, 1024 * kGiB, Unit::kBytes);
  std::vector<std::string> labels;
  for (const auto& k : bytes.ticks) labels.push_back(k.label);
  EXPECT_EQ(labels, (std::vector<std::string>{"1 KiB", "1 MiB", "1 GiB", "1 TiB"}));
  AxisTicks bad = Log10Ticks(0, -1, Unit::kNone);  // never NaN
  EXPECT_TRUE(std::isfinite(bad.lo) && std::isfinite(bad.hi) && bad.lo > 0);
}

TEST(Escape, AllSpecialCharacters) {
  EXPECT_EQ(HtmlEscape("a&b<c>d\"e'f"), "a&amp;b&lt;c&gt;d&quot;e&#39;f");
  EXPECT_EQ(HtmlEscape("plain text"), "plain text");
}

TEST(Escape, ControlAndInvalidUtf8Replaced) {
  std::string s = HtmlEscape(std::string("a\x01" "b\tc\n", 6));
  EXPECT_EQ(s, "a\xEF\xBF\xBD" "b\tc\n");
  EXPECT_EQ(HtmlEscape("\xC3\xA9t\xC3\xA9"), "\xC3\xA9t\xC3\xA9");  // valid UTF-8 kept
  EXPECT_EQ(HtmlEscape("x\xFFy"), "x\xEF\xBF\xBDy");
  EXPECT_EQ(HtmlEscape("\xE2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // truncated sequence
  EXPECT_EQ(testing::CheckXml("<a>" + HtmlEscape(std::string("\0<&>", 4)) + "</a>"), "");
}

TEST(Escape, Truncate) {
  EXPECT_EQ(Utf8Truncate("abcdef", 10), "abcdef");
  EXPECT_EQ(Utf8Truncate("abcdef", 4), "abc\xE2\x80\xA6");
  EXPECT_EQ(Utf8Length("\xC3\xA9t\xC3\xA9"), 3u);
  EXPECT_EQ(Utf8Truncate("\xC3\xA9\xC3\xA9\xC3\xA9", 2), "\xC3\xA9\xE2\x80\xA6");
}

TEST(XmlCheck, CatchesMalformed) {
  using testing::CheckXml;
  EXPECT_EQ(CheckXml("<a><b/></a>"), "");
  EXPECT_NE(CheckXml("<a><b></a>"), "");
  EXPECT_NE(CheckXml("<a>x < y</a>"), "");
  EXPECT_NE(CheckXml("<a>x & y</a>"), "");
  EXPECT_NE(CheckXml("<a x=1></a>"), "");
  EXPECT_NE(CheckXml("<a x=\"1\" x=\"2\"></a>"), "");
  EXPECT_NE(CheckXml("<a></a><b></b>"), "");
}

}  // namespace
}  // namespace zinf::reports
