#include "executor/model/param_groups.h"

#include <gtest/gtest.h>

#include <cmath>

#include "executor/model/gpt_schedule.h"
#include "tests/executor/model/model_test_util.h"

namespace zinf {
namespace {

TEST(ParamGroups, NamesOrderAndSizes) {
  GptConfig c = testing::TinyConfig(2);
  auto L = BuildGptParamLayout(c);
  ASSERT_TRUE(L.ok()) << L.status().ToString();
  std::vector<std::string> names;
  for (const auto& g : L->groups) names.push_back(g.name);
  const std::vector<std::string> want = {
      "embed",       "h0.ln1", "h0.attn.qkv", "h0.attn.proj", "h0.ln2", "h0.mlp.fc",
      "h0.mlp.proj", "h1.ln1", "h1.attn.qkv", "h1.attn.proj", "h1.ln2", "h1.mlp.fc",
      "h1.mlp.proj", "ln_f"};
  EXPECT_EQ(names, want);
  EXPECT_EQ(static_cast<int64_t>(L->total_numel), c.NumParams());
  const ParamGroup& embed = L->groups[0];
  ASSERT_EQ(embed.tensors.size(), 2u);
  EXPECT_EQ(embed.tensors[1].name, "wpe");
  EXPECT_EQ(embed.tensors[1].offset, 32u * 16);
  const ParamGroup& fc = L->groups[L->ids.layers[0].fc[0]];
  EXPECT_EQ(fc.numel, 64u * 16 + 64);
  EXPECT_EQ(fc.tensors[0].shape, (std::vector<int64_t>{64, 16}));
}

TEST(ParamGroups, TilingSplitsOutputRows) {
  GptConfig c = testing::TinyConfig(1, 4);
  auto L = BuildGptParamLayout(c);
  ASSERT_TRUE(L.ok());
  const auto& ly = L->ids.layers[0];
  ASSERT_EQ(ly.fc.size(), 4u);
  const ParamGroup& t1 = L->groups[ly.fc[1]];
  EXPECT_EQ(t1.name, "h0.mlp.fc.tile1");
  EXPECT_EQ(t1.tensors[0].name, "h0.mlp.fc.weight");
  EXPECT_EQ(t1.tensors[0].shape, (std::vector<int64_t>{16, 16}));
  EXPECT_EQ(t1.tensors[0].row_begin, 16);
  EXPECT_EQ(t1.tensors[0].logical_rows, 64);
  EXPECT_EQ(t1.tensors[1].shape, (std::vector<int64_t>{16}));
  EXPECT_EQ(L->groups[ly.mlp_proj[3]].tensors[0].shape, (std::vector<int64_t>{4, 64}));
  EXPECT_EQ(static_cast<int64_t>(L->total_numel), c.NumParams());
  c.tile = 3;
  EXPECT_EQ(BuildGptParamLayout(c).status().code(), Code::kInvalidArgument);
}

TEST(ParamGroups, InitIsDeterministicAndTilingIndependent) {
  auto be = testing::ModelBackend();
  auto m1 = std::move(Gpt::Create(testing::TinyConfig(2, 1), be.get(), nullptr, 0)).value();
  auto m4 = std::move(Gpt::Create(testing::TinyConfig(2, 4), be.get(), nullptr, 0)).value();
  auto p1 = testing::MakeProvider(be.get(), *m1, 7);
  auto p4 = testing::MakeProvider(be.get(), *m4, 7);
  std::vector<float> f1, f4;
  ASSERT_TRUE(p1->DownloadParams(&f1).ok());
  ASSERT_TRUE(p4->DownloadParams(&f4).ok());
  auto l1 = testing::Logical(*p1, f1), l4 = testing::Logical(*p4, f4);
  EXPECT_EQ(l1, l4);
  // Statistics of the GPT-2 style init.
  auto stdev = [](const std::vector<float>& v) {
    double s = 0, ss = 0;
    for (float x : v) s += x, ss += double(x) * x;
    const double m = s / v.size();
    return std::sqrt(ss / v.size() - m * m);
  };
  EXPECT_NEAR(stdev(l1["h0.mlp.fc.weight"]), 0.02, 0.002);
  EXPECT_NEAR(stdev(l1["h1.mlp.proj.weight"]), 0.02 / 2.0, 0.001);  // 1/sqrt(2*2)
  EXPECT_EQ(l1["h0.ln1.weight"], std::vector<float>(16, 1.0f));
  EXPECT_EQ(l1["h0.attn.qkv.bias"], std::vector<float>(48, 0.0f));
  EXPECT_NE(l1["h0.attn.qkv.weight"], l1["h1.attn.qkv.weight"]);
  auto p1b = testing::MakeProvider(be.get(), *m1, 8);
  std::vector<float> f1b;
  ASSERT_TRUE(p1b->DownloadParams(&f1b).ok());
  EXPECT_NE(f1, f1b);  // the seed matters
}

TEST(Schedule, OrderAndRecompute) {
  GptConfig c = testing::TinyConfig(3, 2);
  auto L = std::move(BuildGptParamLayout(c)).value();
  const auto& ids = L.ids;
  // 3 layers, segments of 2: [0,1] recomputed, [2] not.
  auto ops = BuildGptSchedule(ids, 2, true);
  const size_t per_layer = 2 + 4 * 2;  // 2 LNs + 4 tiled linears of 2 tiles
  EXPECT_EQ(GroupsOfPhase(ops, Phase::kForward).size(), 3 + 3 * per_layer);
  EXPECT_EQ(GroupsOfPhase(ops, Phase::kRecompute).size(), 2 * per_layer);
  EXPECT_EQ(GroupsOfPhase(ops, Phase::kBackward).size(), 3 + 3 * per_layer);
  auto fwd = GroupsOfPhase(ops, Phase::kForward);
  EXPECT_EQ(fwd.front(), ids.embed);
  EXPECT_EQ(fwd[1], ids.layers[0].ln1);
  EXPECT_EQ(fwd[2], ids.layers[0].qkv[0]);
  EXPECT_EQ(fwd[3], ids.layers[0].qkv[1]);
  EXPECT_EQ(fwd.back(), ids.embed);
  auto bwd = GroupsOfPhase(ops, Phase::kBackward);
  EXPECT_EQ(bwd[0], ids.embed);
  EXPECT_EQ(bwd[1], ids.ln_f);
  EXPECT_EQ(bwd[2], ids.layers[2].mlp_proj[0]);
  EXPECT_EQ(bwd.back(), ids.embed);
  // Recompute of layers 0-1 comes after layer 2's backward, before layer 1's.
  size_t first_recompute = 0;
  while (ops[first_recompute].phase != Phase::kRecompute) ++first_recompute;
  EXPECT_EQ(ops[first_recompute].layer, 0);
  EXPECT_EQ(ops[first_recompute - 1].layer, 2);
  EXPECT_EQ(ops[first_recompute - 1].group, ids.layers[2].ln1);
  // No checkpointing: no recompute.
  EXPECT_TRUE(GroupsOfPhase(BuildGptSchedule(ids, 3, true), Phase::kRecompute).empty());
}

}  // namespace
}  // namespace zinf
