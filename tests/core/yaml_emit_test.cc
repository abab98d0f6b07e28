#include "core/yaml_emit.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace zinf {
namespace {

TEST(YamlOut, QuoteLeavesPlainWordsAlone) {
  EXPECT_EQ(YamlOut::Quote("gpt3-175b"), "gpt3-175b");
  EXPECT_EQ(YamlOut::Quote("zinf.plan/v1"), "zinf.plan/v1");
  EXPECT_EQ(YamlOut::Quote("/tmp/zinf-nvme"), "/tmp/zinf-nvme");
  EXPECT_EQ(YamlOut::Quote("device"), "device");
}

TEST(YamlOut, QuoteProtectsWhatYamlWouldReinterpret) {
  for (const char* s : {"", "true", "False", "yes", "No", "y", "N", "null", "Null", "NULL", "on", "OFF", "~",
                        "12", "1.5", "-3", ".inf", "a b", "key: value", "#hash", "[x]", "{y}", "a,b"}) {
    std::string q = YamlOut::Quote(s);
    EXPECT_EQ(q.front(), '"') << s;
    // Whatever is written reads back as the same string.
    YAML::Node n = YAML::Load("k: " + q);
    ASSERT_TRUE(n["k"].IsScalar()) << s;
    EXPECT_EQ(n["k"].Scalar(), s);
  }
}

TEST(YamlOut, QuoteEscapes) {
  const std::string s = "say \"hi\"\\ now\nnext\tline\x01";
  std::string q = YamlOut::Quote(s);
  YAML::Node n = YAML::Load("k: " + q);
  EXPECT_EQ(n["k"].Scalar(), s) << q;
}

TEST(YamlOut, NumbersRoundTripExactly) {
  EXPECT_EQ(YamlOut::Number(1), "1");
  EXPECT_EQ(YamlOut::Number(0.5), "0.5");
  EXPECT_EQ(YamlOut::Number(-2), "-2");
  EXPECT_EQ(YamlOut::Number(3e9), "3000000000");
  EXPECT_EQ(YamlOut::Number(std::nan("")), ".nan");
  EXPECT_EQ(YamlOut::Number(std::numeric_limits<double>::infinity()), ".inf");
  EXPECT_EQ(YamlOut::Number(-std::numeric_limits<double>::infinity()), "-.inf");
  for (double v : {0.1, 1.0 / 3.0, 1.6e9 * 1.0000001, 2e-5, 1e18, 28e12, 1.7976931348623157e308,
                   123456789.123456789}) {
    YAML::Node n = YAML::Load("k: " + YamlOut::Number(v));
    EXPECT_EQ(n["k"].as<double>(), v) << YamlOut::Number(v);
  }
}

TEST(YamlOut, NestedMapsAndListsParseBack) {
  YamlOut y;
  y.Comment("header");
  y.Key("format", "zinf.test/v1");
  y.Key("count", int64_t{7});
  y.Key("small", 3);
  y.Key("ratio", 0.25);
  y.Key("flag", false);
  y.Key("values", std::vector<double>{1, 2.5, 1e20});
  y.Begin("outer");
  y.Key("name", "two words");
  y.Begin("inner");
  y.Key("depth", int64_t{2});
  y.End();
  y.BeginList("items");
  y.Item();
  y.Key("x", 1.0);
  y.Key("y", 2.0);
  y.Item();
  y.Key("x", 3.0);
  y.Key("y", 4.0);
  y.EndList();
  y.End();
  y.Key("after", "top");
  YAML::Node n = YAML::Load(y.str());
  EXPECT_EQ(n["format"].Scalar(), "zinf.test/v1");
  EXPECT_EQ(n["count"].as<int>(), 7);
  EXPECT_EQ(n["small"].as<int>(), 3);
  EXPECT_EQ(n["ratio"].as<double>(), 0.25);
  EXPECT_FALSE(n["flag"].as<bool>());
  ASSERT_EQ(n["values"].size(), 3u);
  EXPECT_EQ(n["values"][2].as<double>(), 1e20);
  EXPECT_EQ(n["outer"]["name"].Scalar(), "two words");
  EXPECT_EQ(n["outer"]["inner"]["depth"].as<int>(), 2);
  ASSERT_EQ(n["outer"]["items"].size(), 2u);
  EXPECT_EQ(n["outer"]["items"][1]["x"].as<double>(), 3.0);
  EXPECT_EQ(n["outer"]["items"][1]["y"].as<double>(), 4.0);
  EXPECT_EQ(n["after"].Scalar(), "top");
  EXPECT_EQ(y.str().rfind("# header\n", 0), 0u);
}

}  // namespace
}  // namespace zinf
