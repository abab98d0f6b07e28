// The deterministic order in which the GPT touches its parameter groups, so a
// ZeRO-3 coordinator can prefetch (op i is announced with OnOpBegin(i)).
//
// Forward:   embed, per layer [ln1, qkv tiles, attn.proj tiles, ln2, fc tiles,
//            mlp.proj tiles], ln_f, embed (tied LM head).
// Backward:  embed (LM head, grad), ln_f (grad), then for each checkpoint
//            segment from the last: the recompute of its layers (forward order,
//            params only; the last segment is not recomputed, its activations are
//            still live), then its layers in reverse, each in backward order
//            [mlp.proj tiles, fc tiles, ln2, attn.proj tiles, qkv tiles, ln1]
//            (params + grads), finally embed (token/position embedding, grad).
#pragma once

#include <vector>

#include "executor/model/param_groups.h"

namespace zinf {

enum class Phase { kForward, kRecompute, kBackward };
const char* PhaseName(Phase p);

struct GroupOp {
  Phase phase = Phase::kForward;
  int group = -1;
  int layer = -1;     // -1: embed / ln_f
  bool grad = false;  // AcquireGrad / ReleaseGrad too
};

// seg_len: layers per checkpoint segment (== n_layer: no checkpointing).
std::vector<GroupOp> BuildGptSchedule(const GptGroupIds& ids, int seg_len, bool backward);

// Group ids of the ops of one phase, in order.
std::vector<int> GroupsOfPhase(const std::vector<GroupOp>& ops, Phase phase);

}  // namespace zinf
