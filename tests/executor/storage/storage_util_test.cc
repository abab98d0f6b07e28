// CRC-32C, the range allocator and the pinned host pool.
#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "executor/storage/crc32c.h"
#include "executor/storage/pinned_host_pool.h"
#include "executor/storage/range_allocator.h"
#include "executor/storage/storage_file.h"
#include "tests/executor/storage/storage_test_util.h"

namespace zinf {
namespace {

TEST(Crc32c, KnownVectors) {
  EXPECT_EQ(Crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(Crc32cSoftware("123456789", 9), 0xE3069283u);
  std::vector<unsigned char> zeros(32, 0), ones(32, 0xFF);
  EXPECT_EQ(Crc32c(zeros.data(), 32), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(ones.data(), 32), 0x62A8AB43u);
  EXPECT_EQ(Crc32c(nullptr, 0), 0u);
}

TEST(Crc32c, HardwareMatchesSoftwareAndIsIncremental) {
  std::vector<char> buf(100003);
  testing::FillRandom(buf.data(), buf.size(), 11);
  for (size_t n : {1ul, 7ul, 8ul, 9ul, 63ul, 4096ul, 100003ul}) {
    EXPECT_EQ(Crc32c(buf.data(), n), Crc32cSoftware(buf.data(), n)) << n;
  }
  uint32_t c = Crc32c(buf.data(), 1000);
  c = Crc32c(buf.data() + 1000, buf.size() - 1000, c);
  EXPECT_EQ(c, Crc32c(buf.data(), buf.size()));
  std::printf("crc32c hardware: %d\n", Crc32cHardwareAvailable());
}

TEST(RangeAllocator, FirstFitCoalescingAndPeak) {
  RangeAllocator a(64 * 1024, 4096);
  auto x = a.Allocate(1), y = a.Allocate(8192), z = a.Allocate(4097);
  ASSERT_TRUE(x && y && z);
  EXPECT_EQ(*x, 0u);
  EXPECT_EQ(*y, 4096u);
  EXPECT_EQ(*z, 12288u);
  EXPECT_EQ(a.used_bytes(), 4096u + 8192 + 8192);
  EXPECT_EQ(a.Free(*y), 8192u);
  EXPECT_EQ(a.Free(*y), 0u);  // double free detected
  EXPECT_EQ(*a.Allocate(4096), 4096u);  // first fit reuses the hole
  a.Free(4096);
  a.Free(*x);
  a.Free(*z);
  EXPECT_EQ(a.used_bytes(), 0u);
  EXPECT_EQ(a.largest_free(), 64u * 1024);  // everything coalesced
  EXPECT_EQ(a.peak_bytes(), 20480u);
  EXPECT_FALSE(a.Allocate(64 * 1024 + 1));
  EXPECT_TRUE(a.Allocate(64 * 1024));
}

TEST(PinnedHostPool, AlignedAllocWithCapacityAndPeak) {
  auto p = PinnedHostPool::Create(1 << 20);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  PinnedHostPool& pool = **p;
  if (!pool.locked()) {
    EXPECT_FALSE(pool.lock_error().empty());
    std::printf("pool not locked: %s\n", pool.lock_error().c_str());
  }
  std::vector<void*> v;
  for (int i = 0; i < 4; ++i) {
    auto a = pool.Alloc(256 * 1024 - 100);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(*a) % 4096, 0u);
    std::memset(*a, i, 1000);
    v.push_back(*a);
  }
  auto over = pool.Alloc(1);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), Code::kOutOfMemory);
  EXPECT_NE(over.status().message().find("capacity"), std::string::npos);
  EXPECT_EQ(pool.used_bytes(), 1u << 20);
  ASSERT_TRUE(pool.Free(v[1]).ok());
  EXPECT_EQ(pool.Free(v[1]).code(), Code::kInvalidArgument);
  int x;
  EXPECT_EQ(pool.Free(&x).code(), Code::kInvalidArgument);
  EXPECT_TRUE(pool.Contains(v[0], 4096));
  EXPECT_FALSE(pool.Contains(&x, 1));
  {
    auto b = pool.AllocBuffer(200 * 1024);
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(b->data(), v[1]);
    EXPECT_EQ(b->bytes(), 204800u);  // rounded up to whole pages
    EXPECT_EQ(pool.used_bytes(), 768u * 1024 + 204800);
  }
  EXPECT_EQ(pool.used_bytes(), 768u * 1024);
  EXPECT_EQ(pool.peak_bytes(), 1u << 20);
  EXPECT_EQ(PinnedHostPool::Create(0).status().code(), Code::kInvalidArgument);
}

// A pool of a huge page or more starts on a huge-page boundary and asks for transparent huge
// pages (whole, as mapped: its capacity is not rounded up to them); a smaller one does not.
TEST(PinnedHostPool, LargePoolsAskForHugePages) {
  const uint64_t cap = 3 * PinnedHostPool::kHugePage + 4096;
  auto big = PinnedHostPool::Create(cap);
  ASSERT_TRUE(big.ok()) << big.status().ToString();
  EXPECT_EQ(reinterpret_cast<uintptr_t>((*big)->base()) % PinnedHostPool::kHugePage, 0u);
  EXPECT_EQ((*big)->capacity_bytes(), cap);
  // madvise(MADV_HUGEPAGE) fails (EINVAL) only on a kernel built without THP.
  const bool thp = std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled").good();
  EXPECT_EQ((*big)->huge_pages(), thp);
  auto a = (*big)->Alloc(cap);  // the whole capacity is usable, to its last byte
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  std::memset(*a, 0x5a, cap);
  EXPECT_EQ(static_cast<unsigned char*>(*a)[cap - 1], 0x5a);
  auto small = PinnedHostPool::Create(PinnedHostPool::kHugePage - 4096);
  ASSERT_TRUE(small.ok());
  EXPECT_FALSE((*small)->huge_pages());
}

TEST(PinnedHostPool, UnlockedModeAndThreads) {
  auto p = PinnedHostPool::Create(4 << 20, /*lock=*/false);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE((*p)->locked());
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([&] {
      for (int i = 0; i < 500; ++i) {
        auto a = (*p)->Alloc(4096 * (1 + i % 16));
        if (a.ok()) (void)(*p)->Free(*a);
      }
    });
  }
  for (auto& t : ts) t.join();
  EXPECT_EQ((*p)->used_bytes(), 0u);
  EXPECT_EQ((*p)->num_allocations(), 0u);
}

TEST(StorageFile, TmpfsWithoutDirectIoIsUnsupported) {
  // Older kernels refuse O_DIRECT on tmpfs with EINVAL; newer ones accept it.
  std::string path = "/dev/shm/zinf-odirect-probe.swap";
  auto fd = OpenStorageFile(path, /*direct=*/true, true);
  if (fd.ok()) {
    ::close(*fd);
    ::unlink(path.c_str());
    GTEST_SKIP() << "this kernel's /dev/shm (" << FilesystemName("/dev/shm") << ") supports O_DIRECT";
  }
  EXPECT_EQ(fd.status().code(), Code::kUnsupported) << fd.status().ToString();
  EXPECT_NE(fd.status().message().find("O_DIRECT"), std::string::npos);
}

}  // namespace
}  // namespace zinf
