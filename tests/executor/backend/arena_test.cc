#include "executor/backend/arena.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/executor/backend/test_util.h"

namespace zinf {
namespace {

TEST(ArenaAllocator, AllocatesWithinCapacityAndTracksPeak) {
  ArenaAllocator a(4096, 256);
  auto x = a.Alloc(1000);
  ASSERT_TRUE(x.ok());
  EXPECT_EQ(*x, 0u);
  EXPECT_EQ(a.Stats().used_bytes, 1024u);  // rounded to granularity
  auto y = a.Alloc(256);
  ASSERT_TRUE(y.ok());
  EXPECT_EQ(*y, 1024u);
  EXPECT_EQ(a.Stats().peak_bytes, 1280u);
  ASSERT_TRUE(a.Free(*x).ok());
  EXPECT_EQ(a.Stats().used_bytes, 256u);
  EXPECT_EQ(a.Stats().peak_bytes, 1280u);
  a.ResetPeak();
  EXPECT_EQ(a.Stats().peak_bytes, 256u);
  ASSERT_TRUE(a.Free(*y).ok());
  EXPECT_EQ(a.Stats().used_bytes, 0u);
  EXPECT_EQ(a.Stats().free_blocks, 1u);
  EXPECT_EQ(a.Stats().largest_free_bytes, 4096u);
}

TEST(ArenaAllocator, OutOfMemoryNamesRequestedUsedCapacity) {
  ArenaAllocator a(4096, 256);
  auto x = a.Alloc(3000);
  ASSERT_TRUE(x.ok());
  auto y = a.Alloc(2000);
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), Code::kOutOfMemory);
  const std::string& m = y.status().message();
  EXPECT_NE(m.find("requested 2000"), std::string::npos) << m;
  EXPECT_NE(m.find("used 3072"), std::string::npos) << m;
  EXPECT_NE(m.find("capacity 4096"), std::string::npos) << m;
  // Exactly the remainder still fits.
  EXPECT_TRUE(a.Alloc(1024).ok());
  EXPECT_FALSE(a.Alloc(1).ok());
}

TEST(ArenaAllocator, FragmentationIsRealAndCoalescingRepairsIt) {
  ArenaAllocator a(8 * 256, 256);
  std::vector<size_t> offs;
  for (int i = 0; i < 8; ++i) offs.push_back(*a.Alloc(256));
  // Free every other block: 4 blocks (1024 bytes) free but none contiguous.
  for (int i = 0; i < 8; i += 2) ASSERT_TRUE(a.Free(offs[i]).ok());
  EXPECT_EQ(a.Stats().used_bytes, 1024u);
  EXPECT_EQ(a.Stats().free_blocks, 4u);
  EXPECT_EQ(a.Stats().largest_free_bytes, 256u);
  auto big = a.Alloc(512);
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("fragmented"), std::string::npos);
  // Free the odd ones: neighbours coalesce back to one block.
  for (int i = 1; i < 8; i += 2) ASSERT_TRUE(a.Free(offs[i]).ok());
  EXPECT_EQ(a.Stats().free_blocks, 1u);
  EXPECT_EQ(a.Stats().largest_free_bytes, 2048u);
  EXPECT_TRUE(a.Alloc(2048).ok());
}

TEST(ArenaAllocator, BestFitPicksSmallestHole) {
  ArenaAllocator a(16 * 256, 256);
  size_t b0 = *a.Alloc(4 * 256), s0 = *a.Alloc(256);
  size_t b1 = *a.Alloc(2 * 256), s1 = *a.Alloc(256);
  (void)s0;
  (void)s1;
  ASSERT_TRUE(a.Free(b0).ok());  // hole of 4 blocks at 0
  ASSERT_TRUE(a.Free(b1).ok());  // hole of 2 blocks at 5*256
  auto x = a.Alloc(2 * 256);
  ASSERT_TRUE(x.ok());
  EXPECT_EQ(*x, b1);  // the exact-fit hole, not the first one
}

TEST(ArenaAllocator, HonoursLargeAlignment) {
  ArenaAllocator a(1 << 16, 256);
  ASSERT_TRUE(a.Alloc(256).ok());
  auto x = a.Alloc(100, 4096);
  ASSERT_TRUE(x.ok());
  EXPECT_EQ(*x % 4096, 0u);
  // The front padding stayed free and is reusable.
  auto y = a.Alloc(256);
  ASSERT_TRUE(y.ok());
  EXPECT_EQ(*y, 256u);
  EXPECT_FALSE(a.Alloc(8, 3).ok());  // not a power of two
}

TEST(ArenaAllocator, RejectsUnknownAndDoubleFree) {
  ArenaAllocator a(4096, 256);
  size_t x = *a.Alloc(10);
  EXPECT_FALSE(a.Free(x + 256).ok());
  EXPECT_TRUE(a.Free(x).ok());
  EXPECT_EQ(a.Free(x).code(), Code::kInvalidArgument);
}

TEST(CpuBackendArena, EnforcesCapacityLikeADevice) {
  auto be = testing::TestBackend(1 << 20);
  EXPECT_EQ(be->Capacity(), 1u << 20);
  auto a = be->AllocBuffer(600 << 10);
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(be->IsDevicePointer(a->data(), 600 << 10));
  int host = 0;
  EXPECT_FALSE(be->IsDevicePointer(&host, 4));
  auto b = be->Alloc(600 << 10);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), Code::kOutOfMemory);
  EXPECT_NE(b.status().message().find("capacity 1048576"), std::string::npos);
  a->reset();  // RAII free
  EXPECT_EQ(be->Used(), 0u);
  EXPECT_EQ(be->Peak(), 600u << 10);
  auto c = be->Alloc(1 << 20);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(be->Free(*c).ok());
  EXPECT_FALSE(be->Free(&host).ok());
  EXPECT_TRUE(be->Free(nullptr).ok());
}

TEST(CpuBackendArena, DeviceBufferMoves) {
  auto be = testing::TestBackend(1 << 20);
  DeviceBuffer outer;
  {
    auto r = be->AllocBuffer(1000);
    ASSERT_TRUE(r.ok());
    outer = std::move(r).value();
  }
  EXPECT_EQ(be->Stats().live_allocations, 1u);
  DeviceBuffer moved(std::move(outer));
  EXPECT_FALSE(outer);
  EXPECT_TRUE(moved);
  moved = DeviceBuffer();
  EXPECT_EQ(be->Stats().live_allocations, 0u);
}

}  // namespace
}  // namespace zinf
