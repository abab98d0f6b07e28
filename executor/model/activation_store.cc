#include "executor/model/activation_store.h"

#include <fmt/format.h>

namespace zinf {

Status DeviceActivationStore::Save(int layer, const float* src_dev, size_t bytes) {
  DeviceBuffer& slot = slots_[layer];
  if (slot.bytes() != bytes) {
    slot.reset();
    ZINF_ASSIGN_OR_RETURN(slot, be_->AllocBuffer(bytes));
  }
  return be_->CopyD2D(slot.data(), src_dev, bytes);
}

Status DeviceActivationStore::Load(int layer, float* dst_dev) {
  auto it = slots_.find(layer);
  if (it == slots_.end()) {
    return NotFound(fmt::format("device activation store: no checkpoint for layer {}", layer));
  }
  return be_->CopyD2D(dst_dev, it->second.data(), it->second.bytes());
}

size_t DeviceActivationStore::device_bytes() const {
  size_t n = 0;
  for (const auto& [layer, buf] : slots_) n += buf.bytes();
  return n;
}

Status HostActivationStore::Save(int layer, const float* src_dev, size_t bytes) {
  std::vector<char>& slot = slots_[layer];
  slot.resize(bytes);
  return be_->CopyD2H(slot.data(), src_dev, bytes);
}

Status HostActivationStore::Load(int layer, float* dst_dev) {
  auto it = slots_.find(layer);
  if (it == slots_.end()) {
    return NotFound(fmt::format("host activation store: no checkpoint for layer {}", layer));
  }
  return be_->CopyH2D(dst_dev, it->second.data(), it->second.size());
}

size_t HostActivationStore::host_bytes() const {
  size_t n = 0;
  for (const auto& [layer, buf] : slots_) n += buf.size();
  return n;
}

}  // namespace zinf
