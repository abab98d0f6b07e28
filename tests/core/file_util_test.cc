#include "core/file_util.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/core/test_util.h"

namespace zinf {
namespace {

using testing::ReadText;
using testing::ScratchDir;

TEST(WriteFileAtomic, WritesAndLeavesNoTemporary) {
  ScratchDir dir;
  std::string p = dir.File("out.yaml");
  ASSERT_TRUE(WriteFileAtomic(p, "a: 1\n").ok());
  EXPECT_EQ(ReadText(p), "a: 1\n");
  EXPECT_EQ(dir.List(), std::vector<std::string>{"out.yaml"});
}

TEST(WriteFileAtomic, ReplacesExistingFile) {
  ScratchDir dir;
  std::string p = dir.Write("out.yaml", "old contents that are longer than the new ones\n");
  ASSERT_TRUE(WriteFileAtomic(p, "new\n").ok());
  EXPECT_EQ(ReadText(p), "new\n");
  EXPECT_EQ(dir.List(), std::vector<std::string>{"out.yaml"});
}

TEST(WriteFileAtomic, EmptyAndLargeContents) {
  ScratchDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir.File("empty"), "").ok());
  EXPECT_EQ(ReadText(dir.File("empty")), "");
  std::string big(3 << 20, 'x');
  for (size_t i = 0; i < big.size(); i += 4099) big[i] = static_cast<char>('a' + i % 26);
  ASSERT_TRUE(WriteFileAtomic(dir.File("big"), big).ok());
  EXPECT_EQ(ReadText(dir.File("big")), big);
}

TEST(WriteFileAtomic, MissingDirectoryFailsCleanly) {
  ScratchDir dir;
  std::string missing = dir.File("no/such/dir");
  std::string p = missing + "/plan.yaml";
  Status s = WriteFileAtomic(p, "a: 1\n");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kNotFound) << s.ToString();
  EXPECT_NE(s.message().find("plan.yaml"), std::string::npos) << s.message();
  EXPECT_FALSE(std::filesystem::exists(dir.File("no")));  // nothing was created
  EXPECT_TRUE(dir.List().empty());
}

TEST(WriteFileAtomic, RenameFailureRemovesTemporaryAndKeepsTarget) {
  // The target is a non-empty directory: the temporary is written, the rename fails.
  ScratchDir dir;
  std::string target = dir.File("target");
  std::filesystem::create_directories(target + "/child");
  Status s = WriteFileAtomic(target, "data\n");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("rename"), std::string::npos) << s.message();
  EXPECT_TRUE(std::filesystem::is_directory(target + "/child"));
  EXPECT_EQ(dir.List(), std::vector<std::string>{"target"});  // no target.tmp.<pid> left
}

TEST(WriteFileAtomic, RelativePathInCurrentDirectory) {
  ScratchDir dir;
  std::filesystem::path old = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  Status s = WriteFileAtomic("rel.txt", "r\n");
  std::filesystem::current_path(old);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(ReadText(dir.File("rel.txt")), "r\n");
}

TEST(ReadFile, ReadsAndReportsMissing) {
  ScratchDir dir;
  std::string p = dir.Write("in.txt", std::string("bin\0ary\n", 8));
  Result<std::string> r = ReadFile(p);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, std::string("bin\0ary\n", 8));
  Result<std::string> m = ReadFile(dir.File("missing"));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), Code::kNotFound);
  EXPECT_NE(m.status().message().find("missing"), std::string::npos);
}

TEST(MakeDirs, CreatesParentsAndIsIdempotent) {
  ScratchDir dir;
  std::string d = dir.File("a/b/c");
  ASSERT_TRUE(MakeDirs(d).ok());
  EXPECT_TRUE(std::filesystem::is_directory(d));
  EXPECT_TRUE(MakeDirs(d).ok());
  std::string file = dir.Write("plain", "x");
  Status s = MakeDirs(file + "/sub");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kIo);
}

}  // namespace
}  // namespace zinf
