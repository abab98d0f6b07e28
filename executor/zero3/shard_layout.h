// ZeRO-3 partitioning: each parameter group's flat buffer is padded to R equal shards
// (each a multiple of 1024 floats, so a shard is a 4 KiB-aligned extent for O_DIRECT);
// rank r owns elements [r*shard, (r+1)*shard) of the padded buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace zinf {

inline constexpr size_t kShardAlignElems = 1024;  // 4 KiB of fp32

struct GroupShard {
  size_t numel = 0;   // real elements of the group
  size_t shard = 0;   // elements per rank (padded)
  size_t padded = 0;  // shard * ranks
  // Real elements inside rank r's shard (the tail of the last shards is padding).
  size_t RealIn(int rank) const {
    size_t begin = static_cast<size_t>(rank) * shard;
    return begin >= numel ? 0 : (numel - begin < shard ? numel - begin : shard);
  }
};

inline GroupShard MakeGroupShard(size_t numel, int ranks) {
  GroupShard g;
  g.numel = numel;
  size_t per = (numel + static_cast<size_t>(ranks) - 1) / static_cast<size_t>(ranks);
  g.shard = (per + kShardAlignElems - 1) / kShardAlignElems * kShardAlignElems;
  if (g.shard == 0) g.shard = kShardAlignElems;
  g.padded = g.shard * static_cast<size_t>(ranks);
  return g;
}

}  // namespace zinf
