#include "executor/model/gpt_config.h"

#include <fmt/format.h>

namespace zinf {

Status GptConfig::Validate() const {
  auto bad = [](const char* key, int v, const char* rule) {
    return InvalidArgument(fmt::format("GptConfig: {} = {}: {}", key, v, rule));
  };
  if (vocab <= 0) return bad("vocab", vocab, "must be > 0");
  if (seq_len <= 0) return bad("seq_len", seq_len, "must be > 0");
  if (n_layer <= 0) return bad("n_layer", n_layer, "must be > 0");
  if (n_embd <= 0) return bad("n_embd", n_embd, "must be > 0");
  if (n_head <= 0 || n_embd % n_head != 0) return bad("n_head", n_head, "must divide n_embd");
  if (tile <= 0 || n_embd % tile != 0) return bad("tile", tile, "must be >= 1 and divide n_embd");
  if (!(ln_eps > 0.0f)) return InvalidArgument("GptConfig: ln_eps must be > 0");
  return Status::Ok();
}

int64_t GptConfig::NumParams() const {
  const int64_t C = n_embd;
  const int64_t per_layer = 2 * C + (3 * C * C + 3 * C) + (C * C + C) + 2 * C +
                            (4 * C * C + 4 * C) + (4 * C * C + C);
  return int64_t{vocab} * C + int64_t{seq_len} * C + n_layer * per_layer + 2 * C;
}

}  // namespace zinf
