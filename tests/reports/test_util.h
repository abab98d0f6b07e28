// Shared helpers for the reports tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "tests/reports/xml_check.h"

namespace zinf::reports::testing {

// A string that must never reach the output unescaped.
inline constexpr std::string_view kHostile = "<script>alert(\"x&y's\")</script>";

inline void ExpectNoRawHostile(const std::string& out) {
  EXPECT_EQ(out.find("<script"), std::string::npos);
  EXPECT_EQ(out.find("</script"), std::string::npos);
  EXPECT_EQ(out.find("alert(\""), std::string::npos);
  EXPECT_EQ(out.find("&y"), std::string::npos);
  EXPECT_EQ(out.find("y's"), std::string::npos);
}

inline void ExpectFinite(const std::string& out) {
  EXPECT_EQ(out.find("nan"), std::string::npos) << out;
  EXPECT_EQ(out.find("NaN"), std::string::npos);
  EXPECT_EQ(out.find("inf"), std::string::npos) << out;
  EXPECT_EQ(out.find("Inf"), std::string::npos);
}

inline void ExpectWellFormed(const std::string& out) { EXPECT_EQ(CheckXml(out), "") << out; }

}  // namespace zinf::reports::testing
