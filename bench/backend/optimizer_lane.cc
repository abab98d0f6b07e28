// The NVMe lane's optimizer traffic against the profile's lane curves, side by side.
//
// zrun's optimizer step with states on NVMe reads each parameter group's arrays (params,
// grads, m, v: one extent each in the rank's swap file, NvmeStore, CRC-32C checked) as one
// batch, runs Adam, and writes params, m and v back as another batch, on one lane thread, group
// after group. The profile's lane curves time a read of B bytes then a write of B bytes at
// one offset of a plain file (TimeLanePair). This bench runs both on this machine in
// alternating rounds, on the same store settings, and prints their rates by bytes moved:
//
//   build/bench/backend/optimizer_lane DIR [GROUP_ELEMS] [BLOCK_KIB] [DEPTH] [ROUNDS] [GROUPS]
//     defaults: 1050624 (cpu-medium's mlp.fc shard at one rank), 4096, 4, 6, 8
//     (ZINF_OPTIMIZER_LANE_EACH=1 prints every group's batch rates; ZINF_OPTIMIZER_LANE_DATA=
//     unique (default), const or probe: what the writes carry, see Fill; ZINF_OPTIMIZER_LANE_PRELUDE=1:
//     every other round's pairs right after the probe's smaller lane sizes)
//
// "batch" is zrun's pattern over GROUPS groups (4 arrays read, 3 written); "pair" is the curve's,
// one read then one write of the batch's read bytes. Run on a quiet machine.
//
// On the 2-core VM (2026-12-07, cpu-medium's mlp.fc group, block 4 MiB, depth 4 and 32, eight
// runs of 2-6 rounds): batch / pair 0.95-1.22 reading and 1.13-1.31 writing, steady over 24
// groups in a row, while the drive itself moved between 1.2 and 1.6 GB/s reading from one run
// to the next. zrun's batches are no slower than the pairs the curves are made of: beside a
// medium-allnvme-r1 run in the same minutes the bench read 1.36-1.42 GB/s and zrun's groups
// 1.36. What the writes carry made no difference: six runs alternating unique, probe-pattern
// and constant data read 1.46, 2.11, 2.19 then 2.11, 1.32, 1.33 GB/s in pairs; the drive
// switched between about 1.3 and 2.1 GB/s within the minute (docs/performance-model.md, the
// seventeenth session). The draw was the buffers', not the drive's: a staging buffer on 4 KiB
// pages reads at a rate set by how contiguous its pages happen to be (1.28-2.13 GB/s for four
// buffers in one process, each steady), and since PinnedHostPool puts pools of 2 MiB or more
// on transparent huge pages they read 2.1-2.5 (the eighteenth session).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "executor/storage/lane_pair.h"
#include "executor/storage/nvme_store.h"
#include "executor/storage/pinned_host_pool.h"
#include "executor/storage/store_factory.h"
#include "planner/profile/timing.h"  // Median

namespace zinf {
namespace {

double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// What the writes carry (ZINF_OPTIMIZER_LANE_DATA), filled untimed before every write: "unique"
// (default) a fresh xorshift sequence each time, like zrun's states; "const" one byte value;
// "probe" the NVMe probe's pattern (the same 64-bit sequence in every transfer).
void Fill(void* p, uint64_t bytes, const std::string& mode, uint64_t seed) {
  uint64_t* w = static_cast<uint64_t*>(p);
  const uint64_t n = bytes / 8;
  if (mode == "const") {
    std::memset(p, 7, bytes);
  } else if (mode == "probe") {
    for (uint64_t i = 0; i < n; ++i) w[i] = i * 0x9e3779b97f4a7c15ull + 1;
  } else {
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;
    for (uint64_t i = 0; i < n; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      w[i] = x;
    }
  }
}

int Fail(const Status& s) {
  std::fprintf(stderr, "optimizer_lane: %s\n", s.ToString().c_str());
  return 1;
}

int Run(const std::string& dir, uint64_t elems, uint64_t block, uint32_t depth, int rounds, int groups) {
  constexpr int kRead = 4, kWrite = 3;
  const bool each = std::getenv("ZINF_OPTIMIZER_LANE_EACH") != nullptr;
  const char* data_env = std::getenv("ZINF_OPTIMIZER_LANE_DATA");
  const std::string data = data_env ? data_env : "unique";
  if (data != "unique" && data != "const" && data != "probe") {
    std::fprintf(stderr, "optimizer_lane: ZINF_OPTIMIZER_LANE_DATA '%s': unique, const or probe\n", data.c_str());
    return 2;
  }
  uint64_t seed = 1;
  // ZINF_OPTIMIZER_LANE_PRELUDE=1: every other round's pairs come right after the NVMe probe's
  // smaller lane points (64 KiB .. 4 MiB pairs, 32 MiB each way a size, untimed), as its
  // 16 MiB point does in MeasureLane; their rates are reported apart.
  const bool prelude = std::getenv("ZINF_OPTIMIZER_LANE_PRELUDE") != nullptr;
  const uint64_t bytes = elems * 4, padded = (bytes + 4095) / 4096 * 4096;
  auto pool = PinnedHostPool::Create(3 * kRead * padded + (uint64_t{4} << 20), /*lock=*/true);
  if (!pool.ok()) return Fail(pool.status());
  std::vector<PinnedBuffer> bufs;
  for (int a = 0; a < kRead; ++a) {
    auto b = (*pool)->AllocBuffer(padded);
    if (!b.ok()) return Fail(b.status());
    bufs.push_back(std::move(*b));
  }
  auto rb = (*pool)->AllocBuffer(kRead * padded), wb = (*pool)->AllocBuffer(kRead * padded);
  if (!rb.ok() || !wb.ok()) return Fail(rb.ok() ? wb.status() : rb.status());

  NvmeStoreOptions no;
  no.dir = dir;
  no.rank = 90;  // beside any zrun rank's swap file
  no.io.block_size_bytes = block;
  no.io.queue_depth = depth;
  auto store = NvmeStore::Create(no, pool->get());
  if (!store.ok()) return Fail(store.status());
  NvmeStore& ns = **store;
  std::vector<std::string> names;
  for (int g = 0; g < groups; ++g)
    for (int a = 0; a < kRead; ++a) {
      names.push_back(fmt::format("g{}.a{}", g, a));
      if (auto e = ns.Allocate(names.back(), bytes); !e.ok()) return Fail(e.status());
      Fill(bufs[static_cast<size_t>(a)].data(), padded, data, seed++);
      if (Status s = ns.Write(names.back(), bufs[static_cast<size_t>(a)].data()); !s.ok()) return Fail(s);
    }

  StorageOptions so;
  so.block_size_bytes = block;
  so.queue_depth = depth;
  const std::string path = dir + "/zinf-optimizer-lane.dat";
  const uint64_t file = static_cast<uint64_t>(groups) * kRead * padded;
  auto os = OpenStore(path, so, StoreBackend::kAuto, pool->get(), /*truncate=*/true);
  if (!os.ok()) return Fail(os.status());
  Storage& st = *os->store;
  for (uint64_t off = 0; off + kRead * padded <= file; off += kRead * padded) {
    Fill(wb->data(), kRead * padded, data, seed++);
    if (Status s = st.Write(off, wb->data(), kRead * padded); !s.ok()) return Fail(s);
  }

  std::vector<double> batch_r, batch_w, pair_r, pair_w, prelude_r, prelude_w;
  uint64_t pair_i = 0;
  for (int r = 0; r < rounds; ++r) {
    double rs = 0, ws = 0;
    for (int g = 0; g < groups; ++g) {
      std::vector<IoTicket> t;
      double t0 = Now();
      for (int a = 0; a < kRead; ++a) {
        auto k = ns.ReadAsync(names[static_cast<size_t>(g * kRead + a)], bufs[static_cast<size_t>(a)].data());
        if (!k.ok()) return Fail(k.status());
        t.push_back(*k);
      }
      for (IoTicket k : t)
        if (Status s = ns.Wait(k); !s.ok()) return Fail(s);
      const double read_s = Now() - t0;
      rs += read_s;
      t.clear();
      for (int a : {0, 2, 3}) Fill(bufs[static_cast<size_t>(a)].data(), padded, data, seed++);  // Adam's new values
      t0 = Now();
      for (int a : {0, 2, 3}) {
        auto k = ns.WriteAsync(names[static_cast<size_t>(g * kRead + a)], bufs[static_cast<size_t>(a)].data());
        if (!k.ok()) return Fail(k.status());
        t.push_back(*k);
      }
      for (IoTicket k : t)
        if (Status s = ns.Wait(k); !s.ok()) return Fail(s);
      ws += Now() - t0;
      if (each)
        std::printf("  group %d: read %.2f GB/s, write %.2f GB/s\n", g, static_cast<double>(kRead * bytes) / read_s / 1e9,
                    static_cast<double>(kWrite * bytes) / (Now() - t0) / 1e9);
    }
    batch_r.push_back(static_cast<double>(groups * kRead * bytes) / rs);
    batch_w.push_back(static_cast<double>(groups * kWrite * bytes) / ws);
    // The curve's pattern: a read of the batch's bytes, then a write (TimeLanePair: equal
    // sizes; the read's bytes, as the simulator costs a batch's read from the curve).
    const bool after_prelude = prelude && r % 2 == 1;
    if (after_prelude) {
      for (uint64_t b : {uint64_t{64} << 10, uint64_t{256} << 10, uint64_t{1} << 20, uint64_t{4} << 20}) {
        const int n = static_cast<int>(std::max<uint64_t>(4, (uint64_t{32} << 20) / b));
        for (int j = 0; j < n; ++j)
          if (auto p = TimeLanePair(st, rb->data(), wb->data(), b, file, pair_i++); !p.ok()) return Fail(p.status());
      }
    }
    double prs = 0, pws = 0;
    for (int g = 0; g < groups; ++g) {
      Fill(wb->data(), kRead * padded, data, seed++);
      auto p = TimeLanePair(st, rb->data(), wb->data(), kRead * padded, file, pair_i++);
      if (!p.ok()) return Fail(p.status());
      prs += p->read_s;
      pws += p->write_s;
    }
    const double pr = static_cast<double>(groups * kRead * padded) / prs, pw = static_cast<double>(groups * kRead * padded) / pws;
    (after_prelude ? prelude_r : pair_r).push_back(pr);
    (after_prelude ? prelude_w : pair_w).push_back(pw);
    std::printf("round %d/%d: batch read %.2f GB/s, write %.2f GB/s; pair%s read %.2f GB/s, write %.2f GB/s\n", r + 1, rounds,
                batch_r.back() / 1e9, batch_w.back() / 1e9, after_prelude ? " (after the smaller sizes)" : "", pr / 1e9, pw / 1e9);
  }
  os->store.reset();
  std::remove(path.c_str());
  std::printf("median over %d rounds (%s, block %llu KiB, depth %u; group %llu elems, %d groups): batch read %.2f GB/s, write "
              "%.2f GB/s; pair read %.2f GB/s, write %.2f GB/s; batch / pair: read %.2f, write %.2f\n",
              rounds, ns.backend(), static_cast<unsigned long long>(block >> 10), depth, static_cast<unsigned long long>(elems),
              groups, Median(batch_r) / 1e9, Median(batch_w) / 1e9, Median(pair_r) / 1e9, Median(pair_w) / 1e9,
              Median(batch_r) / Median(pair_r), Median(batch_w) / Median(pair_w));
  if (!prelude_r.empty())
    std::printf("pairs right after the smaller sizes: read %.2f GB/s, write %.2f GB/s (median of %zu rounds): x%.2f and x%.2f the "
                "other rounds' pairs\n",
                Median(prelude_r) / 1e9, Median(prelude_w) / 1e9, prelude_r.size(), Median(prelude_r) / Median(pair_r),
                Median(prelude_w) / Median(pair_w));
  return 0;
}

}  // namespace
}  // namespace zinf

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    std::printf("usage: optimizer_lane DIR [GROUP_ELEMS] [BLOCK_KIB] [DEPTH] [ROUNDS] [GROUPS]\n"
                "  zrun's optimizer NVMe batches (4 arrays read, 3 written a group, NvmeStore) against the lane curves'\n"
                "  read/write pairs (TimeLanePair), alternating rounds; defaults 1050624 4096 4 6 8\n"
                "  (ZINF_OPTIMIZER_LANE_EACH=1: every group's batch rates too; ZINF_OPTIMIZER_LANE_DATA=unique|const|probe;\n"
                "  ZINF_OPTIMIZER_LANE_PRELUDE=1: every other round's pairs after the probe's smaller lane sizes)\n");
    return argc < 2 ? 2 : 0;
  }
  auto num = [&](int i, unsigned long long def, unsigned long long lo, unsigned long long hi) -> long long {
    if (argc <= i) return static_cast<long long>(def);
    char* end = nullptr;
    const unsigned long long v = std::strtoull(argv[i], &end, 10);
    if (end == argv[i] || *end != '\0' || v < lo || v > hi) {
      std::fprintf(stderr, "optimizer_lane: argument %d '%s' must be in %llu..%llu\n", i, argv[i], lo, hi);
      return -1;
    }
    return static_cast<long long>(v);
  };
  const long long elems = num(2, 1050624, 1024, 1ull << 26), block = num(3, 4096, 4, 65536), depth = num(4, 4, 1, 256),
                  rounds = num(5, 6, 1, 1000), groups = num(6, 8, 1, 256);
  if (elems < 0 || block < 0 || depth < 0 || rounds < 0 || groups < 0) return 2;
  return zinf::Run(argv[1], static_cast<uint64_t>(elems), static_cast<uint64_t>(block) << 10, static_cast<uint32_t>(depth),
                   static_cast<int>(rounds), static_cast<int>(groups));
}
