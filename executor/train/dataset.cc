#include "executor/train/dataset.h"

#include <fmt/format.h>

#include <cstring>

#include "core/file_util.h"

namespace zinf {
namespace {

uint64_t Mix(uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

Result<TokenDataset> TokenDataset::Open(const std::string& path, int64_t vocab, int64_t seq_len) {
  ZINF_ASSIGN_OR_RETURN(std::string raw, ReadFile(path));
  TokenDataset d;
  d.path_ = path;
  d.seq_len_ = seq_len;
  d.bin_ = EndsWith(path, ".bin");
  if (raw.empty()) return InvalidArgument(fmt::format("{}: data file is empty", path));
  if (d.bin_) {
    if (raw.size() % 2 != 0)
      return InvalidArgument(fmt::format("{}: a .bin token file must hold uint16 tokens (even size), has {} bytes", path, raw.size()));
    d.tokens_.resize(raw.size() / 2);
    std::memcpy(d.tokens_.data(), raw.data(), raw.size());
    for (size_t i = 0; i < d.tokens_.size(); ++i) {
      if (d.tokens_[i] >= vocab)
        return InvalidArgument(fmt::format("{}: token {} at position {} is >= the model's vocab {}", path, d.tokens_[i], i, vocab));
    }
  } else {
    if (vocab < 256)
      return InvalidArgument(fmt::format("{}: byte-level text needs vocab >= 256, the model has {}", path, vocab));
    d.tokens_.resize(raw.size());
    for (size_t i = 0; i < raw.size(); ++i) d.tokens_[i] = static_cast<unsigned char>(raw[i]);
  }
  if (d.num_tokens() < seq_len + 1)
    return InvalidArgument(fmt::format("{}: {} tokens is too short for seq_len {} (needs at least {})", path,
                                       d.num_tokens(), seq_len, seq_len + 1));
  return d;
}

void TokenDataset::Batch(int64_t step, int64_t micro, int64_t first, int64_t count, int32_t* tokens, int32_t* targets) const {
  const uint64_t span = static_cast<uint64_t>(num_tokens() - seq_len_);  // valid starts: [0, span)
  for (int64_t i = 0; i < count; ++i) {
    const uint64_t n = static_cast<uint64_t>(first + i);
    const uint64_t h = Mix(Mix(Mix(static_cast<uint64_t>(step)) ^ static_cast<uint64_t>(micro)) ^ n);
    const uint64_t start = h % span;
    for (int64_t j = 0; j < seq_len_; ++j) {
      tokens[i * seq_len_ + j] = tokens_[start + static_cast<uint64_t>(j)];
      targets[i * seq_len_ + j] = tokens_[start + static_cast<uint64_t>(j) + 1];
    }
  }
}

}  // namespace zinf
