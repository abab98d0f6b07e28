#include "executor/train/safetensors.h"

#include <fmt/format.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "core/file_util.h"

namespace zinf {

std::vector<SafeTensor> LogicalTensors(const std::vector<ParamGroup>& groups,
                                       const std::vector<std::vector<float>>& group_params) {
  std::vector<SafeTensor> out;
  std::map<std::string, size_t> index;
  for (size_t g = 0; g < groups.size(); ++g) {
    for (const TensorSpec& t : groups[g].tensors) {
      auto it = index.find(t.name);
      if (it == index.end()) {
        SafeTensor s;
        s.name = t.name;
        s.shape = t.shape;
        if (!s.shape.empty()) s.shape[0] = t.logical_rows > 0 ? t.logical_rows : t.shape[0];
        size_t n = 1;
        for (int64_t d : s.shape) n *= static_cast<size_t>(d);
        s.data.assign(n, 0.0f);
        it = index.emplace(t.name, out.size()).first;
        out.push_back(std::move(s));
      }
      SafeTensor& s = out[it->second];
      const size_t at = static_cast<size_t>(t.row_begin) * t.row_elems();
      std::memcpy(s.data.data() + at, group_params[g].data() + t.offset, t.numel() * sizeof(float));
    }
  }
  return out;
}

Status WriteSafetensors(const std::string& path, const std::vector<SafeTensor>& tensors,
                        const std::map<std::string, std::string>& metadata) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t at = 0;
  for (const SafeTensor& t : tensors) {
    const uint64_t bytes = t.data.size() * sizeof(float);
    header[t.name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {at, at + bytes}}};
    at += bytes;
  }
  std::string h = header.dump();
  h.append((8 - h.size() % 8) % 8, ' ');
  const uint64_t hlen = h.size();
  unsigned char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(hlen >> (8 * i));
  return WriteFileAtomicWith(path, [&](int fd) -> Status {
    ZINF_RETURN_IF_ERROR(WriteAll(fd, len, 8, path));
    ZINF_RETURN_IF_ERROR(WriteAll(fd, h.data(), h.size(), path));
    for (const SafeTensor& t : tensors) ZINF_RETURN_IF_ERROR(WriteAll(fd, t.data.data(), t.data.size() * sizeof(float), path));
    return Status::Ok();
  });
}

Result<std::vector<SafeTensor>> ReadSafetensors(const std::string& path) {
  ZINF_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  if (bytes.size() < 8) return Corrupt(fmt::format("{}: not a safetensors file (shorter than its 8-byte header length)", path));
  uint64_t hlen = 0;
  for (int i = 0; i < 8; ++i) hlen |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[static_cast<size_t>(i)])) << (8 * i);
  if (hlen > bytes.size() - 8) return Corrupt(fmt::format("{}: header length {} exceeds the file", path, hlen));
  nlohmann::json header = nlohmann::json::parse(bytes.substr(8, hlen), nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object()) return Corrupt(fmt::format("{}: the header is not a JSON object", path));
  const size_t data0 = 8 + hlen;
  std::vector<SafeTensor> out;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    const nlohmann::json& v = it.value();
    if (!v.is_object() || v.value("dtype", "") != "F32" || !v.contains("shape") || !v.contains("data_offsets"))
      return Corrupt(fmt::format("{}: tensor '{}': expected dtype F32 with shape and data_offsets", path, it.key()));
    SafeTensor t;
    t.name = it.key();
    size_t n = 1;
    for (const auto& d : v["shape"]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0) return Corrupt(fmt::format("{}: tensor '{}': bad shape", path, t.name));
      t.shape.push_back(d.get<int64_t>());
      n *= static_cast<size_t>(d.get<int64_t>());
    }
    const auto& off = v["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
      return Corrupt(fmt::format("{}: tensor '{}': bad data_offsets", path, t.name));
    const uint64_t b = off[0].get<uint64_t>(), e = off[1].get<uint64_t>();
    if (e < b || e - b != n * sizeof(float) || e > bytes.size() - data0)
      return Corrupt(fmt::format("{}: tensor '{}': data_offsets [{}, {}) do not match its shape or the file", path, t.name, b, e));
    t.data.resize(n);
    std::memcpy(t.data.data(), bytes.data() + data0 + b, n * sizeof(float));
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace zinf
