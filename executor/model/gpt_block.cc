// One transformer block (pre-LN) forward / backward, and the tiled linear and
// LayerNorm ops that fetch their parameter groups through the provider.
#include <cstddef>

#include "executor/model/gpt.h"
#include "executor/model/gpt_buffers.h"

namespace zinf {

Status Gpt::LinearForward(const std::vector<int>& tiles, Phase phase, const float* x, int in,
                          int out, const float* residual, float* y) {
  const int N = batch_ * cfg_.seq_len;
  const int rows = out / static_cast<int>(tiles.size());
  for (size_t j = 0; j < tiles.size(); ++j) {
    // Tile j: y[:, j*rows : (j+1)*rows] = (residual + b_j) + x W_j^T, W_j: [rows, in].
    ZINF_ASSIGN_OR_RETURN(const float* p, BeginOp(tiles[j], phase, false));
    float* yj = y + j * rows;
    be_->BiasInit(yj, out, p + static_cast<size_t>(rows) * in,
                  residual == nullptr ? nullptr : residual + j * rows, out, N, rows);
    be_->Gemm(false, true, N, rows, in, 1.0f, x, in, p, in, 1.0f, yj, out);
    ZINF_RETURN_IF_ERROR(EndOp(tiles[j], false));
  }
  return Status::Ok();
}

Status Gpt::LinearBackward(const std::vector<int>& tiles, const float* dy, const float* x,
                           int in, int out, float* dx) {
  const int N = batch_ * cfg_.seq_len;
  const int rows = out / static_cast<int>(tiles.size());
  for (size_t j = 0; j < tiles.size(); ++j) {
    ZINF_ASSIGN_OR_RETURN(const float* p, BeginOp(tiles[j], Phase::kBackward, true));
    ZINF_ASSIGN_OR_RETURN(float* g, BeginGrad(tiles[j]));
    const float* dyj = dy + j * rows;
    // dW_j += dy_j^T x; db_j += colsum(dy_j); dx (+)= dy_j W_j.
    be_->Gemm(true, false, rows, in, N, 1.0f, dyj, out, x, in, 1.0f, g, in);
    be_->BiasGrad(dyj, g + static_cast<size_t>(rows) * in, N, rows, out);
    be_->Gemm(false, false, N, in, rows, 1.0f, dyj, out, p, in, j == 0 ? 0.0f : 1.0f, dx, in);
    ZINF_RETURN_IF_ERROR(EndOp(tiles[j], true));
  }
  return Status::Ok();
}

Status Gpt::LayerNormForward(int group, Phase phase, const float* x, float* y, float* mean,
                             float* rstd) {
  const int N = batch_ * cfg_.seq_len, C = cfg_.n_embd;
  ZINF_ASSIGN_OR_RETURN(const float* p, BeginOp(group, phase, false));
  be_->LayerNormFwd(x, p, p + C, y, mean, rstd, N, C, cfg_.ln_eps);
  return EndOp(group, false);
}

Status Gpt::LayerNormBackward(int group, const float* dy, const float* x, const float* mean,
                              const float* rstd, float* dx) {
  const int N = batch_ * cfg_.seq_len, C = cfg_.n_embd;
  ZINF_ASSIGN_OR_RETURN(const float* p, BeginOp(group, Phase::kBackward, true));
  ZINF_ASSIGN_OR_RETURN(float* g, BeginGrad(group));
  be_->LayerNormBwd(dy, x, p, mean, rstd, dx, g, g + C, N, C);
  return EndOp(group, true);
}

Status Gpt::BlockForward(int layer, const float* x, const LayerActs& a, Phase phase) {
  const GptGroupIds::Layer& id = layout_.ids.layers[layer];
  const int B = batch_, T = cfg_.seq_len, C = cfg_.n_embd, H = cfg_.n_head;
  const size_t NC = static_cast<size_t>(B) * T * C;
  // x2 = x + proj(attn(qkv(ln1(x)))), the residual add fused into the proj.
  ZINF_RETURN_IF_ERROR(LayerNormForward(id.ln1, phase, x, a.ln1, a.mean1, a.rstd1));
  ZINF_RETURN_IF_ERROR(LinearForward(id.qkv, phase, a.ln1, C, 3 * C, nullptr, a.qkv));
  Kernel("attn.core", layer, phase, [&] { be_->AttentionFwd(a.qkv, a.att, a.probs, B, T, C, H); });
  ZINF_RETURN_IF_ERROR(LinearForward(id.attn_proj, phase, a.att, C, C, x, a.x2));
  // out = x2 + mlp.proj(gelu(mlp.fc(ln2(x2))))
  ZINF_RETURN_IF_ERROR(LayerNormForward(id.ln2, phase, a.x2, a.ln2, a.mean2, a.rstd2));
  ZINF_RETURN_IF_ERROR(LinearForward(id.fc, phase, a.ln2, C, 4 * C, nullptr, a.fc));
  Kernel("mlp.gelu", layer, phase, [&] { be_->GeluFwd(a.fc, a.gl, 4 * NC); });
  ZINF_RETURN_IF_ERROR(LinearForward(id.mlp_proj, phase, a.gl, 4 * C, C, a.x2, a.out));
  return Status::Ok();
}

// On entry buf_->dres = dL/d(out); on exit dL/dx.
Status Gpt::BlockBackward(int layer, const float* x, const LayerActs& a) {
  const GptGroupIds::Layer& id = layout_.ids.layers[layer];
  Buffers& b = *buf_;
  const int B = batch_, T = cfg_.seq_len, C = cfg_.n_embd, H = cfg_.n_head;
  const size_t NC = static_cast<size_t>(B) * T * C;
  // MLP branch; the residual passes dres through unchanged.
  ZINF_RETURN_IF_ERROR(LinearBackward(id.mlp_proj, b.dres, a.gl, 4 * C, C, b.dfc));
  Kernel("mlp.gelu", layer, Phase::kBackward, [&] { be_->GeluBwd(b.dfc, a.fc, b.dfc, 4 * NC); });
  ZINF_RETURN_IF_ERROR(LinearBackward(id.fc, b.dfc, a.ln2, C, 4 * C, b.dln));
  ZINF_RETURN_IF_ERROR(LayerNormBackward(id.ln2, b.dln, a.x2, a.mean2, a.rstd2, b.dres));
  // Attention branch.
  ZINF_RETURN_IF_ERROR(LinearBackward(id.attn_proj, b.dres, a.att, C, C, b.datt));
  Kernel("attn.core", layer, Phase::kBackward,
         [&] { be_->AttentionBwd(b.datt, a.qkv, a.probs, b.dqkv, b.attn_ws, B, T, C, H); });
  ZINF_RETURN_IF_ERROR(LinearBackward(id.qkv, b.dqkv, a.ln1, C, 3 * C, b.dln));
  return LayerNormBackward(id.ln1, b.dln, x, a.mean1, a.rstd1, b.dres);
}

}  // namespace zinf
