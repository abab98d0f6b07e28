// LoadYamlFile: the entry point of every zinf file reader.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "core/field_reader.h"
#include "tests/core/test_util.h"

namespace zinf {
namespace {

using testing::ScratchDir;

TEST(LoadYamlFile, ReadsAMapping) {
  ScratchDir dir;
  std::string p = dir.Write("ok.yaml", "# comment\na: 1\nb: {c: [1, 2]}\n");
  Result<YAML::Node> r = LoadYamlFile(p);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)["a"].as<int>(), 1);
  EXPECT_EQ((*r)["b"]["c"].size(), 2u);
}

TEST(LoadYamlFile, ReadsJson) {
  ScratchDir dir;
  std::string p = dir.Write("c.json", "{\"n_layer\": 12, \"n_inner\": null, \"arch\": [\"GPT2\"]}\n");
  Result<YAML::Node> r = LoadYamlFile(p);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)["n_layer"].as<int>(), 12);
  EXPECT_TRUE((*r)["n_inner"].IsNull());
}

TEST(LoadYamlFile, MissingFile) {
  ScratchDir dir;
  std::string p = dir.File("does-not-exist.yaml");
  Result<YAML::Node> r = LoadYamlFile(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kNotFound);
  EXPECT_NE(r.status().message().find(p), std::string::npos) << r.status().message();
}

TEST(LoadYamlFile, EmptyFile) {
  ScratchDir dir;
  for (const char* text : {"", "\n\n", "  \t\r\n"}) {
    std::string p = dir.Write("empty.yaml", text);
    Result<YAML::Node> r = LoadYamlFile(p);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find(p + ": file is empty"), std::string::npos) << r.status().message();
  }
}

TEST(LoadYamlFile, SyntaxErrorHasLineAndColumn) {
  ScratchDir dir;
  const char* broken[] = {
      "a: 1\nb: [1, 2\nc: 3\n",           // unterminated flow sequence
      "a: 1\nb: \"unterminated",          // quoted string cut at end of file (yaml-cpp 0.7
                                          // accepts one that is followed by a newline)
      "a: 1\n  b: 2\n c: 3\n",            // bad indentation
      "a: {x: 1\n",                       // truncated flow map
      "{\"n_layer\": 12, \"n_embd\": ",   // truncated JSON
  };
  for (const char* text : broken) {
    std::string p = dir.Write("broken.yaml", text);
    Result<YAML::Node> r = LoadYamlFile(p);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    const std::string& m = r.status().message();
    std::regex shape(std::regex_replace(p, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                     R"(:[0-9]+:[0-9]+: syntax error: .+)");
    EXPECT_TRUE(std::regex_search(m, shape)) << m;
  }
}

TEST(LoadYamlFile, SyntaxErrorLineIsOneBased) {
  ScratchDir dir;
  std::string p = dir.Write("broken.yaml", "a: 1\nb: 2\nc: [1, 2\nd: 4\n");
  Result<YAML::Node> r = LoadYamlFile(p);
  ASSERT_FALSE(r.ok());
  // The error is on or after the line that opened the list (line 3), never on line 0.
  std::smatch m;
  std::string msg = r.status().message();
  ASSERT_TRUE(std::regex_search(msg, m, std::regex(R"(broken\.yaml:([0-9]+):([0-9]+):)"))) << msg;
  EXPECT_GE(std::stoi(m[1]), 3) << msg;
  EXPECT_GE(std::stoi(m[2]), 1) << msg;
}

TEST(LoadYamlFile, TopLevelMustBeAMapping) {
  ScratchDir dir;
  for (const char* text : {"- a\n- b\n", "just a scalar\n", "42\n", "[1, 2, 3]\n", "# only a comment\n", "~\n"}) {
    std::string p = dir.Write("list.yaml", text);
    Result<YAML::Node> r = LoadYamlFile(p);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find(p + ": top level must be a mapping"), std::string::npos)
        << text << " -> " << r.status().message();
  }
}

}  // namespace
}  // namespace zinf
