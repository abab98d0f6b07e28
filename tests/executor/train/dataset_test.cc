#include "executor/train/dataset.h"

#include <gtest/gtest.h>

#include "tests/remove_at_exit.h"

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace zinf {
namespace {

std::string WriteTemp(const std::string& name, const std::string& data) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << data;
  testing::RemoveAtExit(path);
  return path;
}

TEST(Dataset, ByteLevelText) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += static_cast<char>(i);
  auto d = TokenDataset::Open(WriteTemp("bytes.txt", text), 256, 16);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->num_tokens(), 200);
  std::vector<int32_t> tok(2 * 16), tgt(2 * 16);
  d->Batch(0, 0, 0, 2, tok.data(), tgt.data());
  for (int i = 0; i < 32; ++i) {
    EXPECT_EQ(tgt[i], tok[i] + 1);  // the data is 0,1,2,...: targets are the next byte
    EXPECT_GE(tok[i], 0);
    EXPECT_LT(tok[i], 256);
  }
}

TEST(Dataset, SplitOverRanksEqualsWholeBatch) {
  std::string text(5000, 'a');
  for (size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>('a' + (i * 7919) % 26);
  auto d = TokenDataset::Open(WriteTemp("split.txt", text), 256, 32);
  ASSERT_TRUE(d.ok());
  std::vector<int32_t> whole(8 * 32), t(8 * 32), parts(8 * 32);
  d->Batch(3, 1, 0, 8, whole.data(), t.data());
  for (int r = 0; r < 4; ++r) d->Batch(3, 1, r * 2, 2, parts.data() + r * 2 * 32, t.data());
  EXPECT_EQ(whole, parts);
  std::vector<int32_t> other(8 * 32);
  d->Batch(4, 1, 0, 8, other.data(), t.data());
  EXPECT_NE(whole, other);  // another step draws other windows
}

TEST(Dataset, BinTokens) {
  std::vector<uint16_t> toks(100);
  for (int i = 0; i < 100; ++i) toks[i] = static_cast<uint16_t>(i * 3);
  std::string raw(reinterpret_cast<const char*>(toks.data()), toks.size() * 2);
  auto d = TokenDataset::Open(WriteTemp("t.bin", raw), 1000, 8);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_TRUE(d->is_bin());
  std::vector<int32_t> tok(8), tgt(8);
  d->Batch(0, 0, 0, 1, tok.data(), tgt.data());
  EXPECT_EQ(tgt[0], tok[0] + 3);
  // A token beyond the vocab is rejected with its position.
  auto small = TokenDataset::Open(WriteTemp("t2.bin", raw), 100, 8);
  ASSERT_FALSE(small.ok());
  EXPECT_NE(small.status().message().find("vocab"), std::string::npos);
  auto odd = TokenDataset::Open(WriteTemp("odd.bin", raw.substr(0, 7)), 1000, 2);
  EXPECT_FALSE(odd.ok());
}

TEST(Dataset, BadFiles) {
  auto missing = TokenDataset::Open("/nonexistent/zinf.txt", 256, 8);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/zinf.txt"), std::string::npos);
  auto empty = TokenDataset::Open(WriteTemp("empty.txt", ""), 256, 8);
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("empty"), std::string::npos);
  auto shrt = TokenDataset::Open(WriteTemp("short.txt", "abcd"), 256, 8);
  ASSERT_FALSE(shrt.ok());
  EXPECT_NE(shrt.status().message().find("too short"), std::string::npos);
  auto vocab = TokenDataset::Open(WriteTemp("v.txt", std::string(100, 'x')), 64, 8);
  EXPECT_FALSE(vocab.ok());
}

}  // namespace
}  // namespace zinf
