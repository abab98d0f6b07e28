// Trainer: one rank's ZeRO-3 training loop for a plan: the CPU backend with the plan's
// device budget as its arena, the GPT on a Zero3Engine placed as the plan says, the
// checkpoint store on the plan's tier, and batches from a TokenDataset.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/plan.h"
#include "executor/backend/backend.h"
#include "executor/comm/comm.h"
#include "executor/model/activation_store.h"
#include "executor/model/gpt.h"
#include "executor/train/dataset.h"
#include "executor/zero3/coordinator.h"

namespace zinf {

struct TrainOptions {
  std::string data_path;
  float lr = 3e-4f;
  float weight_decay = 0.0f;
  uint64_t seed = 1234;
  int threads = 0;             // compute threads (0: all cores / ranks on this node)
  std::string nvme_dir;        // "" -> the plan's
  std::string resume_from;     // a checkpoint step directory: restored instead of initialised
  std::optional<FaultSpec> nvme_faults;  // tests: faults injected into the NVMe store
};

struct StepResult {
  int64_t step = 0;
  double loss = 0;              // mean over the global batch
  double step_s = 0;
  double fwd_bwd_s = 0;         // forward + backward (incl. waits), all micro-steps
  double drain_s = 0;           // waiting for the last reductions
  double optimizer_s = 0;
  double tokens_per_s = 0;      // whole job
  double nvme_read_bytes = 0, nvme_write_bytes = 0;  // this rank's, this step
};

class Trainer {
 public:
  static Result<std::unique_ptr<Trainer>> Create(const Plan& plan, Comm* comm, const TrainOptions& o);
  Result<StepResult> Step(int64_t step);

  // Steps completed when training starts (0, or the restored checkpoint's step).
  int64_t start_step() const { return start_step_; }
  // Collective: a checkpoint of the state after `steps_done` steps under `root`.
  Status SaveCheckpoint(const std::string& root, int64_t steps_done, int keep);
  // Collective: the consolidated weights as safetensors; rank 0 writes `path`.
  Status ExportSafetensors(const std::string& path, const std::map<std::string, std::string>& metadata);

  Backend& backend() { return *backend_; }
  Zero3Engine& engine() { return *engine_; }
  Gpt& model() { return *gpt_; }
  const Plan& plan() const { return plan_; }
  double activation_host_bytes() const { return store_ ? static_cast<double>(store_->host_bytes()) : 0.0; }

 private:
  Trainer() = default;
  Plan plan_;
  Comm* comm_ = nullptr;
  TrainOptions o_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<ActivationStore> store_;
  std::unique_ptr<Gpt> gpt_;
  std::unique_ptr<Zero3Engine> engine_;
  std::unique_ptr<TokenDataset> data_;
  std::vector<int32_t> tokens_, targets_;
  int64_t start_step_ = 0;
};

// The GPT the plan describes (GPT family only: zrun trains GPT-style decoders).
Result<GptConfig> GptConfigForPlan(const Plan& plan);

}  // namespace zinf
