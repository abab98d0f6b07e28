// ActivationStore: where the checkpointed block inputs live between the
// forward pass and the backward recompute.
//   DeviceActivationStore: in the backend arena (device memory).
//   HostActivationStore: offloaded to host memory (counted separately).
// Copies are issued on the backend's compute stream, so they are ordered with
// the kernels that produce / consume the checkpoint. Buffers are allocated on
// the first Save of a layer and reused afterwards (no allocation in the step
// loop once shapes are stable).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "executor/backend/backend.h"

namespace zinf {

class ActivationStore {
 public:
  virtual ~ActivationStore() = default;
  virtual std::string_view name() const = 0;
  // Saves `bytes` of device memory as checkpoint `layer` (replacing an older one).
  virtual Status Save(int layer, const float* src_dev, size_t bytes) = 0;
  // Copies checkpoint `layer` into device memory dst_dev (its saved size).
  virtual Status Load(int layer, float* dst_dev) = 0;
  virtual size_t device_bytes() const = 0;
  virtual size_t host_bytes() const = 0;
};

class DeviceActivationStore final : public ActivationStore {
 public:
  explicit DeviceActivationStore(Backend* backend) : be_(backend) {}
  std::string_view name() const override { return "device"; }
  Status Save(int layer, const float* src_dev, size_t bytes) override;
  Status Load(int layer, float* dst_dev) override;
  size_t device_bytes() const override;
  size_t host_bytes() const override { return 0; }

 private:
  Backend* be_;
  std::map<int, DeviceBuffer> slots_;
};

class HostActivationStore final : public ActivationStore {
 public:
  explicit HostActivationStore(Backend* backend) : be_(backend) {}
  std::string_view name() const override { return "host"; }
  Status Save(int layer, const float* src_dev, size_t bytes) override;
  Status Load(int layer, float* dst_dev) override;
  size_t device_bytes() const override { return 0; }
  size_t host_bytes() const override;

 private:
  Backend* be_;
  std::map<int, std::vector<char>> slots_;
};

}  // namespace zinf
