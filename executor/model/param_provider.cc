#include "executor/model/param_provider.h"

#include <fmt/format.h>

namespace zinf {

namespace {
constexpr size_t kGroupAlignFloats = 64;
}  // namespace

ResidentParamProvider::ResidentParamProvider(Backend* be, std::vector<ParamGroup> groups)
    : be_(be), groups_(std::move(groups)) {
  for (const ParamGroup& g : groups_) {
    offsets_.push_back(numel_);
    numel_ += (g.numel + kGroupAlignFloats - 1) / kGroupAlignFloats * kGroupAlignFloats;
  }
  held_.assign(groups_.size(), 0);
  held_grad_.assign(groups_.size(), 0);
}

Result<std::unique_ptr<ResidentParamProvider>> ResidentParamProvider::Create(
    Backend* backend, std::vector<ParamGroup> groups) {
  std::unique_ptr<ResidentParamProvider> p(new ResidentParamProvider(backend, std::move(groups)));
  const size_t bytes = p->numel_ * sizeof(float);
  ZINF_ASSIGN_OR_RETURN(p->params_, backend->AllocBuffer(bytes));
  ZINF_ASSIGN_OR_RETURN(p->grads_, backend->AllocBuffer(bytes));
  ZINF_RETURN_IF_ERROR(backend->Memset(p->params(), 0, bytes));
  ZINF_RETURN_IF_ERROR(p->ZeroGrads());
  return p;
}

Status ResidentParamProvider::CheckGroup(int group, const char* what) const {
  if (group < 0 || group >= static_cast<int>(groups_.size())) {
    return InvalidArgument(fmt::format("ResidentParamProvider::{}: group {} out of range [0, {})",
                                       what, group, groups_.size()));
  }
  return Status::Ok();
}

Result<const float*> ResidentParamProvider::Acquire(int group) {
  ZINF_RETURN_IF_ERROR(CheckGroup(group, "Acquire"));
  ++held_[group];
  return static_cast<const float*>(params() + offsets_[group]);
}

Status ResidentParamProvider::Release(int group) {
  ZINF_RETURN_IF_ERROR(CheckGroup(group, "Release"));
  if (held_[group] <= 0) {
    return Internal(fmt::format("Release of group {} ({}) that is not acquired", group,
                                groups_[group].name));
  }
  --held_[group];
  return Status::Ok();
}

Result<float*> ResidentParamProvider::AcquireGrad(int group) {
  ZINF_RETURN_IF_ERROR(CheckGroup(group, "AcquireGrad"));
  ++held_grad_[group];
  return grads() + offsets_[group];
}

Status ResidentParamProvider::ReleaseGrad(int group) {
  ZINF_RETURN_IF_ERROR(CheckGroup(group, "ReleaseGrad"));
  if (held_grad_[group] <= 0) {
    return Internal(fmt::format("ReleaseGrad of group {} ({}) that is not acquired", group,
                                groups_[group].name));
  }
  --held_grad_[group];
  return Status::Ok();
}

bool ResidentParamProvider::AllReleased() const {
  for (size_t g = 0; g < groups_.size(); ++g) {
    if (held_[g] != 0 || held_grad_[g] != 0) return false;
  }
  return true;
}

Status ResidentParamProvider::Init(uint64_t seed) {
  std::vector<float> host(numel_, 0.0f);
  for (size_t g = 0; g < groups_.size(); ++g) {
    InitParamGroup(groups_[g], seed, host.data() + offsets_[g]);
  }
  return UploadParams(host);
}

Status ResidentParamProvider::ZeroGrads() {
  return be_->Memset(grads(), 0, numel_ * sizeof(float));
}

Status ResidentParamProvider::DownloadParams(std::vector<float>* out) const {
  out->resize(numel_);
  ZINF_RETURN_IF_ERROR(be_->CopyD2H(out->data(), params(), numel_ * sizeof(float)));
  be_->Synchronize(be_->ComputeStream());
  return Status::Ok();
}

Status ResidentParamProvider::DownloadGrads(std::vector<float>* out) const {
  out->resize(numel_);
  ZINF_RETURN_IF_ERROR(be_->CopyD2H(out->data(), grads(), numel_ * sizeof(float)));
  be_->Synchronize(be_->ComputeStream());
  return Status::Ok();
}

Status ResidentParamProvider::UploadParams(const std::vector<float>& in) {
  if (in.size() != numel_) {
    return InvalidArgument(fmt::format("UploadParams: {} floats given, {} expected", in.size(),
                                       numel_));
  }
  ZINF_RETURN_IF_ERROR(be_->CopyH2D(params(), in.data(), numel_ * sizeof(float)));
  be_->Synchronize(be_->ComputeStream());
  return Status::Ok();
}

}  // namespace zinf
