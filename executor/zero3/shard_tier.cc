#include "executor/zero3/shard_tier.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>


namespace zinf {
namespace {

class DeviceTier final : public ShardTier {
 public:
  Tier tier() const override { return Tier::kDevice; }
  float* Resident(int g) override { return bufs_[static_cast<size_t>(g)].as<float>(); }
  Status Read(int g, float* buf) override {
    return be_->CopyD2H(buf, Resident(g), bufs_[static_cast<size_t>(g)].bytes());
  }
  Status Write(int g, const float* buf) override {
    return be_->CopyH2D(Resident(g), buf, bufs_[static_cast<size_t>(g)].bytes());
  }
  double bytes() const override { return bytes_; }

  static Result<std::unique_ptr<ShardTier>> Create(const std::vector<GroupShard>& shards, Backend* be, const std::string& kind) {
    auto t = std::unique_ptr<DeviceTier>(new DeviceTier());
    t->be_ = be;
    for (const GroupShard& s : shards) {
      Result<DeviceBuffer> b = be->AllocBuffer(s.shard * sizeof(float), 4096);
      if (!b.ok()) return b.status().WithContext(fmt::format("{} shards on the device", kind));
      ZINF_RETURN_IF_ERROR(be->Memset(b->data(), 0, s.shard * sizeof(float)));
      t->bytes_ += static_cast<double>(s.shard * sizeof(float));
      t->bufs_.push_back(std::move(*b));
    }
    return std::unique_ptr<ShardTier>(std::move(t));
  }

 private:
  Backend* be_ = nullptr;
  std::vector<DeviceBuffer> bufs_;
  double bytes_ = 0;
};

class HostTier final : public ShardTier {
 public:
  ~HostTier() override { std::free(base_); }
  Tier tier() const override { return Tier::kHost; }
  float* Resident(int g) override { return base_ + offsets_[static_cast<size_t>(g)]; }
  Status Read(int g, float* buf) override {
    std::memcpy(buf, Resident(g), sizes_[static_cast<size_t>(g)] * sizeof(float));
    return Status::Ok();
  }
  Status Write(int g, const float* buf) override {
    std::memcpy(Resident(g), buf, sizes_[static_cast<size_t>(g)] * sizeof(float));
    return Status::Ok();
  }
  double bytes() const override { return static_cast<double>(total_ * sizeof(float)); }

  static Result<std::unique_ptr<ShardTier>> Create(const std::vector<GroupShard>& shards, const std::string& kind) {
    auto t = std::unique_ptr<HostTier>(new HostTier());
    for (const GroupShard& s : shards) {
      t->offsets_.push_back(t->total_);
      t->sizes_.push_back(s.shard);
      t->total_ += s.shard;
    }
    t->base_ = static_cast<float*>(std::aligned_alloc(4096, std::max<size_t>(4096, t->total_ * sizeof(float))));
    if (!t->base_)
      return OutOfMemory(fmt::format("{} shards on the host: cannot allocate {} bytes", kind, t->total_ * sizeof(float)));
    std::memset(t->base_, 0, t->total_ * sizeof(float));
    return std::unique_ptr<ShardTier>(std::move(t));
  }

 private:
  float* base_ = nullptr;
  std::vector<size_t> offsets_, sizes_;
  size_t total_ = 0;
};

// Extents "<kind>/<group>" in the rank's NvmeStore (CRC-32C checked on every read).
class NvmeTier final : public ShardTier {
 public:
  ~NvmeTier() override {
    std::lock_guard<std::mutex> l(*mu_);
    for (const auto& n : names_) (void)store_->Release(n);
  }
  Tier tier() const override { return Tier::kNvme; }
  float* Resident(int) override { return nullptr; }
  Status Read(int g, float* buf) override {
    std::lock_guard<std::mutex> l(*mu_);
    return store_->Read(names_[static_cast<size_t>(g)], buf);
  }
  Status Write(int g, const float* buf) override {
    std::lock_guard<std::mutex> l(*mu_);
    return store_->Write(names_[static_cast<size_t>(g)], buf);
  }
  double bytes() const override { return bytes_; }
  const std::string* NvmeExtent(int g) const override { return &names_[static_cast<size_t>(g)]; }

  static Result<std::unique_ptr<ShardTier>> Create(const std::vector<GroupShard>& shards, const ShardTierOptions& o) {
    if (!o.nvme) return Internal("NVMe tier without an NvmeStore");
    auto t = std::unique_ptr<NvmeTier>(new NvmeTier());
    t->store_ = o.nvme;
    t->mu_ = o.nvme_mu;
    std::lock_guard<std::mutex> l(*t->mu_);
    for (size_t g = 0; g < shards.size(); ++g) {
      std::string name = fmt::format("{}/{}", o.kind, g);
      Result<SwapExtent> e = t->store_->Allocate(name, shards[g].shard * sizeof(float));
      if (!e.ok()) return e.status().WithContext(fmt::format("{} shards on NVMe", o.kind));
      t->bytes_ += static_cast<double>(e->padded_bytes);
      t->names_.push_back(std::move(name));
    }
    if (!o.nvme_zero_fill) return std::unique_ptr<ShardTier>(std::move(t));
    size_t max_bytes = 4096;
    for (const GroupShard& s : shards) max_bytes = std::max(max_bytes, s.shard * sizeof(float));
    std::unique_ptr<void, decltype(&std::free)> zero(std::aligned_alloc(4096, max_bytes), &std::free);
    if (!zero) return OutOfMemory(fmt::format("{}: cannot allocate {} bytes of staging", o.kind, max_bytes));
    std::memset(zero.get(), 0, max_bytes);
    for (const std::string& n : t->names_) {
      Status st = t->store_->Write(n, zero.get());
      if (!st.ok()) return st.WithContext(fmt::format("initialising {} shards on NVMe", o.kind));
    }
    return std::unique_ptr<ShardTier>(std::move(t));
  }

 private:
  NvmeStore* store_ = nullptr;
  std::mutex* mu_ = nullptr;
  std::vector<std::string> names_;
  double bytes_ = 0;
};

}  // namespace

Result<std::unique_ptr<ShardTier>> MakeShardTier(Tier tier, const std::vector<GroupShard>& shards, Backend* backend,
                                                 const ShardTierOptions& o) {
  switch (tier) {
    case Tier::kDevice: return DeviceTier::Create(shards, backend, o.kind);
    case Tier::kHost: return HostTier::Create(shards, o.kind);
    case Tier::kNvme: return NvmeTier::Create(shards, o);
  }
  return Internal("unknown tier");
}

}  // namespace zinf
