// Checkpoints: resume equals an uninterrupted run bit for bit; re-sharding to half and
// twice the ranks continues within float-reduction tolerance; corrupted, truncated or
// mismatched checkpoints are refused with errors naming the file; NVMe faults in training
// stop the run with a clear error and leave the last checkpoint usable; the safetensors
// export is independent of tiling and rank count.
#include <gtest/gtest.h>

#include "tests/remove_at_exit.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/file_util.h"
#include "executor/comm/thread_comm.h"
#include "executor/train/checkpoint.h"
#include "executor/train/safetensors.h"
#include "executor/train/trainer.h"
#include "tests/executor/zero3/tiny_plan.h"

namespace zinf {
namespace {

namespace fs = std::filesystem;

std::string FreshDir(const std::string& name) {
  const std::string d = ::testing::TempDir() + "zinf_ckpt_" + std::to_string(::getpid()) + "_" + name;
  fs::remove_all(d);
  fs::create_directories(d);
  testing::RemoveAtExit(d);
  return d;
}

struct RunSpec {
  Plan plan;
  int64_t first = 0, last = 0;   // steps [first, last)
  std::string resume;            // step dir or root
  std::string save_root;         // checkpoint after `last`
  std::optional<FaultSpec> faults;
};

// Runs steps on every rank (threads); returns rank 0's losses, or the first error.
Result<std::vector<double>> Train(const RunSpec& r) {
  const int ranks = static_cast<int>(r.plan.knobs.dp());
  ThreadCommGroup group(ranks);
  std::vector<std::vector<double>> losses(static_cast<size_t>(ranks));
  Status st = group.Run([&](Comm& c) -> Status {
    TrainOptions o;
    o.data_path = Corpus();
    o.threads = 1;
    o.lr = 3e-3f;
    o.nvme_faults = r.faults;
    if (!r.resume.empty()) {
      ZINF_ASSIGN_OR_RETURN(o.resume_from, ResolveCheckpoint(r.resume));
    }
    ZINF_ASSIGN_OR_RETURN(auto t, Trainer::Create(r.plan, &c, o));
    if (!r.resume.empty() && t->start_step() != r.first)
      return Internal("restored step " + std::to_string(t->start_step()) + ", expected " + std::to_string(r.first));
    for (int64_t s = r.first; s < r.last; ++s) {
      ZINF_ASSIGN_OR_RETURN(StepResult sr, t->Step(s));
      losses[static_cast<size_t>(c.rank())].push_back(sr.loss);
    }
    if (!r.save_root.empty()) ZINF_RETURN_IF_ERROR(t->SaveCheckpoint(r.save_root, r.last, 2));
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return losses[0];
}

std::vector<double> Concat(std::vector<double> a, const std::vector<double>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(Checkpoint, ResumeIsBitwiseIdentical) {
  for (const char* opt : {"device", "nvme"}) {
    const Plan p = TinyPlan("host", "host", opt, 2, 2);
    auto full = Train({p, 0, 6});
    ASSERT_TRUE(full.ok()) << full.status().ToString();
    const std::string root = FreshDir(std::string("bitwise_") + opt);
    auto a = Train({p, 0, 3, "", root});
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    auto b = Train({p, 3, 6, root});
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    EXPECT_EQ(Concat(*a, *b), *full) << "optimizer on " << opt;
  }
}

TEST(Checkpoint, ReshardsToHalfAndTwiceTheRanks) {
  const Plan p2 = TinyPlan("device", "host", "host", 2, 2);
  auto full = Train({p2, 0, 6});
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  const std::string root = FreshDir("reshard");
  ASSERT_TRUE(Train({p2, 0, 3, "", root}).ok());
  for (int ranks : {1, 4}) {
    auto b = Train({TinyPlan("nvme", "host", "nvme", ranks, 4 / ranks), 3, 6, root});
    ASSERT_TRUE(b.ok()) << ranks << " ranks: " << b.status().ToString();
    ASSERT_EQ(b->size(), 3u);
    for (size_t i = 0; i < 3; ++i)
      EXPECT_NEAR((*b)[i], (*full)[3 + i], 1e-5 * std::fabs((*full)[3 + i])) << ranks << " ranks, step " << 3 + i;
  }
}

TEST(Checkpoint, KeepsTheNewestAndIgnoresIncompleteOnes) {
  const Plan p = TinyPlan("host", "host", "host", 1, 4);
  const std::string root = FreshDir("keep");
  for (int64_t s : {1, 2, 3}) ASSERT_TRUE(Train({p, s == 1 ? 0 : s - 1, s, s == 1 ? "" : root, root}).ok()) << s;
  EXPECT_FALSE(fs::exists(root + "/step-000001")) << "keep = 2 prunes the oldest";
  EXPECT_TRUE(fs::exists(root + "/step-000002"));
  // A crashed save leaves a .tmp directory and maybe a dangling `latest`: both ignored.
  fs::create_directories(root + "/step-000009.tmp");
  auto dir = ResolveCheckpoint(root);
  ASSERT_TRUE(dir.ok());
  EXPECT_EQ(fs::path(*dir).filename(), "step-000003");
  ASSERT_TRUE(WriteFileAtomic(root + "/latest", "step-000007\n").ok());
  dir = ResolveCheckpoint(root);
  ASSERT_TRUE(dir.ok());
  EXPECT_EQ(fs::path(*dir).filename(), "step-000003") << "falls back to the newest complete one";
  auto none = ResolveCheckpoint(FreshDir("empty"));
  EXPECT_EQ(none.status().code(), Code::kNotFound);
}

TEST(Checkpoint, DamagedCheckpointsAreRefused) {
  const Plan p = TinyPlan("host", "host", "host", 2, 2);
  const std::string root = FreshDir("damaged");
  ASSERT_TRUE(Train({p, 0, 2, "", root}).ok());
  const std::string dir = root + "/step-000002";
  const std::string file = dir + "/rank-00001.bin";
  auto orig = ReadFile(file);
  ASSERT_TRUE(orig.ok());
  {  // one flipped byte
    std::string bad = *orig;
    bad[bad.size() / 2] ^= 0x10;
    ASSERT_TRUE(WriteFileAtomic(file, bad).ok());
    auto r = Train({p, 2, 3, dir});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Code::kCorrupt) << r.status().ToString();
    EXPECT_NE(r.status().message().find("rank-00001.bin"), std::string::npos) << r.status().ToString();
  }
  {  // truncated
    ASSERT_TRUE(WriteFileAtomic(file, orig->substr(0, orig->size() - 100)).ok());
    auto r = Train({p, 2, 3, dir});
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("rank-00001.bin"), std::string::npos) << r.status().ToString();
    ASSERT_TRUE(WriteFileAtomic(file, *orig).ok());
  }
  {  // another model's checkpoint
    Plan other = p;
    other.model.n_layer = 3;
    auto r = Train({other, 2, 3, dir});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << r.status().ToString();
    EXPECT_NE(r.status().message().find("manifest.yaml"), std::string::npos) << r.status().ToString();
  }
  {  // a manifest of the wrong version
    auto m = ReadFile(dir + "/manifest.yaml");
    ASSERT_TRUE(m.ok());
    std::string bad = *m;
    bad.replace(bad.find("zinf.checkpoint/v1"), 18, "zinf.checkpoint/v9");
    ASSERT_TRUE(WriteFileAtomic(dir + "/manifest.yaml", bad).ok());
    auto r = LoadManifest(dir);
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find("format"), std::string::npos) << r.status().ToString();
    ASSERT_TRUE(WriteFileAtomic(dir + "/manifest.yaml", *m).ok());
  }
  EXPECT_TRUE(Train({p, 2, 3, dir}).ok()) << "the repaired checkpoint restores";
}

TEST(Checkpoint, NvmeFaultsStopTrainingAndTheCheckpointSurvives) {
  const Plan p = TinyPlan("nvme", "nvme", "nvme", 1, 4);
  auto full = Train({p, 0, 5});
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  const std::string root = FreshDir("faults");
  ASSERT_TRUE(Train({p, 0, 2, "", root}).ok());
  struct Case {
    const char* what;
    FaultSpec spec;
    Code code;
  };
  std::vector<Case> cases(3);
  cases[0] = {"disk full", {}, Code::kNoSpace};
  cases[0].spec.enospc_after_bytes = 1 << 20;
  cases[1] = {"EIO", {}, Code::kIo};
  cases[1].spec.eio_on_op = 40;
  cases[2] = {"corruption", {}, Code::kCorrupt};
  cases[2].spec.corrupt_offset = 4096 + 17;
  for (const Case& c : cases) {
    auto r = Train({p, 2, 5, root, "", c.spec});
    ASSERT_FALSE(r.ok()) << c.what;
    EXPECT_EQ(r.status().code(), c.code) << c.what << ": " << r.status().ToString();
    EXPECT_NE(r.status().message().find("zinf-rank0.swap"), std::string::npos) << c.what << ": " << r.status().ToString();
    auto again = Train({p, 2, 5, root});  // the checkpoint is intact: the run continues exactly
    ASSERT_TRUE(again.ok()) << c.what << ": " << again.status().ToString();
    EXPECT_EQ(*again, std::vector<double>(full->begin() + 2, full->end())) << c.what;
  }
  // Short reads and writes are resumed by the request engine: training does not notice.
  FaultSpec shorts;
  shorts.short_every = 3;
  auto s = Train({p, 2, 5, root, "", shorts});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(*s, std::vector<double>(full->begin() + 2, full->end())) << "short transfers";
}

TEST(Checkpoint, SafetensorsAreIndependentOfTilingAndRanks) {
  auto export_at_init = [](int tile, int ranks, const std::string& path) -> Status {
    Plan p = TinyPlan("host", "host", "host", ranks, 4 / ranks);
    p.knobs.tile_factor = tile;
    ThreadCommGroup group(ranks);
    return group.Run([&](Comm& c) -> Status {
      TrainOptions o;
      o.data_path = Corpus();
      o.threads = 1;
      ZINF_ASSIGN_OR_RETURN(auto t, Trainer::Create(p, &c, o));
      return t->ExportSafetensors(path, {{"format", "pt"}});
    });
  };
  const std::string d = FreshDir("safetensors");
  ASSERT_TRUE(export_at_init(1, 1, d + "/a.safetensors").ok());
  ASSERT_TRUE(export_at_init(2, 2, d + "/b.safetensors").ok());
  auto a = ReadFile(d + "/a.safetensors"), b = ReadFile(d + "/b.safetensors");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b) << "tile 2 on 2 ranks exports the same bytes as tile 1 on 1 rank";
  auto t = ReadSafetensors(d + "/a.safetensors");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  bool saw_qkv = false;
  for (const SafeTensor& s : *t)
    if (s.name == "h0.attn.qkv.weight") {
      saw_qkv = true;
      EXPECT_EQ(s.shape, (std::vector<int64_t>{96, 32}));
    }
  EXPECT_TRUE(saw_qkv);
  // Truncated files are refused with the file named.
  ASSERT_TRUE(WriteFileAtomic(d + "/c.safetensors", a->substr(0, a->size() / 2)).ok());
  auto bad = ReadSafetensors(d + "/c.safetensors");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("c.safetensors"), std::string::npos);
}

}  // namespace
}  // namespace zinf
