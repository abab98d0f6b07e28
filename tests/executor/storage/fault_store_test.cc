// Every injected fault surfaces as the right Status naming the path; short transfers
// are retried to completion; the request engine's error paths drain cleanly.
#include <gtest/gtest.h>

#include "executor/storage/fault_store.h"
#include "executor/storage/mem_store.h"
#include "executor/storage/posix_store.h"
#include "tests/executor/storage/storage_test_util.h"

namespace zinf {
namespace {

using testing::TempDir;

std::unique_ptr<FaultStore> Faulty(const std::string& path, const FaultSpec& spec, StorageOptions o = {4, 16384}) {
  auto inner = PosixStore::Open(path, o, /*direct=*/true);
  EXPECT_TRUE(inner.ok()) << inner.status().ToString();
  if (!inner.ok()) return nullptr;
  auto f = FaultStore::Wrap(std::move(inner).value(), spec);
  EXPECT_TRUE(f.ok());
  return std::move(f).value();
}

bool Mentions(const Status& st, const std::string& s) { return st.message().find(s) != std::string::npos; }

TEST(FaultStore, EnospcAfterNBytesIsNoSpaceWithPath) {
  TempDir dir;
  FaultSpec spec;
  spec.enospc_after_bytes = 40000;  // crossing write is short (36864 = 9 pages), then ENOSPC
  auto s = Faulty(dir.file("full.swap"), spec);
  ASSERT_TRUE(s);
  auto buf = testing::AllocAligned(1 << 17);
  testing::FillRandom(buf.get(), 1 << 17, 1);
  Status st = s->Write(0, buf.get(), 1 << 17);
  ASSERT_EQ(st.code(), Code::kNoSpace) << st.ToString();
  EXPECT_TRUE(Mentions(st, dir.file("full.swap"))) << st.ToString();
  EXPECT_TRUE(Mentions(st, "offset")) << st.ToString();
  EXPECT_GE(s->counts().enospc, 1u);
  EXPECT_EQ(s->outstanding_requests(), 0u);
  EXPECT_EQ(s->inflight_chunks(), 0u);
  // What fit before the disk filled is there.
  auto back = testing::AllocAligned(36864);
  ASSERT_TRUE(s->Read(0, back.get(), 36864).ok());
  EXPECT_EQ(0, std::memcmp(back.get(), buf.get(), 36864));
}

TEST(FaultStore, ShortReadsAndWritesAreRetriedToCompletion) {
  TempDir dir;
  FaultSpec spec;
  spec.short_every = 1;  // every chunk op transfers only half
  auto s = Faulty(dir.file("short.swap"), spec, StorageOptions{8, 65536});
  ASSERT_TRUE(s);
  constexpr size_t kBytes = 1 << 20;
  auto w = testing::AllocAligned(kBytes), r = testing::AllocAligned(kBytes);
  testing::FillRandom(w.get(), kBytes, 2);
  ASSERT_TRUE(s->Write(8192, w.get(), kBytes).ok());
  ASSERT_TRUE(s->Read(8192, r.get(), kBytes).ok());
  EXPECT_EQ(0, std::memcmp(w.get(), r.get(), kBytes));
  EXPECT_GT(s->counts().shorts, 32u);
  EXPECT_GT(s->stats().retries, 32u);
  EXPECT_EQ(s->stats().bytes_written, kBytes);
  EXPECT_EQ(s->stats().bytes_read, kBytes);
}

TEST(FaultStore, EioOnKthOpIsIoErrorAndOtherRequestsSurvive) {
  TempDir dir;
  FaultSpec spec;
  spec.eio_on_op = 5;
  auto s = Faulty(dir.file("eio.swap"), spec, StorageOptions{4, 4096});
  ASSERT_TRUE(s);
  auto buf = testing::AllocAligned(3 * 16384);
  testing::FillRandom(buf.get(), 3 * 16384, 3);
  // Three requests of 4 chunks each: chunk op #5 belongs to the second one.
  auto a = s->SubmitWrite(0, buf.get(), 16384);
  auto b = s->SubmitWrite(16384, buf.get() + 16384, 16384);
  auto c = s->SubmitWrite(32768, buf.get() + 32768, 16384);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_TRUE(s->Wait(*a).ok());
  Status st = s->Wait(*b);
  ASSERT_EQ(st.code(), Code::kIo) << st.ToString();
  EXPECT_TRUE(Mentions(st, dir.file("eio.swap"))) << st.ToString();
  EXPECT_TRUE(Mentions(st, "offset 20480 len 4096")) << st.ToString();
  EXPECT_TRUE(Mentions(st, "request offset 16384 len 16384")) << st.ToString();
  EXPECT_TRUE(s->Wait(*c).ok());
  EXPECT_EQ(s->counts().eio, 1u);
  EXPECT_EQ(s->inflight_chunks(), 0u);
}

TEST(FaultStore, EioOnReadOnly) {
  auto inner = MemStore::Create("mem:eio", StorageOptions{2, 4096});
  ASSERT_TRUE(inner.ok());
  FaultSpec spec;
  spec.eio_on_op = 0;
  spec.eio_any = false;
  spec.eio_only = IoOp::kRead;
  auto s = FaultStore::Wrap(std::move(inner).value(), spec).value();
  std::vector<char> buf(8192, 'a');
  ASSERT_TRUE(s->Write(0, buf.data(), buf.size()).ok());
  Status st = s->Read(0, buf.data(), buf.size());
  EXPECT_EQ(st.code(), Code::kIo);
  EXPECT_TRUE(Mentions(st, "read mem:eio")) << st.ToString();
  EXPECT_TRUE(s->Read(0, buf.data(), buf.size()).ok());  // only the first read fails
}

TEST(FaultStore, SilentCorruptionFlipsOneByte) {
  auto inner = MemStore::Create("mem:corrupt", StorageOptions{4, 4096});
  FaultSpec spec;
  spec.corrupt_offset = 5000;
  auto s = FaultStore::Wrap(std::move(inner).value(), spec).value();
  std::vector<char> w(16384), r(16384);
  testing::FillRandom(w.data(), w.size(), 4);
  ASSERT_TRUE(s->Write(0, w.data(), w.size()).ok());
  ASSERT_TRUE(s->Read(0, r.data(), r.size()).ok());  // silent: the store cannot tell
  int diffs = 0;
  for (size_t i = 0; i < w.size(); ++i) diffs += w[i] != r[i];
  EXPECT_EQ(diffs, 1);
  EXPECT_EQ(static_cast<unsigned char>(r[5000]), static_cast<unsigned char>(w[5000]) ^ 0xFF);
  EXPECT_EQ(s->counts().corrupted, 1u);
}

TEST(MemStoreErrors, ReadPastEndIsCorruptAndCapacityIsNoSpace) {
  auto s = MemStore::Create("mem:small", StorageOptions{2, 4096}, /*capacity_bytes=*/10000).value();
  std::vector<char> buf(16384, 'z');
  Status st = s->Write(0, buf.data(), buf.size());
  EXPECT_EQ(st.code(), Code::kNoSpace) << st.ToString();
  EXPECT_TRUE(Mentions(st, "mem:small"));
  st = s->Read(8192, buf.data(), 4096);  // file holds 10000 bytes: short then EOF
  EXPECT_EQ(st.code(), Code::kCorrupt) << st.ToString();
  EXPECT_TRUE(Mentions(st, "end of file"));
  EXPECT_TRUE(s->Read(0, buf.data(), 10000).ok());
}

TEST(StorageEngine, TicketsZeroLengthAndBadArguments) {
  auto s = MemStore::Create("mem:t", StorageOptions{2, 4096}).value();
  auto z = s->SubmitWrite(0, nullptr, 0);
  ASSERT_TRUE(z.ok());
  EXPECT_TRUE(s->IsDone(*z));
  EXPECT_TRUE(s->Wait(*z).ok());
  EXPECT_EQ(s->Wait(*z).code(), Code::kInvalidArgument);  // already waited
  EXPECT_EQ(s->SubmitRead(0, nullptr, 10).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(s->SubmitRead(UINT64_MAX - 2, reinterpret_cast<void*>(8), 10).status().code(), Code::kInvalidArgument);

  std::vector<char> buf(40000, 'q');
  auto a = s->SubmitWrite(0, buf.data(), buf.size());
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(s->Poll().ok());
  EXPECT_TRUE(s->WaitAll().ok());
  EXPECT_EQ(s->outstanding_requests(), 0u);
  EXPECT_EQ(s->stats().chunks, 10u);  // ceil(40000 / 4096)
}

TEST(StorageEngine, InvalidOptionsRejected) {
  EXPECT_EQ(MemStore::Create("m", StorageOptions{0, 4096}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(MemStore::Create("m", StorageOptions{8, 1000}, UINT64_MAX, 4096).status().code(),
            Code::kInvalidArgument);
  TempDir dir;
  auto p = PosixStore::Open(dir.file("o.swap"), StorageOptions{8, 6000}, /*direct=*/true);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), Code::kInvalidArgument);
  EXPECT_TRUE(Mentions(p.status(), "block_size_bytes"));
}

TEST(StorageEngine, WaitAllReportsFirstErrorAndReleasesAll) {
  auto inner = MemStore::Create("mem:wa", StorageOptions{4, 4096});
  FaultSpec spec;
  spec.eio_on_op = 2;
  auto s = FaultStore::Wrap(std::move(inner).value(), spec).value();
  std::vector<char> buf(4096 * 6);
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(s->SubmitWrite(4096ull * i, buf.data() + 4096 * i, 4096).ok());
  Status st = s->WaitAll();
  EXPECT_EQ(st.code(), Code::kIo);
  EXPECT_EQ(s->outstanding_requests(), 0u);
}

}  // namespace
}  // namespace zinf
