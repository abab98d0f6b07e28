#include "executor/train/trainer.h"

#include <fmt/format.h>

#include <chrono>
#include <thread>

#include "executor/backend/cpu/cpu_backend.h"
#include "executor/train/checkpoint.h"
#include "executor/train/safetensors.h"
#include "executor/train/test_hooks.h"

namespace zinf {

Result<GptConfig> GptConfigForPlan(const Plan& plan) {
  const ModelSpec& m = plan.model;
  if (m.family != "gpt" || m.mlp != "gelu" || m.norm != "layernorm" || m.position != "learned" || !m.tied_embeddings)
    return Unsupported(fmt::format("zrun trains GPT-style decoders (gelu, layernorm, learned positions, tied head); "
                                   "model '{}' is family {} / {} / {}", m.name, m.family, m.mlp, m.norm));
  if (m.ffn_hidden != 4 * m.hidden)
    return Unsupported(fmt::format("zrun's GPT uses ffn_hidden = 4 x hidden; model '{}' has {}", m.name, m.ffn_hidden));
  GptConfig c;
  c.vocab = static_cast<int>(m.vocab);
  c.seq_len = static_cast<int>(plan.knobs.seq_len);
  c.n_layer = static_cast<int>(m.n_layer);
  c.n_embd = static_cast<int>(m.hidden);
  c.n_head = static_cast<int>(m.n_head);
  c.tile = static_cast<int>(plan.knobs.tile_factor);
  ZINF_RETURN_IF_ERROR(c.Validate());
  return c;
}

Result<std::unique_ptr<Trainer>> Trainer::Create(const Plan& plan, Comm* comm, const TrainOptions& o) {
  auto t = std::unique_ptr<Trainer>(new Trainer());
  t->plan_ = plan;
  t->comm_ = comm;
  t->o_ = o;
  const PlanKnobs& k = plan.knobs;
  if (comm->size() != k.dp())
    return InvalidArgument(fmt::format("the plan is for {} ranks ({} nodes x {} GPUs) but {} are running; "
                                       "launch with mpirun -np {}", k.dp(), k.nodes, k.gpus_per_node, comm->size(), k.dp()));
  ZINF_ASSIGN_OR_RETURN(GptConfig cfg, GptConfigForPlan(plan));
  int threads = o.threads;
  if (threads <= 0) threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / comm->size());
  ZINF_ASSIGN_OR_RETURN(t->backend_, MakeCpuBackend(static_cast<size_t>(k.device_budget_bytes), threads));
  const int ci = k.ckpt_interval > 0 && k.ckpt_interval < cfg.n_layer ? static_cast<int>(k.ckpt_interval) : 0;
  if (ci > 0) {
    if (k.ckpt_tier == Tier::kHost) t->store_ = std::make_unique<HostActivationStore>(t->backend_.get());
    else t->store_ = std::make_unique<DeviceActivationStore>(t->backend_.get());
  }
  ZINF_ASSIGN_OR_RETURN(t->gpt_, Gpt::Create(cfg, t->backend_.get(), t->store_.get(), ci));
  Zero3Options zo;
  zo.placement = k.placement;
  zo.prefetch_nvme = static_cast<int>(k.prefetch_nvme);
  zo.prefetch_h2d = static_cast<int>(k.prefetch_h2d);
  zo.prefetch_allgather = static_cast<int>(k.prefetch_allgather);
  zo.nvme_dir = o.nvme_dir.empty() ? k.nvme_dir : o.nvme_dir;
  zo.io.block_size_bytes = static_cast<uint64_t>(k.nvme_block_size);
  zo.io.queue_depth = static_cast<uint32_t>(k.nvme_queue_depth);
  zo.nvme_faults = o.nvme_faults;
  zo.grad_bucket_bytes = k.reduce_bucket_bytes;
  ZINF_ASSIGN_OR_RETURN(TokenDataset d, TokenDataset::Open(o.data_path, cfg.vocab, cfg.seq_len));
  t->data_ = std::make_unique<TokenDataset>(std::move(d));
  ZINF_ASSIGN_OR_RETURN(t->engine_, Zero3Engine::Create(t->gpt_->groups(), t->gpt_->StepSchedule(), t->backend_.get(), comm, zo));
  if (o.resume_from.empty()) {
    ZINF_RETURN_IF_ERROR(t->engine_->InitParams(o.seed));
  } else {
    ZINF_ASSIGN_OR_RETURN(CheckpointMeta meta, RestoreCheckpoint(o.resume_from, t->gpt_->groups(), *t->engine_, *comm));
    if (meta.model != plan.model.name)
      return InvalidArgument(fmt::format("{}/manifest.yaml: key 'model' is '{}' but the plan trains '{}'", o.resume_from,
                                         meta.model, plan.model.name));
    if (meta.data_tokens != t->data_->num_tokens())
      return InvalidArgument(fmt::format("{}/manifest.yaml: key 'data.tokens' is {} but {} has {} tokens: resume with the "
                                         "same data file (batches are a function of the step and the data)",
                                         o.resume_from, meta.data_tokens, o.data_path, t->data_->num_tokens()));
    t->start_step_ = meta.step;
  }
  const size_t n = static_cast<size_t>(k.micro_batch * k.seq_len);
  t->tokens_.resize(n);
  t->targets_.resize(n);
  ZINF_RETURN_IF_ERROR(t->gpt_->Prepare(static_cast<int>(k.micro_batch)));
  return t;
}

Result<StepResult> Trainer::Step(int64_t step) {
  using Clock = std::chrono::steady_clock;
  const PlanKnobs& k = plan_.knobs;
  const int R = comm_->size();
  auto t0 = Clock::now();
  const Zero3Stats io0 = engine_->stats();
  ZINF_RETURN_IF_ERROR(engine_->BeginStep(1.0f / static_cast<float>(R * k.grad_accum)));
  double loss_sum = 0;
  for (int64_t micro = 0; micro < k.grad_accum; ++micro) {
    data_->Batch(step, micro, comm_->rank() * k.micro_batch, k.micro_batch, tokens_.data(), targets_.data());
    ZINF_ASSIGN_OR_RETURN(float loss, gpt_->ForwardBackward(*engine_, tokens_.data(), targets_.data(),
                                                            static_cast<int>(k.micro_batch)));
    loss_sum += loss;
  }
  auto t1 = Clock::now();
  TestHookPoint("step", step, comm_->rank());  // tests: a crash or hang mid-step
  ZINF_RETURN_IF_ERROR(engine_->FinishBackward());
  auto t2 = Clock::now();
  AdamParams hp;
  hp.lr = o_.lr;
  hp.weight_decay = o_.weight_decay;
  ZINF_RETURN_IF_ERROR(engine_->OptimizerStep(hp));
  float loss = static_cast<float>(loss_sum / static_cast<double>(k.grad_accum));
  if (R > 1) {
    ZINF_RETURN_IF_ERROR(comm_->AllReduce(&loss, 1));
    loss /= static_cast<float>(R);
  }
  auto t3 = Clock::now();
  StepResult r;
  r.step = step;
  r.loss = loss;
  r.fwd_bwd_s = std::chrono::duration<double>(t1 - t0).count();
  r.drain_s = std::chrono::duration<double>(t2 - t1).count();
  r.optimizer_s = std::chrono::duration<double>(t3 - t2).count();
  r.step_s = std::chrono::duration<double>(t3 - t0).count();
  r.tokens_per_s = static_cast<double>(k.micro_batch * k.seq_len * k.grad_accum * R) / r.step_s;
  const Zero3Stats io1 = engine_->stats();
  r.nvme_read_bytes = io1.nvme_read_bytes - io0.nvme_read_bytes;
  r.nvme_write_bytes = io1.nvme_write_bytes - io0.nvme_write_bytes;
  return r;
}

Status Trainer::SaveCheckpoint(const std::string& root, int64_t steps_done, int keep) {
  CheckpointMeta m;
  m.step = steps_done;
  m.adam_step = engine_->adam_step();
  m.ranks = comm_->size();
  m.model = plan_.model.name;
  m.seed = o_.seed;
  m.data_path = o_.data_path;
  m.data_tokens = data_->num_tokens();
  m.lr = o_.lr;
  return zinf::SaveCheckpoint(root, m, gpt_->groups(), *engine_, *comm_, keep);
}

Status Trainer::ExportSafetensors(const std::string& path, const std::map<std::string, std::string>& metadata) {
  std::vector<std::vector<float>> params;
  ZINF_RETURN_IF_ERROR(engine_->GatherAllParams(&params));
  if (comm_->rank() != 0) return Status::Ok();
  return WriteSafetensors(path, LogicalTensors(gpt_->groups(), params), metadata);
}

}  // namespace zinf
