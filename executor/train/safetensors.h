// Consolidated weights as safetensors (https://huggingface.co/docs/safetensors): an 8-byte
// little-endian header length, a JSON header {name: {dtype, shape, data_offsets}} padded
// with spaces to a multiple of 8, then the tensors' bytes back to back. zinf writes F32
// tensors under the GPT's logical names ("wte", "h0.attn.qkv.weight", ...): tiled groups
// are stitched back into whole tensors, so the file is the same for any tiling or rank
// count.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "executor/model/param_groups.h"

namespace zinf {

struct SafeTensor {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> data;
};

// The logical tensors of `groups` given each group's full (unpadded) parameters.
std::vector<SafeTensor> LogicalTensors(const std::vector<ParamGroup>& groups,
                                       const std::vector<std::vector<float>>& group_params);

// Written atomically (temporary name, fsync, rename).
Status WriteSafetensors(const std::string& path, const std::vector<SafeTensor>& tensors,
                        const std::map<std::string, std::string>& metadata);
// F32 tensors only (what zinf writes); errors name the file.
Result<std::vector<SafeTensor>> ReadSafetensors(const std::string& path);

}  // namespace zinf
