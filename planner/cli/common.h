// Options and input loading shared by the zplan subcommands.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "core/hw_profile.h"
#include "core/model_spec.h"
#include "core/status.h"
#include "planner/search/search.h"

namespace zinf {

// Exit codes (core's ExitCodeFor): 0 success, 1 runtime failure, 2 bad input or usage, 3 no feasible plan.
int Fail(const Status& s);  // prints "zplan: error: ..." on stderr, returns ExitCodeFor

struct CommonArgs {
  std::string model = "gpt3-1.3b";
  std::string hw = "dgx2-v100";
  int64_t nodes = 1;
  int64_t gpus_per_node = 0;
  int64_t seq_len = 0;
  int64_t micro_batch = 0;
  int64_t global_batch = 0;
  std::string dtype;
  std::string accounting = "zero";
  std::string nvme_dir = "/tmp/zinf-nvme";
  std::string device_memory;  // budget override, e.g. "4GiB" (CPU backend arena)
  std::string host_memory;
};

void AddCommonOptions(CLI::App* app, CommonArgs& a, bool with_micro_batch = true);

struct Inputs {
  ModelSpec model;
  HwProfile hw;
  std::string model_path;
  std::string hw_path;
  SearchOptions options;
};
Result<Inputs> LoadInputs(const CommonArgs& a);

}  // namespace zinf
