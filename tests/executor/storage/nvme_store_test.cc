// NvmeStore: per-rank swap file, extents, checksums, errors naming file and tensor.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include "executor/storage/crc32c.h"
#include "executor/storage/nvme_store.h"
#include "tests/executor/storage/storage_test_util.h"

namespace zinf {
namespace {

using testing::TempDir;

bool Mentions(const Status& st, const std::string& s) { return st.message().find(s) != std::string::npos; }

NvmeStoreOptions Opts(const std::string& dir, int rank = 0) {
  NvmeStoreOptions o;
  o.dir = dir;
  o.rank = rank;
  o.io = StorageOptions{8, 65536};
  return o;
}

TEST(NvmeStore, RoundTripOfNamedTensorsAndFileLifetime) {
  TempDir dir;
  auto pool = PinnedHostPool::Create(8u << 20);
  ASSERT_TRUE(pool.ok());
  std::string path;
  {
    auto s = NvmeStore::Create(Opts(dir.path(), 3), pool->get());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    NvmeStore& st = **s;
    path = st.path();
    EXPECT_EQ(path, dir.path() + "/zinf-rank3.swap");
    EXPECT_TRUE(testing::FileExists(path));
    std::printf("backend %s %s\n", st.backend(), st.backend_note().c_str());

    const uint64_t sizes[] = {1, 4096, 10000, 300000, 1 << 20};
    std::vector<PinnedBuffer> w, r;
    std::vector<IoTicket> t;
    for (size_t i = 0; i < std::size(sizes); ++i) {
      std::string name = "layer" + std::to_string(i) + ".w";
      auto e = st.Allocate(name, sizes[i]);
      ASSERT_TRUE(e.ok()) << e.status().ToString();
      EXPECT_EQ(e->offset % 4096, 0u);
      EXPECT_EQ(e->padded_bytes, (sizes[i] + 4095) / 4096 * 4096);
      w.push_back(std::move((*pool)->AllocBuffer(e->padded_bytes)).value());
      r.push_back(std::move((*pool)->AllocBuffer(e->padded_bytes)).value());
      testing::FillRandom(w.back().data(), e->padded_bytes, i);
      auto tk = st.WriteAsync(name, w.back().data());
      ASSERT_TRUE(tk.ok()) << tk.status().ToString();
      t.push_back(*tk);
    }
    for (IoTicket k : t) ASSERT_TRUE(st.Wait(k).ok());
    t.clear();
    for (size_t i = 0; i < std::size(sizes); ++i) {
      std::string name = "layer" + std::to_string(i) + ".w";
      EXPECT_EQ(st.Find(name)->crc, Crc32c(w[i].data(), sizes[i]));
      auto tk = st.ReadAsync(name, r[i].data());
      ASSERT_TRUE(tk.ok());
      t.push_back(*tk);
    }
    ASSERT_TRUE(st.WaitAll().ok());
    for (size_t i = 0; i < std::size(sizes); ++i) EXPECT_EQ(0, std::memcmp(w[i].data(), r[i].data(), sizes[i]));

    // Release and reuse: freed extents are recycled.
    uint64_t off = st.Find("layer2.w")->offset;
    ASSERT_TRUE(st.Release("layer2.w").ok());
    auto again = st.Allocate("again", 8192);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->offset, off);
    EXPECT_EQ(st.num_tensors(), 5u);
    EXPECT_EQ(st.Allocate("again", 1).status().code(), Code::kInvalidArgument);  // duplicate
  }
  EXPECT_FALSE(testing::FileExists(path)) << "swap file must be removed on destruction";
}

TEST(NvmeStore, CorruptedExtentIsCorruptNamingFileAndTensor) {
  TempDir dir;
  auto s = NvmeStore::Create(Opts(dir.path())).value();
  auto e = s->Allocate("blocks.7.attn.qkv", 20000).value();
  auto buf = testing::AllocAligned(e.padded_bytes);
  testing::FillRandom(buf.get(), e.padded_bytes, 9);
  ASSERT_TRUE(s->Write("blocks.7.attn.qkv", buf.get()).ok());
  // Flip one byte inside the tensor directly in the file (as a failing disk would).
  int fd = ::open(s->path().c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  unsigned char c;
  ASSERT_EQ(::pread(fd, &c, 1, static_cast<off_t>(e.offset + 12345)), 1);
  c ^= 0x10;
  ASSERT_EQ(::pwrite(fd, &c, 1, static_cast<off_t>(e.offset + 12345)), 1);
  ::fsync(fd);
  ::close(fd);
  Status st = s->Read("blocks.7.attn.qkv", buf.get());
  ASSERT_EQ(st.code(), Code::kCorrupt) << st.ToString();
  EXPECT_TRUE(Mentions(st, s->path())) << st.ToString();
  EXPECT_TRUE(Mentions(st, "blocks.7.attn.qkv")) << st.ToString();
  // A byte in the padding (beyond the logical size) is not covered and does not matter.
}

TEST(NvmeStore, InjectedFaultsSurfaceWithFileAndTensor) {
  TempDir dir;
  {
    NvmeStoreOptions o = Opts(dir.path());
    o.inject_faults = FaultSpec{};
    o.inject_faults->corrupt_offset = 100;
    auto s = NvmeStore::Create(o).value();
    ASSERT_TRUE(s->Allocate("emb", 4096).ok());
    auto buf = testing::AllocAligned(4096);
    testing::FillRandom(buf.get(), 4096, 1);
    ASSERT_TRUE(s->Write("emb", buf.get()).ok());
    Status st = s->Read("emb", buf.get());
    EXPECT_EQ(st.code(), Code::kCorrupt) << st.ToString();
    EXPECT_TRUE(Mentions(st, "'emb'"));
  }
  {
    NvmeStoreOptions o = Opts(dir.path());
    o.inject_faults = FaultSpec{};
    o.inject_faults->enospc_after_bytes = 65536;
    auto s = NvmeStore::Create(o).value();
    ASSERT_TRUE(s->Allocate("a", 65536).ok());
    ASSERT_TRUE(s->Allocate("b", 65536).ok());
    auto buf = testing::AllocAligned(65536);
    ASSERT_TRUE(s->Write("a", buf.get()).ok());
    Status st = s->Write("b", buf.get());
    EXPECT_EQ(st.code(), Code::kNoSpace) << st.ToString();
    EXPECT_TRUE(Mentions(st, "tensor 'b'"));
    EXPECT_TRUE(Mentions(st, s->path()));
    // The failed write left no data: reading b is refused, a is intact.
    EXPECT_EQ(s->Read("b", buf.get()).code(), Code::kInvalidArgument);
    EXPECT_TRUE(s->Read("a", buf.get()).ok());
  }
  {
    NvmeStoreOptions o = Opts(dir.path());
    o.inject_faults = FaultSpec{};
    o.inject_faults->eio_on_op = 1;
    auto s = NvmeStore::Create(o).value();
    ASSERT_TRUE(s->Allocate("x", 4096).ok());
    auto buf = testing::AllocAligned(4096);
    ASSERT_TRUE(s->Write("x", buf.get()).ok());
    Status st = s->Read("x", buf.get());
    EXPECT_EQ(st.code(), Code::kIo) << st.ToString();
    EXPECT_TRUE(Mentions(st, "tensor 'x'"));
    EXPECT_TRUE(Mentions(st, s->path()));
  }
}

TEST(NvmeStore, CapacityExhaustedIsNoSpace) {
  TempDir dir;
  NvmeStoreOptions o = Opts(dir.path());
  o.capacity_bytes = 1 << 20;
  auto s = NvmeStore::Create(o).value();
  ASSERT_TRUE(s->Allocate("a", 600000).ok());
  auto b = s->Allocate("b", 600000);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), Code::kNoSpace);
  EXPECT_TRUE(Mentions(b.status(), "'b'"));
  EXPECT_EQ(s->Release("zzz").code(), Code::kNotFound);
}

TEST(NvmeStore, MisuseIsRejected) {
  TempDir dir;
  auto s = NvmeStore::Create(Opts(dir.path())).value();
  auto buf = testing::AllocAligned(8192);
  EXPECT_EQ(s->Write("nope", buf.get()).code(), Code::kNotFound);
  ASSERT_TRUE(s->Allocate("t", 8192).ok());
  EXPECT_EQ(s->Read("t", buf.get()).code(), Code::kInvalidArgument);  // never written
  auto w = s->WriteAsync("t", buf.get());
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(s->ReadAsync("t", buf.get()).status().code(), Code::kInvalidArgument);  // write in flight
  EXPECT_EQ(s->Release("t").code(), Code::kInvalidArgument);
  EXPECT_TRUE(s->Wait(*w).ok());
  EXPECT_TRUE(s->Release("t").ok());
  // Misaligned buffer with a direct-I/O backend.
  if (s->storage().alignment() > 1) {
    ASSERT_TRUE(s->Allocate("u", 4096).ok());
    EXPECT_EQ(s->Write("u", buf.get() + 1).code(), Code::kInvalidArgument);
  }
}

TEST(NvmeStore, BadDirectoriesGiveClearErrors) {
  auto missing = NvmeStore::Create(Opts("/nonexistent-zinf/nvme"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
  EXPECT_TRUE(Mentions(missing.status(), "/nonexistent-zinf/nvme")) << missing.status().ToString();

  TempDir dir;
  std::string file = dir.file("plainfile");
  ASSERT_EQ(::close(::open(file.c_str(), O_CREAT | O_WRONLY, 0644)), 0);
  auto notdir = NvmeStore::Create(Opts(file));
  ASSERT_FALSE(notdir.ok());
  EXPECT_EQ(notdir.status().code(), Code::kInvalidArgument);
  EXPECT_TRUE(Mentions(notdir.status(), "not a directory"));

  EXPECT_EQ(NvmeStore::Create(Opts("")).status().code(), Code::kInvalidArgument);
}

TEST(NvmeStore, ReadOnlyDirectoryIsIoError) {
  TempDir dir;
  std::string ro;
  if (geteuid() != 0) {
    ro = dir.file("ro");
    ASSERT_EQ(::mkdir(ro.c_str(), 0555), 0);
  } else {
    ro = "/sys";  // root ignores permission bits; sysfs refuses new files even for root
    int fd = ::open("/sys/zinf-probe.swap", O_CREAT | O_RDWR, 0644);
    if (fd >= 0) {
      ::close(fd);
      ::unlink("/sys/zinf-probe.swap");
      GTEST_SKIP() << "no read-only directory available as root here";
    }
  }
  NvmeStoreOptions o = Opts(ro);
  o.backend = StoreBackend::kPosix;
  auto s = NvmeStore::Create(o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Code::kIo) << s.status().ToString();
  EXPECT_TRUE(Mentions(s.status(), ro + "/zinf-rank0.swap")) << s.status().ToString();
  EXPECT_TRUE(Mentions(s.status(), "writable")) << s.status().ToString();
}

TEST(NvmeStore, AllBackendsByName) {
  TempDir dir;
  for (const char* name : {"auto", "uring", "posix-direct", "posix", "mem"}) {
    auto b = ParseStoreBackend(name);
    ASSERT_TRUE(b.ok());
    NvmeStoreOptions o = Opts(dir.path());
    o.backend = *b;
    auto s = NvmeStore::Create(o);
    if (!s.ok() && s.status().code() == Code::kUnsupported) continue;  // e.g. no io_uring here
    ASSERT_TRUE(s.ok()) << name << ": " << s.status().ToString();
    auto e = (*s)->Allocate("t", 50000).value();
    auto w = testing::AllocAligned(e.padded_bytes), r = testing::AllocAligned(e.padded_bytes);
    testing::FillRandom(w.get(), e.padded_bytes, 5);
    ASSERT_TRUE((*s)->Write("t", w.get()).ok()) << name;
    ASSERT_TRUE((*s)->Read("t", r.get()).ok()) << name;
    EXPECT_EQ(0, std::memcmp(w.get(), r.get(), 50000)) << name;
  }
  EXPECT_EQ(ParseStoreBackend("spdk").status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace zinf

namespace zinf {
namespace {

TEST(NvmeStore, ASecondOwnerOfTheSameSwapFileIsRefused) {
  TempDir dir;
  auto first = NvmeStore::Create(Opts(dir.path(), 1));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = NvmeStore::Create(Opts(dir.path(), 1));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Code::kInvalidArgument);
  EXPECT_TRUE(Mentions(second.status(), "in use by another process")) << second.status().ToString();
  auto other_rank = NvmeStore::Create(Opts(dir.path(), 2));
  EXPECT_TRUE(other_rank.ok()) << other_rank.status().ToString();
  first->reset();
  auto again = NvmeStore::Create(Opts(dir.path(), 1));
  EXPECT_TRUE(again.ok()) << "the lock goes with its store: " << again.status().ToString();
}

}  // namespace
}  // namespace zinf
