#include "executor/model/gpt.h"

#include <fmt/format.h>

#include <algorithm>

#include "executor/model/gpt_buffers.h"

namespace zinf {
namespace {

constexpr size_t kAlignFloats = 64;  // 256-byte aligned sub-buffers

// Hands out aligned sub-buffers of a block; with base == nullptr only sizes.
class Carver {
 public:
  explicit Carver(float* base) : base_(base) {}
  float* Take(size_t n) {
    float* p = base_ == nullptr ? nullptr : base_ + used_;
    used_ += (n + kAlignFloats - 1) / kAlignFloats * kAlignFloats;
    return p;
  }
  size_t bytes() const { return used_ * sizeof(float); }

 private:
  float* base_;
  size_t used_ = 0;
};

}  // namespace

Gpt::Gpt(const GptConfig& cfg, Backend* be, ActivationStore* store, int seg_len,
         GptParamLayout layout)
    : cfg_(cfg), be_(be), store_(store), seg_len_(seg_len), layout_(std::move(layout)),
      buf_(std::make_unique<Buffers>()) {
  step_ops_ = BuildGptSchedule(layout_.ids, seg_len_, /*backward=*/true);
  fwd_ops_ = BuildGptSchedule(layout_.ids, seg_len_, /*backward=*/false);
}

Gpt::~Gpt() = default;

Result<std::unique_ptr<Gpt>> Gpt::Create(const GptConfig& cfg, Backend* backend,
                                         ActivationStore* store, int ckpt_interval) {
  if (backend == nullptr) return InvalidArgument("Gpt: backend is null");
  ZINF_ASSIGN_OR_RETURN(GptParamLayout layout, BuildGptParamLayout(cfg));
  const int seg_len =
      (ckpt_interval <= 0 || ckpt_interval >= cfg.n_layer) ? cfg.n_layer : ckpt_interval;
  if (seg_len < cfg.n_layer && store == nullptr) {
    return InvalidArgument(fmt::format(
        "Gpt: checkpoint interval {} < n_layer {} needs an ActivationStore", ckpt_interval,
        cfg.n_layer));
  }
  return std::unique_ptr<Gpt>(new Gpt(cfg, backend, store, seg_len, std::move(layout)));
}

size_t Gpt::LayoutActivations(float* base) {
  const size_t N = static_cast<size_t>(batch_) * cfg_.seq_len, C = cfg_.n_embd;
  const size_t TT = static_cast<size_t>(batch_) * cfg_.n_head * cfg_.seq_len * cfg_.seq_len;
  Carver c(base);
  Buffers& b = *buf_;
  b.seg_in = c.Take(N * C);
  b.slots.resize(seg_len_);
  for (LayerActs& a : b.slots) {
    a.ln1 = c.Take(N * C);
    a.mean1 = c.Take(N);
    a.rstd1 = c.Take(N);
    a.qkv = c.Take(N * 3 * C);
    a.probs = c.Take(TT);
    a.att = c.Take(N * C);
    a.x2 = c.Take(N * C);
    a.ln2 = c.Take(N * C);
    a.mean2 = c.Take(N);
    a.rstd2 = c.Take(N);
    a.fc = c.Take(N * 4 * C);
    a.gl = c.Take(N * 4 * C);
    a.out = c.Take(N * C);
  }
  b.lnf = c.Take(N * C);
  b.meanf = c.Take(N);
  b.rstdf = c.Take(N);
  b.logits = c.Take(N * cfg_.vocab);
  return c.bytes();
}

size_t Gpt::LayoutWorkspace(float* base) {
  const size_t N = static_cast<size_t>(batch_) * cfg_.seq_len, C = cfg_.n_embd;
  Carver c(base);
  Buffers& b = *buf_;
  b.tokens = reinterpret_cast<int32_t*>(c.Take(N));
  b.targets = reinterpret_cast<int32_t*>(c.Take(N));
  b.row_loss = c.Take(N);
  b.loss = c.Take(1);
  b.dres = c.Take(N * C);
  b.dln = c.Take(N * C);
  b.datt = c.Take(N * C);
  b.dqkv = c.Take(N * 3 * C);
  b.dfc = c.Take(N * 4 * C);
  b.attn_ws = c.Take(
      be_->AttentionWorkspaceBytes(batch_, cfg_.seq_len, cfg_.n_embd, cfg_.n_head) / 4 + 1);
  return c.bytes();
}

Status Gpt::Prepare(int batch) {
  if (batch <= 0) return InvalidArgument(fmt::format("Gpt: batch {} must be > 0", batch));
  if (batch == batch_) return Status::Ok();
  act_buf_.reset();
  ws_buf_.reset();
  batch_ = batch;
  const size_t act_bytes = LayoutActivations(nullptr);
  const size_t ws_bytes = LayoutWorkspace(nullptr);
  auto act = be_->AllocBuffer(act_bytes);
  if (!act.ok()) {
    batch_ = 0;
    return act.status().WithContext(fmt::format("Gpt activations (batch {})", batch));
  }
  act_buf_ = std::move(act).value();
  auto ws = be_->AllocBuffer(ws_bytes);
  if (!ws.ok()) {
    act_buf_.reset();
    batch_ = 0;
    return ws.status().WithContext(fmt::format("Gpt workspace (batch {})", batch));
  }
  ws_buf_ = std::move(ws).value();
  LayoutActivations(act_buf_.as<float>());
  LayoutWorkspace(ws_buf_.as<float>());
  return Status::Ok();
}

size_t Gpt::activation_bytes() const { return act_buf_.bytes(); }
size_t Gpt::workspace_bytes() const { return ws_buf_.bytes(); }
const float* Gpt::logits() const { return buf_->logits; }

Result<float> Gpt::ForwardBackward(ParamProvider& params, const int32_t* tokens,
                                   const int32_t* targets, int batch) {
  return Run(params, tokens, targets, batch, /*backward=*/true);
}

Result<float> Gpt::Forward(ParamProvider& params, const int32_t* tokens, const int32_t* targets,
                           int batch) {
  return Run(params, tokens, targets, batch, /*backward=*/false);
}

Result<float> Gpt::Run(ParamProvider& params, const int32_t* tokens, const int32_t* targets,
                       int batch, bool backward) {
  ZINF_RETURN_IF_ERROR(Prepare(batch));
  const size_t N = static_cast<size_t>(batch) * cfg_.seq_len;
  for (size_t i = 0; i < N; ++i) {
    if (tokens[i] < 0 || tokens[i] >= cfg_.vocab || targets[i] < 0 || targets[i] >= cfg_.vocab) {
      return InvalidArgument(fmt::format("Gpt: token/target at {} = {}/{} outside [0, {})", i,
                                         tokens[i], targets[i], cfg_.vocab));
    }
  }
  ZINF_RETURN_IF_ERROR(be_->CopyH2D(buf_->tokens, tokens, N * sizeof(int32_t)));
  ZINF_RETURN_IF_ERROR(be_->CopyH2D(buf_->targets, targets, N * sizeof(int32_t)));
  prov_ = &params;
  ops_ = backward ? &step_ops_ : &fwd_ops_;
  cursor_ = 0;
  ZINF_RETURN_IF_ERROR(ForwardPass(backward));
  if (backward) ZINF_RETURN_IF_ERROR(BackwardPass());
  if (cursor_ != ops_->size()) {
    return Internal(fmt::format("Gpt: ran {} of {} scheduled ops", cursor_, ops_->size()));
  }
  float loss = 0.0f;
  ZINF_RETURN_IF_ERROR(be_->CopyD2H(&loss, buf_->loss, sizeof(float)));
  be_->Synchronize(be_->ComputeStream());
  prov_ = nullptr;
  return loss;
}

const float* Gpt::FinalOutput() const {
  const int last_seg_first = (num_segments() - 1) * seg_len_;
  return buf_->slots[cfg_.n_layer - 1 - last_seg_first].out;
}

Status Gpt::ForwardPass(bool training) {
  Buffers& b = *buf_;
  const int B = batch_, T = cfg_.seq_len, C = cfg_.n_embd, V = cfg_.vocab, L = cfg_.n_layer;
  const int N = B * T;
  const int embed = layout_.ids.embed;
  {
    ZINF_ASSIGN_OR_RETURN(const float* p, BeginOp(embed, Phase::kForward, false));
    be_->EmbeddingFwd(b.tokens, p, p + static_cast<size_t>(V) * C, b.seg_in, B, T, C);
    ZINF_RETURN_IF_ERROR(EndOp(embed, false));
  }
  const int segs = num_segments();
  const size_t act_bytes = static_cast<size_t>(N) * C * sizeof(float);
  for (int s = 0; s < segs; ++s) {
    const int first = s * seg_len_, last = std::min(L, first + seg_len_);
    if (s > 0) ZINF_RETURN_IF_ERROR(be_->CopyD2D(b.seg_in, b.slots[seg_len_ - 1].out, act_bytes));
    if (training && s < segs - 1) ZINF_RETURN_IF_ERROR(store_->Save(first, b.seg_in, act_bytes));
    for (int l = first; l < last; ++l) {
      const int slot = l - first;
      const float* x = slot == 0 ? b.seg_in : b.slots[slot - 1].out;
      ZINF_RETURN_IF_ERROR(BlockForward(l, x, b.slots[slot], Phase::kForward));
    }
  }
  ZINF_RETURN_IF_ERROR(LayerNormForward(layout_.ids.ln_f, Phase::kForward, FinalOutput(), b.lnf,
                                        b.meanf, b.rstdf));
  {
    ZINF_ASSIGN_OR_RETURN(const float* wte, BeginOp(embed, Phase::kForward, false));
    be_->Gemm(false, true, N, V, C, 1.0f, b.lnf, C, wte, C, 0.0f, b.logits, V);
    ZINF_RETURN_IF_ERROR(EndOp(embed, false));
  }
  Kernel("loss", -1, Phase::kForward, [&] { be_->CrossEntropyFwd(b.logits, b.targets, b.row_loss, b.loss, N, V); });
  return Status::Ok();
}

Status Gpt::BackwardPass() {
  Buffers& b = *buf_;
  const int B = batch_, T = cfg_.seq_len, C = cfg_.n_embd, V = cfg_.vocab, L = cfg_.n_layer;
  const int N = B * T;
  const int embed = layout_.ids.embed;
  Kernel("loss", -1, Phase::kBackward, [&] { be_->CrossEntropyBwd(b.logits, b.targets, b.logits, 1.0f, N, V); });  // in place
  {
    ZINF_ASSIGN_OR_RETURN(const float* wte, BeginOp(embed, Phase::kBackward, true));
    ZINF_ASSIGN_OR_RETURN(float* g, BeginGrad(embed));
    be_->Gemm(false, false, N, C, V, 1.0f, b.logits, V, wte, C, 0.0f, b.dln, C);
    be_->Gemm(true, false, V, C, N, 1.0f, b.logits, V, b.lnf, C, 1.0f, g, C);
    ZINF_RETURN_IF_ERROR(EndOp(embed, true));
  }
  ZINF_RETURN_IF_ERROR(be_->Memset(b.dres, 0, static_cast<size_t>(N) * C * sizeof(float)));
  ZINF_RETURN_IF_ERROR(
      LayerNormBackward(layout_.ids.ln_f, b.dln, FinalOutput(), b.meanf, b.rstdf, b.dres));
  const int segs = num_segments();
  for (int s = segs - 1; s >= 0; --s) {
    const int first = s * seg_len_, last = std::min(L, first + seg_len_);
    if (s < segs - 1) {
      ZINF_RETURN_IF_ERROR(store_->Load(first, b.seg_in));
      for (int l = first; l < last; ++l) {
        const int slot = l - first;
        const float* x = slot == 0 ? b.seg_in : b.slots[slot - 1].out;
        ZINF_RETURN_IF_ERROR(BlockForward(l, x, b.slots[slot], Phase::kRecompute));
      }
    }
    for (int l = last - 1; l >= first; --l) {
      const int slot = l - first;
      const float* x = slot == 0 ? b.seg_in : b.slots[slot - 1].out;
      ZINF_RETURN_IF_ERROR(BlockBackward(l, x, b.slots[slot]));
    }
  }
  {
    ZINF_RETURN_IF_ERROR(BeginOp(embed, Phase::kBackward, true).status());
    ZINF_ASSIGN_OR_RETURN(float* g, BeginGrad(embed));
    be_->EmbeddingBwd(b.dres, b.tokens, g, g + static_cast<size_t>(V) * C, B, T, C);
    ZINF_RETURN_IF_ERROR(EndOp(embed, true));
  }
  return Status::Ok();
}

Result<const float*> Gpt::BeginOp(int group, Phase phase, bool grad) {
  if (cursor_ >= ops_->size()) {
    return Internal(fmt::format("Gpt: op beyond the schedule ({} ops) for group {}",
                                ops_->size(), group));
  }
  const GroupOp& op = (*ops_)[cursor_];
  if (op.group != group || op.phase != phase || op.grad != grad) {
    return Internal(fmt::format("Gpt: op {} is {} group {} but the schedule says {} group {}",
                                cursor_, PhaseName(phase), group, PhaseName(op.phase), op.group));
  }
  prov_->OnOpBegin(static_cast<int>(cursor_));
  ++cursor_;
  return prov_->Acquire(group);
}

Result<float*> Gpt::BeginGrad(int group) { return prov_->AcquireGrad(group); }

Status Gpt::EndOp(int group, bool grad) {
  if (grad) ZINF_RETURN_IF_ERROR(prov_->ReleaseGrad(group));
  return prov_->Release(group);
}

}  // namespace zinf
