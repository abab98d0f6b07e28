// Gpt: a GPT-style decoder (token + position embeddings, pre-LN blocks with
// causal MHA (fused qkv linear + proj) and a GELU MLP of width 4C, final LN,
// LM head tied to wte, mean softmax cross-entropy), fp32, on a zinf::Backend.
//
// Parameters come from a ParamProvider, group by group, in the order of
// StepSchedule() (see gpt_schedule.h); the model owns only activations and
// workspace, allocated from the backend arena once per batch size (Prepare),
// never inside the step.
//
// Activation checkpointing: with ckpt_interval ci in [1, n_layer) the layers
// form segments of ci; the forward pass saves each segment's input (except the
// last segment's) to the ActivationStore and keeps activations for only one
// segment; backward reloads each checkpoint and recomputes its segment. Losses
// and gradients are bitwise identical to ci = 0 (no checkpointing) and for any
// store. ci <= 0 or ci >= n_layer: no checkpointing (store may be null).
//
// Memory-centric tiling (GptConfig::tile = t): each big linear is computed as t
// output-row tiles, each its own parameter group fetched one after another.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/status.h"
#include "executor/backend/backend.h"
#include "executor/model/activation_store.h"
#include "executor/model/gpt_config.h"
#include "executor/model/gpt_schedule.h"
#include "executor/model/param_groups.h"
#include "executor/model/param_provider.h"

namespace zinf {

class Gpt {
 public:
  static Result<std::unique_ptr<Gpt>> Create(const GptConfig& cfg, Backend* backend,
                                             ActivationStore* store, int ckpt_interval);
  ~Gpt();

  const GptConfig& config() const { return cfg_; }
  const std::vector<ParamGroup>& groups() const { return layout_.groups; }
  const GptGroupIds& group_ids() const { return layout_.ids; }
  size_t total_param_numel() const { return layout_.total_numel; }

  // Ops of one ForwardBackward / one Forward, in call order.
  const std::vector<GroupOp>& StepSchedule() const { return step_ops_; }
  const std::vector<GroupOp>& ForwardSchedule() const { return fwd_ops_; }
  std::vector<int> ForwardOrder() const { return GroupsOfPhase(step_ops_, Phase::kForward); }
  std::vector<int> RecomputeOrder() const { return GroupsOfPhase(step_ops_, Phase::kRecompute); }
  std::vector<int> BackwardOrder() const { return GroupsOfPhase(step_ops_, Phase::kBackward); }

  // tokens, targets: host int32 [batch, seq_len], values in [0, vocab).
  // Returns the mean loss; gradients are added into the provider's grad buffers.
  Result<float> ForwardBackward(ParamProvider& params, const int32_t* tokens,
                                const int32_t* targets, int batch);
  // Loss only (no checkpoints saved, no gradients).
  Result<float> Forward(ParamProvider& params, const int32_t* tokens, const int32_t* targets,
                        int batch);

  // Allocates activations / workspace for `batch` (no-op if already prepared).
  Status Prepare(int batch);
  size_t activation_bytes() const;  // arena bytes of activations (incl. logits)
  size_t workspace_bytes() const;   // arena bytes of gradient scratch, tokens, losses
  int segment_length() const { return seg_len_; }
  int num_segments() const { return (cfg_.n_layer + seg_len_ - 1) / seg_len_; }
  // Device logits [batch * seq_len, vocab] after Forward (ForwardBackward
  // overwrites them with dlogits).
  const float* logits() const;

 private:
  struct LayerActs;
  struct Buffers;

  Gpt(const GptConfig& cfg, Backend* be, ActivationStore* store, int seg_len,
      GptParamLayout layout);
  size_t LayoutActivations(float* base);
  size_t LayoutWorkspace(float* base);

  Result<float> Run(ParamProvider& params, const int32_t* tokens, const int32_t* targets,
                    int batch, bool backward);
  Status ForwardPass(bool training);
  Status BackwardPass();
  const float* FinalOutput() const;

  // gpt_block.cc
  Status BlockForward(int layer, const float* x, const LayerActs& a, Phase phase);
  Status BlockBackward(int layer, const float* x, const LayerActs& a);
  // y = x W^T + b (+ residual, same layout as y), one op per tile.
  Status LinearForward(const std::vector<int>& tiles, Phase phase, const float* x, int in,
                       int out, const float* residual, float* y);
  Status LinearBackward(const std::vector<int>& tiles, const float* dy, const float* x, int in,
                        int out, float* dx);
  Status LayerNormForward(int group, Phase phase, const float* x, float* y, float* mean,
                          float* rstd);
  Status LayerNormBackward(int group, const float* dy, const float* x, const float* mean,
                           const float* rstd, float* dx);

  // The op cursor: checks each group access against the schedule.
  Result<const float*> BeginOp(int group, Phase phase, bool grad);
  Result<float*> BeginGrad(int group);
  Status EndOp(int group, bool grad);
  // Runs a kernel that uses no parameter group, announced to the provider (for its trace).
  template <typename F>
  void Kernel(const char* kind, int layer, Phase phase, F&& run) {
    prov_->OnKernelBegin();
    run();
    prov_->OnKernelEnd(kind, layer, phase);
  }

  GptConfig cfg_;
  Backend* be_;
  ActivationStore* store_;
  int seg_len_;
  GptParamLayout layout_;
  std::vector<GroupOp> step_ops_, fwd_ops_;

  int batch_ = 0;
  DeviceBuffer act_buf_, ws_buf_;
  std::unique_ptr<Buffers> buf_;

  ParamProvider* prov_ = nullptr;
  const std::vector<GroupOp>* ops_ = nullptr;
  size_t cursor_ = 0;
};

}  // namespace zinf
