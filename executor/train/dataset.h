// Training data: byte-level text (any file: one token per byte, vocab >= 256) or uint16 token
// .bin files (nanoGPT convention: little-endian uint16, no header). Batches are a pure
// function of (step, micro-step, sequence index), so any rank count sees the same global batch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace zinf {

class TokenDataset {
 public:
  // Errors name the file: missing, empty, too short for seq_len + 1 tokens, token >= vocab.
  static Result<TokenDataset> Open(const std::string& path, int64_t vocab, int64_t seq_len);

  int64_t num_tokens() const { return static_cast<int64_t>(tokens_.size()); }
  const std::string& path() const { return path_; }
  bool is_bin() const { return bin_; }

  // Fills `count` sequences of the global batch starting at global sequence index `first`
  // (rank r of R takes first = r * count): tokens[i*seq + j] and targets (shifted by one).
  // Sequence n of a step starts at a position drawn from a fixed-seed hash of
  // (step, micro, n), so the batch is independent of how it is split over ranks.
  void Batch(int64_t step, int64_t micro, int64_t first, int64_t count, int32_t* tokens, int32_t* targets) const;

 private:
  std::string path_;
  bool bin_ = false;
  int64_t seq_len_ = 0;
  std::vector<uint16_t> tokens_;
};

}  // namespace zinf
