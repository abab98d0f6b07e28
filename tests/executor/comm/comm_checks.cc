#include "tests/executor/comm/comm_checks.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <random>

#include "executor/comm/coll_probe.h"

namespace zinf::commtest {

std::vector<float> RankData(int rank, size_t count, unsigned salt) {
  std::mt19937 rng(static_cast<unsigned>(rank) * 7919u + salt * 104729u + static_cast<unsigned>(count));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::uniform_int_distribution<int> e(-12, 12);
  std::vector<float> v(count);
  for (float& x : v) x = std::ldexp(u(rng), e(rng));
  return v;
}

namespace {

// Plain serial reference: ((x_0 + x_1) + ...) + x_{n-1}.
float RankOrderSum(const std::vector<std::vector<float>>& parts, size_t i) {
  float acc = parts[0][i];
  for (size_t q = 1; q < parts.size(); ++q) acc += parts[q][i];
  return acc;
}

Status Compare(const Comm& c, const char* what, size_t count, const float* got, const float* want, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0) {
      return Internal(fmt::format("{} rank {} of {}: {} count {}: element {} = {:.9g}, expected {:.9g} (bitwise)",
                                  c.name(), c.rank(), c.size(), what, count, i, got[i], want[i]));
    }
  }
  return Status::Ok();
}

std::vector<std::vector<float>> AllRanks(int n, size_t count, unsigned salt) {
  std::vector<std::vector<float>> v;
  for (int q = 0; q < n; ++q) v.push_back(RankData(q, count, salt));
  return v;
}

}  // namespace

Status CheckAllGather(Comm& c, size_t count, bool in_place) {
  const int n = c.size(), r = c.rank();
  auto all = AllRanks(n, count, 1);
  std::vector<float> recv(static_cast<size_t>(n) * count, -1.0f), want;
  for (auto& p : all) want.insert(want.end(), p.begin(), p.end());
  const float* send = all[static_cast<size_t>(r)].data();
  if (in_place) {
    std::memcpy(recv.data() + static_cast<size_t>(r) * count, send, count * sizeof(float));
    send = recv.data() + static_cast<size_t>(r) * count;
  }
  ZINF_RETURN_IF_ERROR(c.AllGather(send, count, recv.data()));
  return Compare(c, in_place ? "allgather(in place)" : "allgather", count, recv.data(), want.data(), want.size());
}

Status CheckAllGatherBytes(Comm& c, size_t bytes) {
  const int n = c.size();
  std::vector<unsigned char> mine(bytes), recv(bytes * static_cast<size_t>(n));
  for (size_t i = 0; i < bytes; ++i) mine[i] = static_cast<unsigned char>(c.rank() * 31 + i * 7);
  ZINF_RETURN_IF_ERROR(c.AllGatherBytes(mine.data(), bytes, recv.data()));
  for (int q = 0; q < n; ++q) {
    for (size_t i = 0; i < bytes; ++i) {
      if (recv[static_cast<size_t>(q) * bytes + i] != static_cast<unsigned char>(q * 31 + i * 7)) {
        return Internal(fmt::format("rank {}: allgather bytes {}: byte {} of rank {} wrong", c.rank(), bytes, i, q));
      }
    }
  }
  return Status::Ok();
}

Status CheckReduceScatter(Comm& c, size_t count, bool in_place) {
  const int n = c.size(), r = c.rank();
  auto all = AllRanks(n, static_cast<size_t>(n) * count, 2);
  std::vector<float> want(count), recv(count, -1.0f);
  for (size_t i = 0; i < count; ++i) want[i] = RankOrderSum(all, static_cast<size_t>(r) * count + i);
  std::vector<float> send = all[static_cast<size_t>(r)];
  float* out = in_place ? send.data() + static_cast<size_t>(r) * count : recv.data();
  ZINF_RETURN_IF_ERROR(c.ReduceScatter(send.data(), count, out));
  return Compare(c, in_place ? "reduce_scatter(in place)" : "reduce_scatter", count, out, want.data(), count);
}

Status CheckAllReduce(Comm& c, size_t count) {
  auto all = AllRanks(c.size(), count, 3);
  std::vector<float> want(count);
  for (size_t i = 0; i < count; ++i) want[i] = RankOrderSum(all, i);
  std::vector<float> data = all[static_cast<size_t>(c.rank())];
  ZINF_RETURN_IF_ERROR(c.AllReduce(data.data(), count));
  return Compare(c, "allreduce", count, data.data(), want.data(), count);
}

Status CheckBroadcast(Comm& c, size_t count, int root) {
  auto want = RankData(root, count, 4);
  std::vector<float> data = RankData(c.rank(), count, 4);
  ZINF_RETURN_IF_ERROR(c.Broadcast(data.data(), count, root));
  ZINF_RETURN_IF_ERROR(Compare(c, "broadcast", count, data.data(), want.data(), count));
  std::vector<char> bytes(count + 3, static_cast<char>(c.rank()));
  ZINF_RETURN_IF_ERROR(c.BroadcastBytes(bytes.data(), bytes.size(), root));
  for (char b : bytes) {
    if (b != static_cast<char>(root)) return Internal(fmt::format("rank {}: broadcast bytes wrong", c.rank()));
  }
  return Status::Ok();
}

Status CheckZeroCounts(Comm& c) {
  ZINF_RETURN_IF_ERROR(c.AllGather(nullptr, 0, nullptr));
  ZINF_RETURN_IF_ERROR(c.ReduceScatter(nullptr, 0, nullptr));
  ZINF_RETURN_IF_ERROR(c.AllReduce(nullptr, 0));
  ZINF_RETURN_IF_ERROR(c.Broadcast(nullptr, 0, 0));
  ZINF_RETURN_IF_ERROR(c.AllGatherBytes(nullptr, 0, nullptr));
  return c.Barrier();
}

Status CheckArgumentErrors(Comm& c) {
  float x = 0;
  Status st = c.Broadcast(&x, 1, c.size());
  if (st.code() != Code::kInvalidArgument) return Internal("broadcast with bad root: " + st.ToString());
  st = c.AllGather(nullptr, 4, &x);
  if (st.code() != Code::kInvalidArgument) return Internal("allgather null send: " + st.ToString());
  return Status::Ok();
}

Status CheckAsyncOverlap(Comm& c, size_t count) {
  const int n = c.size(), r = c.rank();
  const size_t nc = static_cast<size_t>(n) * count;
  auto ag_all = AllRanks(n, count, 11), rs_all = AllRanks(n, nc, 12), ar_all = AllRanks(n, count, 13);
  std::vector<float> ag_recv(nc), rs_recv(count), ar = ar_all[static_cast<size_t>(r)];
  std::vector<float> bc = RankData(r, count, 14);
  CommHandle h1 = c.AllGatherAsync(ag_all[static_cast<size_t>(r)].data(), count, ag_recv.data());
  CommHandle h2 = c.ReduceScatterAsync(rs_all[static_cast<size_t>(r)].data(), count, rs_recv.data());
  CommHandle h3 = c.AllReduceAsync(ar.data(), count);
  CommHandle h4 = c.BarrierAsync();
  CommHandle h5 = c.BroadcastAsync(bc.data(), count, n - 1);
  volatile double sink = 0;  // "compute" overlapping the communication
  for (int i = 0; i < 200000; ++i) sink = sink + std::sqrt(static_cast<double>(i));
  ZINF_RETURN_IF_ERROR(h5.Wait());
  ZINF_RETURN_IF_ERROR(h4.Wait());
  ZINF_RETURN_IF_ERROR(h3.Wait());
  ZINF_RETURN_IF_ERROR(h2.Wait());
  ZINF_RETURN_IF_ERROR(h1.Wait());
  if (!h1.Test() || !h5.Test()) return Internal("handle not done after Wait");
  std::vector<float> want;
  for (auto& p : ag_all) want.insert(want.end(), p.begin(), p.end());
  ZINF_RETURN_IF_ERROR(Compare(c, "async allgather", count, ag_recv.data(), want.data(), nc));
  want.assign(count, 0);
  for (size_t i = 0; i < count; ++i) want[i] = RankOrderSum(rs_all, static_cast<size_t>(r) * count + i);
  ZINF_RETURN_IF_ERROR(Compare(c, "async reduce_scatter", count, rs_recv.data(), want.data(), count));
  for (size_t i = 0; i < count; ++i) want[i] = RankOrderSum(ar_all, i);
  ZINF_RETURN_IF_ERROR(Compare(c, "async allreduce", count, ar.data(), want.data(), count));
  want = RankData(n - 1, count, 14);
  return Compare(c, "async broadcast", count, bc.data(), want.data(), count);
}

Status CheckProbe(Comm& c) {
  for (CollOp op : {CollOp::kAllGather, CollOp::kReduceScatter, CollOp::kAllReduce, CollOp::kBroadcast}) {
    ZINF_ASSIGN_OR_RETURN(CollMeasurement m, MeasureCollective(c, op, 1 << 20, 3));
    if (!(m.time_s > 0) || !(m.algbw_gbps > 0)) return Internal(fmt::format("probe {}: zero time", CollOpName(op)));
    double f = BusBandwidthFactor(op, c.size());
    if (std::abs(m.busbw_gbps - m.algbw_gbps * f) > 1e-9 * m.algbw_gbps) return Internal("probe busbw factor");
    if (m.bytes == 0 || m.bytes > (1u << 20) || m.ranks != c.size()) return Internal("probe bytes/ranks");
    if (std::abs(m.algbw_gbps - static_cast<double>(m.bytes) / m.time_s / 1e9) > 1e-9 * m.algbw_gbps) {
      return Internal("probe algbw");
    }
    // Every rank reports the same (max over ranks) time.
    std::vector<double> times(static_cast<size_t>(c.size()));
    ZINF_RETURN_IF_ERROR(c.AllGatherBytes(&m.time_s, sizeof(double), times.data()));
    for (double t : times) {
      if (t != m.time_s) return Internal("probe time differs between ranks");
    }
  }
  if (MeasureCollective(c, CollOp::kBarrier, 1024, 1).ok()) return Internal("probe barrier accepted");
  return Status::Ok();
}

Status RunAllChecks(Comm& c) {
  for (size_t count : {1ul, 2ul, 3ul, 7ul, 31ul, 1000ul, 4097ul, 65537ul}) {
    ZINF_RETURN_IF_ERROR(CheckAllGather(c, count, false));
    ZINF_RETURN_IF_ERROR(CheckAllGather(c, count, true));
    ZINF_RETURN_IF_ERROR(CheckReduceScatter(c, count, false));
    ZINF_RETURN_IF_ERROR(CheckReduceScatter(c, count, true));
    ZINF_RETURN_IF_ERROR(CheckAllReduce(c, count));
    ZINF_RETURN_IF_ERROR(CheckBroadcast(c, count, static_cast<int>(count % static_cast<size_t>(c.size()))));
  }
  for (int root = 0; root < c.size(); ++root) ZINF_RETURN_IF_ERROR(CheckBroadcast(c, 5, root));
  for (size_t b : {1ul, 3ul, 8ul, 1001ul}) ZINF_RETURN_IF_ERROR(CheckAllGatherBytes(c, b));
  ZINF_RETURN_IF_ERROR(CheckZeroCounts(c));
  ZINF_RETURN_IF_ERROR(CheckArgumentErrors(c));
  ZINF_RETURN_IF_ERROR(CheckAsyncOverlap(c, 1));
  ZINF_RETURN_IF_ERROR(CheckAsyncOverlap(c, 10007));
  return c.Barrier();
}

}  // namespace zinf::commtest
