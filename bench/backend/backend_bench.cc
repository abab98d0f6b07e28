// Micro-benchmarks of the CPU backend kernels and one GPT training step.
// Run: build/bench/backend/backend_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "executor/backend/cpu/cpu_backend.h"
#include "executor/model/gpt.h"

namespace zinf {
namespace {

std::unique_ptr<Backend> Be() { return std::move(MakeCpuBackend(size_t{4} << 30, 0)).value(); }

float* Fill(Backend* be, size_t n, std::vector<DeviceBuffer>* keep, float scale = 1.0f) {
  keep->push_back(std::move(be->AllocBuffer(n * 4)).value());
  float* p = keep->back().as<float>();
  std::mt19937 rng(static_cast<unsigned>(n));
  std::uniform_real_distribution<float> d(-scale, scale);
  for (size_t i = 0; i < n; ++i) p[i] = d(rng);
  return p;
}

void BM_Gemm(benchmark::State& st) {
  auto be = Be();
  const int m = st.range(0), n = st.range(1), k = st.range(2);
  std::vector<DeviceBuffer> keep;
  float* a = Fill(be.get(), size_t(m) * k, &keep);
  float* b = Fill(be.get(), size_t(n) * k, &keep);
  float* c = Fill(be.get(), size_t(m) * n, &keep);
  for (auto _ : st) be->Gemm(false, true, m, n, k, 1.0f, a, k, b, k, 0.0f, c, n);
  st.counters["GFLOP/s"] = benchmark::Counter(2.0 * m * n * k * st.iterations() / 1e9,
                                              benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Gemm)->Args({1024, 768, 768})->Args({1024, 3072, 768})->Args({1024, 768, 3072})
    ->Unit(benchmark::kMillisecond);

void BM_Attention(benchmark::State& st) {
  auto be = Be();
  const int B = 4, T = st.range(0), C = 768, H = 12;
  std::vector<DeviceBuffer> keep;
  float* qkv = Fill(be.get(), size_t(B) * T * 3 * C, &keep);
  float* out = Fill(be.get(), size_t(B) * T * C, &keep);
  float* probs = Fill(be.get(), size_t(B) * H * T * T, &keep);
  float* dq = Fill(be.get(), size_t(B) * T * 3 * C, &keep);
  float* ws = Fill(be.get(), be->AttentionWorkspaceBytes(B, T, C, H) / 4, &keep);
  for (auto _ : st) {
    be->AttentionFwd(qkv, out, probs, B, T, C, H);
    be->AttentionBwd(out, qkv, probs, dq, ws, B, T, C, H);
  }
}
BENCHMARK(BM_Attention)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);

void BM_Elementwise(benchmark::State& st) {
  auto be = Be();
  const int rows = 4096, cols = 768;
  std::vector<DeviceBuffer> keep;
  float* x = Fill(be.get(), size_t(rows) * cols * 4, &keep);
  float* y = Fill(be.get(), size_t(rows) * cols * 4, &keep);
  float* g = Fill(be.get(), cols, &keep);
  float* b = Fill(be.get(), cols, &keep);
  float* mean = Fill(be.get(), rows, &keep);
  float* rstd = Fill(be.get(), rows, &keep);
  for (auto _ : st) {
    be->LayerNormFwd(x, g, b, y, mean, rstd, rows, cols, 1e-5f);
    be->LayerNormBwd(y, x, g, mean, rstd, x, g, b, rows, cols);
    be->GeluFwd(x, y, size_t(rows) * cols * 4);
    be->GeluBwd(y, x, y, size_t(rows) * cols * 4);
  }
}
BENCHMARK(BM_Elementwise)->Unit(benchmark::kMillisecond);

// One GPT training step; args: n_layer, n_embd, seq_len, batch.
void BM_GptStep(benchmark::State& st) {
  auto be = Be();
  GptConfig c;
  c.vocab = 8192;
  c.n_layer = st.range(0);
  c.n_embd = st.range(1);
  c.n_head = c.n_embd / 64;
  c.seq_len = st.range(2);
  const int B = st.range(3);
  auto model = std::move(Gpt::Create(c, be.get(), nullptr, 0)).value();
  auto p = std::move(ResidentParamProvider::Create(be.get(), model->groups())).value();
  (void)p->Init(1);
  std::vector<int32_t> tok(size_t(B) * c.seq_len), tgt(tok.size());
  for (size_t i = 0; i < tok.size(); ++i) tok[i] = (i * 31) % c.vocab, tgt[i] = (i * 17) % c.vocab;
  for (auto _ : st) benchmark::DoNotOptimize(model->ForwardBackward(*p, tok.data(), tgt.data(), B));
  const double tokens = double(B) * c.seq_len;
  const double flops = 6.0 * tokens * model->total_param_numel() +
                       6.0 * 2 * c.n_layer * double(B) * c.seq_len * c.seq_len * c.n_embd;
  st.counters["tok/s"] = benchmark::Counter(tokens * st.iterations(), benchmark::Counter::kIsRate);
  st.counters["GFLOP/s"] = benchmark::Counter(flops * st.iterations() / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_GptStep)->Args({4, 256, 256, 4})->Args({2, 768, 256, 2})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace zinf

BENCHMARK_MAIN();
