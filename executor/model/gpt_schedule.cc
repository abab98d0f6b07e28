#include "executor/model/gpt_schedule.h"

#include <algorithm>

namespace zinf {

const char* PhaseName(Phase p) {
  switch (p) {
    case Phase::kForward: return "forward";
    case Phase::kRecompute: return "recompute";
    case Phase::kBackward: return "backward";
  }
  return "?";
}

namespace {

void Push(std::vector<GroupOp>* ops, Phase ph, int g, int layer, bool grad) {
  ops->push_back(GroupOp{ph, g, layer, grad});
}

void PushAll(std::vector<GroupOp>* ops, Phase ph, const std::vector<int>& gs, int layer,
             bool grad) {
  for (int g : gs) Push(ops, ph, g, layer, grad);
}

void LayerForward(std::vector<GroupOp>* ops, const GptGroupIds& ids, int l, Phase ph) {
  const GptGroupIds::Layer& ly = ids.layers[l];
  Push(ops, ph, ly.ln1, l, false);
  PushAll(ops, ph, ly.qkv, l, false);
  PushAll(ops, ph, ly.attn_proj, l, false);
  Push(ops, ph, ly.ln2, l, false);
  PushAll(ops, ph, ly.fc, l, false);
  PushAll(ops, ph, ly.mlp_proj, l, false);
}

void LayerBackward(std::vector<GroupOp>* ops, const GptGroupIds& ids, int l) {
  const GptGroupIds::Layer& ly = ids.layers[l];
  const Phase ph = Phase::kBackward;
  PushAll(ops, ph, ly.mlp_proj, l, true);
  PushAll(ops, ph, ly.fc, l, true);
  Push(ops, ph, ly.ln2, l, true);
  PushAll(ops, ph, ly.attn_proj, l, true);
  PushAll(ops, ph, ly.qkv, l, true);
  Push(ops, ph, ly.ln1, l, true);
}

}  // namespace

std::vector<GroupOp> BuildGptSchedule(const GptGroupIds& ids, int seg_len, bool backward) {
  const int L = static_cast<int>(ids.layers.size());
  std::vector<GroupOp> ops;
  Push(&ops, Phase::kForward, ids.embed, -1, false);
  for (int l = 0; l < L; ++l) LayerForward(&ops, ids, l, Phase::kForward);
  Push(&ops, Phase::kForward, ids.ln_f, -1, false);
  Push(&ops, Phase::kForward, ids.embed, -1, false);
  if (!backward) return ops;
  Push(&ops, Phase::kBackward, ids.embed, -1, true);
  Push(&ops, Phase::kBackward, ids.ln_f, -1, true);
  const int segs = (L + seg_len - 1) / seg_len;
  for (int s = segs - 1; s >= 0; --s) {
    const int first = s * seg_len, last = std::min(L, first + seg_len);
    if (s < segs - 1) {
      for (int l = first; l < last; ++l) LayerForward(&ops, ids, l, Phase::kRecompute);
    }
    for (int l = last - 1; l >= first; --l) LayerBackward(&ops, ids, l);
  }
  Push(&ops, Phase::kBackward, ids.embed, -1, true);
  return ops;
}

std::vector<int> GroupsOfPhase(const std::vector<GroupOp>& ops, Phase phase) {
  std::vector<int> out;
  for (const GroupOp& op : ops) {
    if (op.phase == phase) out.push_back(op.group);
  }
  return out;
}

}  // namespace zinf
