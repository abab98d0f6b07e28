// Round trips of checksummed random data through every Storage backend, with many
// concurrent requests over queue depths 1..32 and block sizes 4K..1M.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <tuple>

#include "executor/storage/crc32c.h"
#include "executor/storage/mem_store.h"
#include "executor/storage/pinned_host_pool.h"
#include "executor/storage/posix_store.h"
#include "executor/storage/uring_store.h"
#include "tests/executor/storage/storage_test_util.h"

namespace zinf {
namespace {

using testing::TempDir;

enum class Kind { kMem, kPosix, kPosixDirect, kUring, kUringFixed };

const char* KindName(Kind k) {
  switch (k) {
    case Kind::kMem: return "mem";
    case Kind::kPosix: return "posix";
    case Kind::kPosixDirect: return "posix_direct";
    case Kind::kUring: return "uring";
    case Kind::kUringFixed: return "uring_fixed";
  }
  return "?";
}

Result<std::unique_ptr<Storage>> MakeStore(Kind k, const std::string& path, const StorageOptions& o,
                                           const PinnedHostPool* pool) {
  switch (k) {
    case Kind::kMem: {
      ZINF_ASSIGN_OR_RETURN(auto s, MemStore::Create(path, o, UINT64_MAX, 4096));
      return std::unique_ptr<Storage>(std::move(s));
    }
    case Kind::kPosix:
    case Kind::kPosixDirect: {
      ZINF_ASSIGN_OR_RETURN(auto s, PosixStore::Open(path, o, k == Kind::kPosixDirect));
      return std::unique_ptr<Storage>(std::move(s));
    }
    case Kind::kUring:
    case Kind::kUringFixed: {
      ZINF_ASSIGN_OR_RETURN(auto s, UringStore::Open(path, o, k == Kind::kUringFixed ? pool : nullptr));
      return std::unique_ptr<Storage>(std::move(s));
    }
  }
  return Internal("kind");
}

// Skips the test when io_uring (or O_DIRECT) is not available here.
#define MAKE_STORE_OR_SKIP(var, kind, path, opts, pool)                                         \
  auto var##_r = MakeStore(kind, path, opts, pool);                                            \
  if (!var##_r.ok() && var##_r.status().code() == Code::kUnsupported) {                        \
    GTEST_SKIP() << "backend unavailable here: " << var##_r.status().ToString();               \
  }                                                                                            \
  ASSERT_TRUE(var##_r.ok()) << var##_r.status().ToString();                                    \
  std::unique_ptr<Storage> var = std::move(var##_r).value()

using Param = std::tuple<Kind, uint32_t, uint64_t>;

class RoundTrip : public ::testing::TestWithParam<Param> {};

TEST_P(RoundTrip, ConcurrentRequestsChecksummed) {
  auto [kind, qd, bs] = GetParam();
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  auto pool = PinnedHostPool::Create(16u << 20, /*lock=*/true);
  ASSERT_TRUE(pool.ok()) << pool.status().ToString();
  StorageOptions opts{qd, bs};
  MAKE_STORE_OR_SKIP(store, kind, dir.file("rt.swap"), opts, pool->get());

  // 24 requests of 1..48 pages at disjoint offsets, all in flight at once.
  std::mt19937 rng(qd * 1000003u + static_cast<uint32_t>(bs));
  constexpr int kReqs = 24;
  std::vector<uint64_t> off(kReqs), len(kReqs);
  uint64_t cursor = 0, total = 0;
  for (int i = 0; i < kReqs; ++i) {
    len[i] = 4096ull * (1 + rng() % 48);
    cursor += 4096ull * (rng() % 3);  // holes between extents
    off[i] = cursor;
    cursor += len[i];
    total += len[i];
  }
  auto wbuf_r = (*pool)->Alloc(total);
  auto rbuf_r = (*pool)->Alloc(total);
  ASSERT_TRUE(wbuf_r.ok() && rbuf_r.ok());
  char* wbuf = static_cast<char*>(*wbuf_r);
  char* rbuf = static_cast<char*>(*rbuf_r);
  testing::FillRandom(wbuf, total, 42 + qd);
  std::memset(rbuf, 0, total);
  std::vector<uint32_t> crc(kReqs);
  std::vector<char*> wp(kReqs), rp(kReqs);
  for (uint64_t i = 0, pos = 0; i < kReqs; pos += len[i], ++i) {
    wp[i] = wbuf + pos;
    rp[i] = rbuf + pos;
    crc[i] = Crc32c(wp[i], len[i]);
  }

  std::vector<IoTicket> t(kReqs);
  for (int i = 0; i < kReqs; ++i) {
    auto r = store->SubmitWrite(off[i], wp[i], len[i]);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    t[i] = *r;
  }
  EXPECT_LE(store->inflight_chunks(), qd);
  for (int i = kReqs; i-- > 0;) ASSERT_TRUE(store->Wait(t[i]).ok()) << KindName(kind);
  ASSERT_TRUE(store->Flush().ok());

  for (int i = 0; i < kReqs; ++i) {
    auto r = store->SubmitRead(off[i], rp[i], len[i]);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    t[i] = *r;
  }
  std::vector<int> order(kReqs);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  for (int i : order) {
    Status st = store->Wait(t[i]);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(Crc32c(rp[i], len[i]), crc[i]) << "request " << i << " on " << KindName(kind);
  }
  EXPECT_EQ(0, std::memcmp(wbuf, rbuf, total));
  EXPECT_EQ(store->outstanding_requests(), 0u);
  EXPECT_EQ(store->inflight_chunks(), 0u);
  const IoStats& s = store->stats();
  EXPECT_LE(s.max_inflight, qd);
  EXPECT_GE(s.max_inflight, std::min<uint64_t>(qd, 2));  // requests really overlapped
  EXPECT_EQ(s.bytes_written, total);
  EXPECT_EQ(s.bytes_read, total);
  if (kind == Kind::kUringFixed) {
    auto* u = static_cast<UringStore*>(store.get());
    if (u->fixed_buffers()) {
      EXPECT_EQ(u->fixed_buffer_ops(), s.chunks);
    } else {
      std::printf("fixed buffers not registered: %s\n", u->registration_note().c_str());
    }
  }
}

std::string ParamName(const ::testing::TestParamInfo<Param>& info) {
  return std::string(KindName(std::get<0>(info.param))) + "_qd" + std::to_string(std::get<1>(info.param)) +
         "_bs" + std::to_string(std::get<2>(info.param) / 1024) + "k";
}

INSTANTIATE_TEST_SUITE_P(AllBackends, RoundTrip,
                         ::testing::Combine(::testing::Values(Kind::kMem, Kind::kPosix, Kind::kPosixDirect,
                                                              Kind::kUring, Kind::kUringFixed),
                                            ::testing::Values(1u, 2u, 8u, 32u),
                                            ::testing::Values(4096ull, 65536ull, 1ull << 20)),
                         ParamName);

class LargeRequest : public ::testing::TestWithParam<Kind> {};

// One 4 MiB request is split into 64 KiB chunks and keeps the queue full.
TEST_P(LargeRequest, SplitIntoBlocksUpToQueueDepth) {
  TempDir dir;
  auto pool = PinnedHostPool::Create(8u << 20);
  ASSERT_TRUE(pool.ok());
  StorageOptions opts{8, 64 * 1024};
  MAKE_STORE_OR_SKIP(store, GetParam(), dir.file("big.swap"), opts, pool->get());
  constexpr uint64_t kBytes = 4u << 20;
  auto w = (*pool)->AllocBuffer(kBytes);
  auto r = (*pool)->AllocBuffer(kBytes);
  ASSERT_TRUE(w.ok() && r.ok());
  testing::FillRandom(w->data(), kBytes, 7);
  ASSERT_TRUE(store->Write(1 << 20, w->data(), kBytes).ok());
  EXPECT_EQ(store->stats().chunks, 64u);
  EXPECT_EQ(store->stats().max_inflight, 8u);
  ASSERT_TRUE(store->Read(1 << 20, r->data(), kBytes).ok());
  EXPECT_EQ(0, std::memcmp(w->data(), r->data(), kBytes));
  EXPECT_EQ(store->stats().retries, 0u);
}

INSTANTIATE_TEST_SUITE_P(AllBackends, LargeRequest,
                         ::testing::Values(Kind::kMem, Kind::kPosix, Kind::kPosixDirect, Kind::kUring,
                                           Kind::kUringFixed),
                         [](const auto& info) { return std::string(KindName(info.param)); });

class Alignment : public ::testing::TestWithParam<Kind> {};

TEST_P(Alignment, MisalignedOffsetLengthOrBufferRejected) {
  TempDir dir;
  MAKE_STORE_OR_SKIP(store, GetParam(), dir.file("align.swap"), StorageOptions{}, nullptr);
  ASSERT_EQ(store->alignment(), 4096u);
  auto buf = testing::AllocAligned(3 * 4096);
  struct Case {
    uint64_t off;
    char* p;
    uint64_t len;
  } cases[] = {{100, buf.get(), 4096}, {0, buf.get(), 4000}, {0, buf.get() + 8, 4096}};
  for (const Case& c : cases) {
    auto w = store->SubmitWrite(c.off, c.p, c.len);
    ASSERT_FALSE(w.ok());
    EXPECT_EQ(w.status().code(), Code::kInvalidArgument);
    EXPECT_NE(w.status().message().find("misaligned"), std::string::npos) << w.status().ToString();
    EXPECT_NE(w.status().message().find(store->path()), std::string::npos);
    auto r = store->SubmitRead(c.off, c.p, c.len);
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  }
  EXPECT_EQ(store->outstanding_requests(), 0u);
  EXPECT_TRUE(store->Write(4096, buf.get(), 8192).ok());  // aligned is fine
}

INSTANTIATE_TEST_SUITE_P(DirectBackends, Alignment,
                         ::testing::Values(Kind::kMem, Kind::kPosixDirect, Kind::kUring),
                         [](const auto& info) { return std::string(KindName(info.param)); });

TEST(BufferedPosix, AnyAlignmentWorks) {
  TempDir dir;
  auto s = PosixStore::Open(dir.file("b.swap"), StorageOptions{4, 4096}, /*direct=*/false);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)->alignment(), 1u);
  std::string data(10007, 'x');
  testing::FillRandom(data.data(), data.size(), 3);
  ASSERT_TRUE((*s)->Write(13, data.data(), data.size()).ok());
  std::string back(data.size(), 0);
  ASSERT_TRUE((*s)->Read(13, back.data(), back.size()).ok());
  EXPECT_EQ(back, data);
  EXPECT_STREQ((*s)->kind(), "posix");
}

TEST(FileStores, MissingDirectoryIsNotFound) {
  auto p = PosixStore::Open("/nonexistent-zinf-dir/x.swap", StorageOptions{}, false);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), Code::kNotFound);
  EXPECT_NE(p.status().message().find("/nonexistent-zinf-dir/x.swap"), std::string::npos);
  auto u = UringStore::Open("/nonexistent-zinf-dir/x.swap", StorageOptions{});
  ASSERT_FALSE(u.ok());
  EXPECT_TRUE(u.status().code() == Code::kNotFound || u.status().code() == Code::kUnsupported)
      << u.status().ToString();
}

}  // namespace
}  // namespace zinf
