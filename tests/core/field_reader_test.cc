#include "core/field_reader.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace zinf {
namespace {

constexpr const char* kFile = "conf/test.yaml";

FieldReader Reader(const std::string& yaml, bool lenient = false) {
  return FieldReader(YAML::Load(yaml), kFile, "", lenient);
}

// The message of a failed Finish(), or "" when it succeeded.
std::string FinishMessage(FieldReader& r) {
  Status s = r.Finish();
  if (!s.ok()) {
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.ToString();
  }
  return s.ok() ? "" : s.message();
}

void ExpectContains(const std::string& text, const std::vector<std::string>& parts) {
  for (const auto& p : parts) EXPECT_NE(text.find(p), std::string::npos) << "'" << p << "' not in: " << text;
}

TEST(FieldReader, ReadsTypedValues) {
  FieldReader r = Reader(
      "n: 12\nx: 0.5\nflag: true\nname: gpt\nsize: 32GiB\nbw: 12 GB/s\nrate: 70 TFLOP/s\ncount: 175B\n"
      "kind: b\nlist: [1, 2.5, 3]\n");
  EXPECT_EQ(r.Int("n", 1, 100), 12);
  EXPECT_EQ(r.Number("x", 0, 1), 0.5);
  EXPECT_TRUE(r.Bool("flag"));
  EXPECT_EQ(r.String("name"), "gpt");
  EXPECT_EQ(r.Bytes("size", 0, 1e18), 32.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(r.Bandwidth("bw", 0, 1e14), 12e9);
  EXPECT_EQ(r.Flops("rate", 0, 1e17), 70e12);
  EXPECT_EQ(r.Count("count", 0, 1e15), 175e9);
  EXPECT_EQ(r.Enum("kind", {"a", "b"}), "b");
  EXPECT_EQ(r.NumberList("list", 0, 10), (std::vector<double>{1, 2.5, 3}));
  EXPECT_TRUE(r.Has("n"));
  EXPECT_FALSE(r.Has("nope"));
  EXPECT_EQ(FinishMessage(r), "");
}

TEST(FieldReader, UnitFieldsAcceptPlainNumbers) {
  FieldReader r = Reader("size: 4096\nbw: 1.6e9\n");
  EXPECT_EQ(r.Bytes("size", 0, 1e18), 4096);
  EXPECT_EQ(r.Bandwidth("bw", 0, 1e14), 1.6e9);
  EXPECT_EQ(FinishMessage(r), "");
}

TEST(FieldReader, DefaultsForMissingAndNull) {
  FieldReader r = Reader("present: 3\nempty:\n");
  EXPECT_EQ(r.Int("absent", 0, 10, 7), 7);
  EXPECT_EQ(r.Int("empty", 0, 10, 5), 5);  // null counts as missing
  EXPECT_EQ(r.String("s", std::string("dflt")), "dflt");
  EXPECT_FALSE(r.Bool("b", false));
  EXPECT_EQ(r.Enum("e", {"x", "y"}, std::string("y")), "y");
  EXPECT_EQ(r.Bytes("m", 0, 1e18, 1024.0), 1024);
  EXPECT_EQ(r.Int("present", 0, 10), 3);
  EXPECT_EQ(FinishMessage(r), "");
}

TEST(FieldReader, DefaultsForEveryTypedReader) {
  FieldReader r = Reader("other: 1\n");
  r.Int("other", 0, 2);
  EXPECT_EQ(r.Number("n", 0, 10, 2.5), 2.5);
  EXPECT_EQ(r.Int("i", -5, 5, int64_t{-3}), -3);
  EXPECT_TRUE(r.Bool("b", true));
  EXPECT_EQ(r.Bandwidth("bw", 0, 1e14, 3e9), 3e9);
  EXPECT_EQ(r.Flops("f", 0, 1e17, 7e13), 7e13);
  EXPECT_EQ(r.Count("c", 0, 1e15, 1e6), 1e6);
  EXPECT_EQ(FinishMessage(r), "");
}

TEST(FieldReader, ReadingNeverChangesTheDocument) {
  YAML::Node doc = YAML::Load("v: 3\nlist: 4\nm: {a: 1}\n");
  FieldReader r(doc, kFile);
  r.Map("v");       // not a mapping: an error, and the value stays
  r.MapList("list");
  r.Int("missing", 0, 1, 0);
  FieldReader m = r.Map("m");
  m.Int("a", 0, 2);
  EXPECT_FALSE(r.Finish().ok());
  EXPECT_EQ(doc["v"].as<int>(), 3);
  EXPECT_EQ(doc["list"].as<int>(), 4);
  EXPECT_EQ(doc["m"]["a"].as<int>(), 1);
  EXPECT_EQ(doc.size(), 3u);
  EXPECT_FALSE(doc["missing"].IsDefined());
}

TEST(FieldReader, MissingRequiredKey) {
  FieldReader r = Reader("a: 1\n");
  r.Int("a", 0, 10);
  r.Int("hidden", 1, 100);
  EXPECT_TRUE(r.failed());
  ExpectContains(FinishMessage(r), {kFile, "key 'hidden'", "missing (required)"});
}

TEST(FieldReader, UnknownKeyNamesFileKeyPathAndAllowedKeys) {
  FieldReader r = Reader("alpha: 1\nbeta: 2\nbogus: 3\n");
  r.Int("alpha", 0, 10);
  r.Int("beta", 0, 10);
  EXPECT_FALSE(r.failed());  // unknown keys are found by Finish()
  ExpectContains(FinishMessage(r), {kFile, "unknown key 'bogus'", "allowed here: alpha, beta"});
}

TEST(FieldReader, UnknownKeyInNestedMapHasDottedPath) {
  FieldReader r = Reader("node:\n  gpus: 8\n  cpus: 4\n  typo: 1\n");
  FieldReader n = r.Map("node");
  n.Int("gpus", 1, 64);
  n.Int("cpus", 1, 64);
  ExpectContains(FinishMessage(r), {kFile, "unknown key 'node.typo'", "allowed here: cpus, gpus"});
}

TEST(FieldReader, UnknownKeyInListItem) {
  FieldReader r = Reader("points:\n  - {x: 1, y: 2}\n  - {x: 3, y: 4, z: 5}\n");
  for (FieldReader& p : r.MapList("points")) {
    p.Number("x", 0, 10);
    p.Number("y", 0, 10);
  }
  ExpectContains(FinishMessage(r), {"unknown key 'points[1].z'", "allowed here: x, y"});
}

TEST(FieldReader, LenientAcceptsUnknownKeys) {
  FieldReader r = Reader("a: 1\nextra: 2\nnested: {z: 1}\n", /*lenient=*/true);
  r.Int("a", 0, 10);
  EXPECT_EQ(FinishMessage(r), "");
}

TEST(FieldReader, IgnoreMarksKeyKnown) {
  FieldReader r = Reader("a: 1\nfree_form: {anything: [1, 2]}\n");
  r.Int("a", 0, 10);
  r.Ignore("free_form");
  EXPECT_EQ(FinishMessage(r), "");
}

TEST(FieldReader, CopiesShareUsedKeys) {
  FieldReader r = Reader("a: 1\nb: 2\n");
  FieldReader copy = r;
  copy.Int("a", 0, 10);
  r.Int("b", 0, 10);
  EXPECT_EQ(FinishMessage(r), "");
}

TEST(FieldReader, WrongTypes) {
  struct Case {
    std::string yaml;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"v: abc\n", "'abc' is not a number"},
      {"v: {a: 1}\n", "must be a number"},
      {"v: [1, 2]\n", "must be a number"},
  };
  for (const auto& c : cases) {
    FieldReader r = Reader(c.yaml);
    r.Number("v", 0, 10);
    ExpectContains(FinishMessage(r), {kFile, "key 'v'", c.expect});
  }
  {
    FieldReader r = Reader("v: 1.5\n");
    r.Int("v", 0, 10);
    ExpectContains(FinishMessage(r), {"key 'v'", "'1.5' is not an integer"});
  }
  {
    FieldReader r = Reader("v: twelve\n");
    r.Int("v", 0, 10);
    ExpectContains(FinishMessage(r), {"key 'v'", "'twelve' is not an integer", "allowed: 0 .. 10"});
  }
  {
    FieldReader r = Reader("v: maybe\n");
    r.Bool("v");
    ExpectContains(FinishMessage(r), {"key 'v'", "must be true or false"});
  }
  {
    FieldReader r = Reader("v: [a]\n");
    r.String("v");
    ExpectContains(FinishMessage(r), {"key 'v'", "must be a string"});
  }
  {
    FieldReader r = Reader("v: {a: 1}\n");
    r.Bytes("v", 0, 1e18);
    ExpectContains(FinishMessage(r), {"key 'v'", "must be a size"});
  }
  {
    FieldReader r = Reader("v: 12 parsecs\n");
    r.Bytes("v", 0, 1e18);
    ExpectContains(FinishMessage(r), {kFile, "key 'v'", "unknown size unit 'parsecs'", "GiB"});
  }
  {
    FieldReader r = Reader("v: 12 GB\n");
    r.Bandwidth("v", 0, 1e18);
    ExpectContains(FinishMessage(r), {"key 'v'", "unknown bandwidth unit 'GB'", "GB/s"});
  }
  {
    FieldReader r = Reader("v: -4GiB\n");
    r.Bytes("v", 0, 1e18);
    ExpectContains(FinishMessage(r), {"key 'v'", "negative"});
  }
  {
    FieldReader r = Reader("v: 3\n");
    r.Map("v");
    ExpectContains(FinishMessage(r), {"key 'v'", "must be a mapping"});
  }
  {
    FieldReader r = Reader("v: {a: 1}\n");
    r.MapList("v");
    ExpectContains(FinishMessage(r), {"key 'v'", "must be a list"});
  }
  {
    FieldReader r = Reader("v: [3]\n");
    r.MapList("v");
    ExpectContains(FinishMessage(r), {"key 'v[0]'", "must be a mapping"});
  }
  {
    FieldReader r = Reader("v: [1, x]\n");
    r.NumberList("v", 0, 10);
    ExpectContains(FinishMessage(r), {"key 'v[1]'", "must be a number"});
  }
  {
    FieldReader r = Reader("v: 5\n");
    r.NumberList("v", 0, 10);
    ExpectContains(FinishMessage(r), {"key 'v'", "must be a list of numbers"});
  }
}

TEST(FieldReader, OutOfRange) {
  {
    FieldReader r = Reader("micro_batch: -1\n");
    r.Int("micro_batch", 1, 1024);
    ExpectContains(FinishMessage(r), {kFile, "key 'micro_batch'", "value -1 is out of range", "allowed: 1 .. 1024"});
  }
  {
    FieldReader r = Reader("x: 2.5\n");
    r.Number("x", 0, 1);
    ExpectContains(FinishMessage(r), {"key 'x'", "out of range", "allowed: 0 .. 1"});
  }
  {
    FieldReader r = Reader("x: .nan\n");
    r.Number("x", 0, 1);
    ExpectContains(FinishMessage(r), {"key 'x'", "must be a finite number"});
  }
  {
    FieldReader r = Reader("x: .inf\n");
    r.Number("x", 0, 1e300);
    ExpectContains(FinishMessage(r), {"key 'x'", "must be a finite number"});
  }
  {
    FieldReader r = Reader("size: 2GiB\n");
    r.Bytes("size", 0, 1e9);
    ExpectContains(FinishMessage(r), {"key 'size'", "out of range"});
  }
  {
    FieldReader r = Reader("l: [1, 20]\n");
    r.NumberList("l", 0, 10);
    ExpectContains(FinishMessage(r), {"key 'l[1]'", "out of range"});
  }
}

TEST(FieldReader, EnumListsAllowedValues) {
  FieldReader r = Reader("tier: gpu\n");
  std::string v = r.Enum("tier", {"device", "host", "nvme"}, std::string("device"));
  EXPECT_EQ(v, "device");  // a bad value gives the default
  ExpectContains(FinishMessage(r), {kFile, "key 'tier'", "'gpu' is not allowed", "allowed: device, host, nvme"});
}

TEST(FieldReader, EnumAlwaysReturnsAnAllowedValueAfterAnEarlierError) {
  // Callers convert the result (ParseTier) and must never see a value outside `allowed`.
  FieldReader r = Reader("n: -5\ntier: gpu\n");
  r.Int("n", 0, 10);
  ASSERT_TRUE(r.failed());
  EXPECT_EQ(r.Enum("tier", {"device", "host"}, std::string("host")), "host");
  EXPECT_EQ(r.Enum("tier", {"device", "host"}), "device");
  ExpectContains(FinishMessage(r), {"key 'n'"});  // the first error sticks
}

TEST(FieldReader, MissingEnumWithoutDefault) {
  FieldReader r = Reader("a: 1\n");
  r.Int("a", 0, 2);
  EXPECT_EQ(r.Enum("format", {"zinf.x/v1"}), "zinf.x/v1");
  ExpectContains(FinishMessage(r), {"key 'format'", "missing (required)"});
}

TEST(FieldReader, FirstErrorSticks) {
  FieldReader r = Reader("a: x\nb: y\n");
  r.Int("a", 0, 10);
  r.Int("b", 0, 10);
  r.Int("c", 0, 10);
  std::string m = FinishMessage(r);
  ExpectContains(m, {"key 'a'"});
  EXPECT_EQ(m.find("key 'b'"), std::string::npos) << m;
}

TEST(FieldReader, NestedErrorsHaveKeyPaths) {
  FieldReader r = Reader("outer:\n  inner:\n    depth: 100\n");
  FieldReader o = r.Map("outer");
  FieldReader i = o.Map("inner");
  i.Int("depth", 0, 64);
  EXPECT_EQ(i.KeyPath("depth"), "outer.inner.depth");
  ExpectContains(FinishMessage(r), {kFile, "key 'outer.inner.depth'", "out of range"});
}

TEST(FieldReader, ErrorsInListItemsHaveIndexedPaths) {
  FieldReader r = Reader("memory:\n  - {tier: device, bytes: 1}\n  - {tier: disk, bytes: 2}\n");
  std::vector<FieldReader> items = r.MapList("memory");
  ASSERT_EQ(items.size(), 2u);
  for (FieldReader& it : items) {
    it.Enum("tier", {"device", "host", "nvme"});
    it.Bytes("bytes", 0, 1e18);
  }
  ExpectContains(FinishMessage(r), {"key 'memory[1].tier'", "'disk' is not allowed"});
}

TEST(FieldReader, MissingMap) {
  {
    FieldReader r = Reader("a: 1\n");
    r.Int("a", 0, 10);
    FieldReader m = r.Map("opt", /*allow_missing=*/true);
    EXPECT_EQ(m.Int("depth", 0, 10, 3), 3);
    EXPECT_EQ(FinishMessage(r), "");
  }
  {
    FieldReader r = Reader("a: 1\n");
    r.Int("a", 0, 10);
    FieldReader m = r.Map("node");
    m.Int("gpus", 1, 10);  // no further error: the first one sticks
    ExpectContains(FinishMessage(r), {"key 'node'", "missing (required)"});
  }
  {
    FieldReader r = Reader("a: 1\n");
    r.Int("a", 0, 10);
    EXPECT_TRUE(r.MapList("items", /*allow_missing=*/true).empty());
    EXPECT_TRUE(r.NumberList("nums", 0, 1, /*allow_missing=*/true).empty());
    EXPECT_EQ(FinishMessage(r), "");
  }
}

TEST(FieldReader, FailRecordsCustomError) {
  FieldReader r = Reader("node:\n  block_size: 1000\n");
  FieldReader n = r.Map("node");
  n.Int("block_size", 1, 1 << 30);
  n.Fail("block_size", "must be a multiple of 4096");
  ExpectContains(FinishMessage(r), {kFile, "key 'node.block_size'", "must be a multiple of 4096"});
}

TEST(FieldReader, NonScalarKeyIsReportedNotThrown) {
  FieldReader r = Reader("a: 1\n? [x, y]\n: 2\n");
  r.Int("a", 0, 10);
  std::string m;
  EXPECT_NO_THROW(m = FinishMessage(r));
  ExpectContains(m, {"unknown key"});
}

TEST(FieldReader, NonMapNodeReadsAsEmpty) {
  FieldReader r(YAML::Load("[1, 2]"), kFile);
  EXPECT_EQ(r.Int("a", 0, 10, 4), 4);
  EXPECT_FALSE(r.Has("a"));
  EXPECT_EQ(FinishMessage(r), "");
}

}  // namespace
}  // namespace zinf
