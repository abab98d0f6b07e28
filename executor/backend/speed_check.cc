#include "executor/backend/speed_check.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

namespace zinf {

std::vector<SpeedCheck::Linear> SpeedCheck::PlanLinears(const Plan& plan, const HwProfile& hw) {
  const ModelSpec& m = plan.model;
  const PlanKnobs& k = plan.knobs;
  const int64_t tokens = k.micro_batch * k.seq_len, tiles = std::max<int64_t>(1, k.tile_factor);
  const int64_t h = m.hidden, f = m.ffn_hidden, kv = m.n_kv_head * m.head_dim();
  const int64_t fc = m.mlp == "swiglu" ? 2 * f : f;
  std::vector<Linear> out;
  for (auto [in, outs] : {std::pair<int64_t, int64_t>{h, h + 2 * kv}, {h, h}, {h, fc}, {f, h}}) {
    // Big models' shapes are cut to kMaxCheckElems a matrix (columns, then rows): the check
    // stays small beside the plan's own memory and quick beside a step, and the profile's
    // curves cost any shape.
    Linear l;
    l.k = static_cast<int>(in);
    l.n = static_cast<int>(std::min<int64_t>(std::max<int64_t>(1, outs / tiles), std::max<int64_t>(64, kMaxCheckElems / in)));
    l.m = static_cast<int>(std::min<int64_t>(tokens, std::max<int64_t>(64, kMaxCheckElems / std::max<int64_t>(in, l.n))));
    const double flop = 2.0 * l.m * l.k * l.n, t = static_cast<double>(l.m);
    const double fwd = hw.GemmRate(flop, t), bwd = hw.GemmBwdRate(flop, t);
    if (fwd <= 0 || bwd <= 0) return {};
    l.expected_s = flop / fwd + 2.0 * flop / bwd;
    out.push_back(l);
  }
  return out;
}

Result<std::unique_ptr<SpeedCheck>> SpeedCheck::Create(Backend* be, const Plan& plan, const HwProfile& hw) {
  if (be == nullptr || be->name() != "cpu" || hw.backend != "cpu") return std::unique_ptr<SpeedCheck>();
  std::vector<Linear> linears = PlanLinears(plan, hw);
  if (linears.empty() || linears.front().m <= 0) return std::unique_ptr<SpeedCheck>();
  auto c = std::unique_ptr<SpeedCheck>(new SpeedCheck());
  c->be_ = be;
  size_t mk = 0, nk = 0, mn = 0;
  for (const Linear& l : linears) {
    mk = std::max(mk, static_cast<size_t>(l.m) * l.k);
    nk = std::max(nk, static_cast<size_t>(l.n) * l.k);
    mn = std::max(mn, static_cast<size_t>(l.m) * l.n);
  }
  // The CPU backend's GEMM runs on host memory; inputs of small values keep the sums finite.
  c->x_.assign(mk, 0.01f);
  c->gx_.assign(mk, 0.f);
  c->w_.assign(nk, 0.02f);
  c->gw_.assign(nk, 0.f);
  c->y_.assign(mn, 0.f);
  c->dy_.assign(mn, 0.03f);
  c->linears_ = std::move(linears);
  if (hw.host_mem_bw > 0) {
    c->mem_bw_ = hw.host_mem_bw;
    c->mem_src_.assign(kMemoryCheckBytes, 1);
    c->mem_dst_.assign(kMemoryCheckBytes, 0);
  }
  // Untimed, once each: the first calls of a shape pay for its first touches.
  for (size_t i = 0; i < c->linears_.size(); ++i) c->Pass(i);
  return c;
}

double SpeedCheck::Pass(size_t i) {
  const Linear& l = linears_[i];
  const int M = l.m, K = l.k, N = l.n;
  // As the executor calls them (and the GEMM probe times them): the forward adds to its
  // bias-initialised output and dW to the gradient buffer (beta 1); dX overwrites.
  be_->Gemm(false, true, M, N, K, 1.f, x_.data(), K, w_.data(), K, 1.f, y_.data(), N);
  be_->Gemm(true, false, N, K, M, 1.f, dy_.data(), N, x_.data(), K, 1.f, gw_.data(), K);
  be_->Gemm(false, false, M, K, N, 1.f, dy_.data(), N, w_.data(), K, 0.f, gx_.data(), K);
  return l.expected_s;
}

double SpeedCheck::MemoryCopyPass(void* dst, const void* src, size_t bytes, int threads) {
  threads = std::max(1, threads);
  const size_t chunk = (bytes + static_cast<size_t>(threads) - 1) / static_cast<size_t>(threads);
  auto copy = [=](int t) {
    const size_t b = std::min(bytes, static_cast<size_t>(t) * chunk), e = std::min(bytes, b + chunk);
    if (e > b) std::memcpy(static_cast<char*>(dst) + b, static_cast<const char*>(src) + b, e - b);
  };
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> ts;
  for (int t = 1; t < threads; ++t) ts.emplace_back(copy, t);
  copy(0);
  for (auto& t : ts) t.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void SpeedCheck::Run(double min_s) {
  double expected = 0, measured = 0;
  auto round = [&] {
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < linears_.size(); ++i) expected += Pass(i);
    measured += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  if (rounds_ == 0) {
    do {
      round();
      ++rounds_;
    } while (measured < min_s);
  } else {
    for (int r = 0; r < rounds_; ++r) round();
  }
  totals_.Add(expected, measured);
  if (!mem_src_.empty()) {
    const double t = MemoryCopyPass(mem_dst_.data(), mem_src_.data(), mem_src_.size(), be_->threads());
    memory_totals_.Add(2.0 * static_cast<double>(mem_src_.size()) / mem_bw_, t);  // read + write bytes
  }
}

}  // namespace zinf
