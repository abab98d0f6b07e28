#include "core/status.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>

namespace zinf {
namespace {

TEST(Status, OkAndToString) {
  Status ok;
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.ToString(), "OK");
  Status bad = InvalidArgument("models/x.yaml: key 'hidden': must be > 0");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.code(), Code::kInvalidArgument);
  EXPECT_EQ(bad.ToString(), "InvalidArgument: models/x.yaml: key 'hidden': must be > 0");
}

TEST(Status, WithContextKeepsCode) {
  Status s = NotFound("x.yaml: cannot open file").WithContext("while reading plan");
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_EQ(s.message(), "while reading plan: x.yaml: cannot open file");
  EXPECT_TRUE(Status::Ok().WithContext("ignored").ok());
}

TEST(Status, ErrnoMapping) {
  EXPECT_EQ(ErrnoStatus(ENOSPC, "w", "f.cc", 1).code(), Code::kNoSpace);
  EXPECT_EQ(ErrnoStatus(ENOENT, "w", "f.cc", 1).code(), Code::kNotFound);
  EXPECT_EQ(ErrnoStatus(ENOMEM, "w", "f.cc", 1).code(), Code::kOutOfMemory);
  EXPECT_EQ(ErrnoStatus(EINVAL, "w", "f.cc", 1).code(), Code::kInvalidArgument);
  Status io = ErrnoStatus(EIO, "pread", "store.cc", 42);
  EXPECT_EQ(io.code(), Code::kIo);
  EXPECT_NE(io.message().find("pread"), std::string::npos);
  EXPECT_NE(io.message().find("store.cc:42"), std::string::npos);
}

Result<int> Half(int v) {
  if (v % 2) return InvalidArgument("odd");
  return v / 2;
}

Status UseHalf(int v, int* out) {
  ZINF_ASSIGN_OR_RETURN(*out, Half(v));
  return Status::Ok();
}

TEST(Result, ValueAndStatus) {
  Result<int> r = Half(8);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 4);
  EXPECT_TRUE(r.status().ok());
  Result<int> e = Half(3);
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.status().message(), "odd");
  int out = 0;
  EXPECT_TRUE(UseHalf(10, &out).ok());
  EXPECT_EQ(out, 5);
  EXPECT_EQ(UseHalf(7, &out).code(), Code::kInvalidArgument);
}

TEST(Status, CodeNames) {
  EXPECT_STREQ(CodeName(Code::kOk), "OK");
  EXPECT_STREQ(CodeName(Code::kIo), "IoError");
  EXPECT_STREQ(CodeName(Code::kInfeasible), "Infeasible");
}

}  // namespace
}  // namespace zinf
