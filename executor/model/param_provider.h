// ParamProvider: how the model gets parameters and hands back gradients. The
// model owns no parameters; a ZeRO-3 coordinator implements this interface
// (fetch shards, allgather, release, reduce-scatter), ResidentParamProvider
// keeps everything in one device buffer (tests, single-device reference).
//
// Protocol (all calls on the compute thread, in the order Gpt::StepSchedule()
// lists; op i is announced by OnOpBegin(i) right before its Acquire):
//   Acquire(g)     -> device pointer to group g's full flat params (numel floats);
//                     blocks until they are available. Valid until Release(g).
//   Release(g)     -> the model is done with them for this op.
//   AcquireGrad(g) -> device buffer of numel floats that the model ADDS (+=) into.
//                     A ZeRO-3 provider returns a zeroed buffer; ReleaseGrad(g) then
//                     means "this contribution is complete": reduce-scatter it and
//                     add it to the rank's gradient shard. A group can be acquired for
//                     gradients more than once per step (the tied embedding: LM head,
//                     then token embedding); contributions must be summed.
// Every Acquire/AcquireGrad is paired with a Release/ReleaseGrad before the next
// op of the same group.
#pragma once

#include <memory>
#include <vector>

#include "core/status.h"
#include "executor/backend/backend.h"
#include "executor/model/gpt_schedule.h"
#include "executor/model/param_groups.h"

namespace zinf {

class ParamProvider {
 public:
  virtual ~ParamProvider() = default;
  virtual void OnOpBegin(int op_index) {}
  virtual Result<const float*> Acquire(int group) = 0;
  virtual Status Release(int group) = 0;
  virtual Result<float*> AcquireGrad(int group) = 0;
  virtual Status ReleaseGrad(int group) = 0;
  // Kernels that use no parameter group (attention, GELU, cross-entropy) run between ops. A
  // provider that traces the step may time them: OnKernelBegin() comes right before such a
  // kernel is issued, OnKernelEnd(kind, layer, phase) right after it (layer -1: not a
  // block's). On the CPU backend kernels run on the calling thread, so this is their time.
  virtual void OnKernelBegin() {}
  virtual void OnKernelEnd(const char* kind, int layer, Phase phase) {}
};

// All params and grads resident in two flat device buffers; group g starts at
// offset(g) (aligned to 64 floats). Grads accumulate until ZeroGrads().
class ResidentParamProvider final : public ParamProvider {
 public:
  static Result<std::unique_ptr<ResidentParamProvider>> Create(Backend* backend,
                                                               std::vector<ParamGroup> groups);

  Result<const float*> Acquire(int group) override;
  Status Release(int group) override;
  Result<float*> AcquireGrad(int group) override;
  Status ReleaseGrad(int group) override;

  // Deterministic init (InitParamGroup for every group), uploaded to the device.
  Status Init(uint64_t seed);
  Status ZeroGrads();
  // Host copies of the flat buffers (numel() floats, groups at offset(g)).
  Status DownloadParams(std::vector<float>* out) const;
  Status DownloadGrads(std::vector<float>* out) const;
  Status UploadParams(const std::vector<float>& in);

  float* params() const { return params_.as<float>(); }
  float* grads() const { return grads_.as<float>(); }
  size_t numel() const { return numel_; }
  size_t offset(int group) const { return offsets_[group]; }
  const std::vector<ParamGroup>& groups() const { return groups_; }
  // True when every Acquire / AcquireGrad has been released.
  bool AllReleased() const;

 private:
  ResidentParamProvider(Backend* be, std::vector<ParamGroup> groups);
  Status CheckGroup(int group, const char* what) const;

  Backend* be_;
  std::vector<ParamGroup> groups_;
  std::vector<size_t> offsets_;
  size_t numel_ = 0;
  DeviceBuffer params_, grads_;
  std::vector<int> held_, held_grad_;
};

}  // namespace zinf
