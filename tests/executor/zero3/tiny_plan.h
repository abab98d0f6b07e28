// The tiny GPT plan and text corpus the training tests share.
#pragma once

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "core/plan.h"
#include "tests/remove_at_exit.h"

namespace zinf {

inline std::string Corpus() {
  static const std::string path = [] {
    // Per process: test binaries run in parallel and must not rewrite each other's corpus.
    std::string p = ::testing::TempDir() + "zinf_corpus_" + std::to_string(::getpid()) + ".txt";
    testing::RemoveAtExit(p);
    std::ofstream f(p);
    const char* words[] = {"the ", "quick ", "brown ", "fox ", "jumps ", "over ", "a ", "lazy ", "dog. ", "and ", "then ", "sleeps.\n"};
    uint64_t x = 42;
    for (int i = 0; i < 20000; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      f << words[(x >> 33) % 12];
    }
    return p;
  }();
  return path;
}

inline Plan TinyPlan(const char* params, const char* grads, const char* opt, int ranks, int micro_batch) {
  Plan p;
  p.model.name = "tiny";
  p.model.family = "gpt";
  p.model.n_layer = 2;
  p.model.hidden = 32;
  p.model.n_head = 4;
  p.model.n_kv_head = 4;
  p.model.ffn_hidden = 128;
  p.model.vocab = 256;
  p.model.seq_len = 16;
  p.hw_name = "test";
  p.backend = "cpu";
  PlanKnobs& k = p.knobs;
  k.nodes = 1;
  k.gpus_per_node = ranks;
  k.micro_batch = micro_batch;
  k.seq_len = 16;
  k.dtype = "fp32";
  k.placement = {*ParseTier(params), *ParseTier(grads), *ParseTier(opt)};
  k.ckpt_interval = 0;
  k.device_budget_bytes = 64.0 * (1 << 20);
  // One directory per test process: test binaries run in parallel and each rank's swap
  // file name is fixed within a directory.
  static const std::string nvme_dir = [] {
    std::string d = ::testing::TempDir() + "zinf-nvme-" + std::to_string(::getpid());
    ::mkdir(d.c_str(), 0755);
    testing::RemoveAtExit(d);
    return d;
  }();
  k.nvme_dir = nvme_dir;
  k.nvme_block_size = 1 << 16;
  k.nvme_queue_depth = 4;
  return p;
}

}  // namespace zinf
