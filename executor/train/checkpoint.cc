#include "executor/train/checkpoint.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "core/field_reader.h"
#include "core/file_util.h"
#include "core/yaml_emit.h"
#include "executor/storage/crc32c.h"
#include "executor/train/test_hooks.h"

namespace zinf {

namespace fs = std::filesystem;

namespace {

constexpr char kFormat[] = "zinf.checkpoint/v1";
constexpr ShardState kStates[3] = {ShardState::kParams, ShardState::kAdamM, ShardState::kAdamV};

std::string RankFileName(int r) { return fmt::format("rank-{:05d}.bin", r); }

Status Errno(const std::string& what, const std::string& path) {
  const std::string m = fmt::format("{} {}: {}", what, path, std::strerror(errno));
  return errno == ENOSPC ? NoSpace(m) : IoError(m);
}

Status FsyncPath(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno("cannot open", path);
  int rc = ::fsync(fd);
  ::close(fd);
  return rc == 0 ? Status::Ok() : Errno("cannot fsync", path);
}

// Every rank learns whether all succeeded; a rank that failed returns its own error, the
// others Aborted naming the first failed rank.
Status Agree(Comm& comm, const Status& mine, const char* what) {
  if (comm.size() == 1) return mine;
  int32_t code = static_cast<int32_t>(mine.code());
  std::vector<int32_t> all(static_cast<size_t>(comm.size()));
  ZINF_RETURN_IF_ERROR(comm.AllGatherBytes(&code, sizeof(code), all.data()));
  if (!mine.ok()) return mine;
  for (size_t q = 0; q < all.size(); ++q)
    if (all[q] != static_cast<int32_t>(Code::kOk))
      return Aborted(fmt::format("{}: rank {} failed (see its error)", what, q));
  return Status::Ok();
}

class CrcWriter {
 public:
  ~CrcWriter() {
    if (fd_ >= 0) ::close(fd_);
  }
  Status Open(const std::string& path) {
    path_ = path;
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    return fd_ < 0 ? Errno("cannot create", path) : Status::Ok();
  }
  Status Write(const void* data, size_t n) {
    crc_ = Crc32c(data, n, crc_);
    ZINF_RETURN_IF_ERROR(WriteAll(fd_, data, n, path_));
    bytes_ += n;
    return Status::Ok();
  }
  Status Close() {
    if (::fsync(fd_) != 0) return Errno("cannot fsync", path_);
    int fd = fd_;
    fd_ = -1;
    return ::close(fd) == 0 ? Status::Ok() : Errno("cannot close", path_);
  }
  uint64_t bytes() const { return bytes_; }
  uint32_t crc() const { return crc_; }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t bytes_ = 0;
  uint32_t crc_ = 0;
};

Status WriteRankFile(const std::string& path, int rank, const std::vector<GroupShard>& shards, Zero3Engine& engine,
                     CheckpointFile* out) {
  CrcWriter w;
  ZINF_RETURN_IF_ERROR(w.Open(path));
  std::vector<float> buf;
  for (size_t g = 0; g < shards.size(); ++g) {
    buf.resize(shards[g].shard);
    const size_t real = shards[g].RealIn(rank);
    for (ShardState s : kStates) {
      ZINF_RETURN_IF_ERROR(engine.ReadState(static_cast<int>(g), s, buf.data()));
      ZINF_RETURN_IF_ERROR(w.Write(buf.data(), real * sizeof(float)));
    }
  }
  ZINF_RETURN_IF_ERROR(w.Close());
  out->rank = rank;
  out->name = fs::path(path).filename().string();
  out->bytes = w.bytes();
  out->crc32c = w.crc();
  return Status::Ok();
}

std::string ManifestYaml(const CheckpointManifest& m) {
  YamlOut y;
  y.Comment("zinf checkpoint: per-rank shards of params, Adam m and v (see executor/train/checkpoint.h)");
  y.Key("format", kFormat);
  y.Key("step", m.meta.step);
  y.Key("adam_step", m.meta.adam_step);
  y.Key("ranks", static_cast<int64_t>(m.meta.ranks));
  y.Key("model", m.meta.model);
  y.Key("seed", std::to_string(m.meta.seed));
  y.Key("lr", static_cast<double>(m.meta.lr));
  y.Begin("data");
  y.Key("path", m.meta.data_path);
  y.Key("tokens", m.meta.data_tokens);
  y.Key("sampler", "stateless: a batch is a pure function of (step, micro-step, sequence)");
  y.End();
  y.BeginList("groups");
  for (size_t g = 0; g < m.group_names.size(); ++g) {
    y.Item();
    y.Key("name", m.group_names[g]);
    y.Key("numel", static_cast<int64_t>(m.group_numel[g]));
  }
  y.EndList();
  y.BeginList("files");
  for (const CheckpointFile& f : m.files) {
    y.Item();
    y.Key("rank", static_cast<int64_t>(f.rank));
    y.Key("name", f.name);
    y.Key("bytes", static_cast<int64_t>(f.bytes));
    y.Key("crc32c", static_cast<int64_t>(f.crc32c));
  }
  y.EndList();
  return y.str();
}

int64_t StepOfDirName(const std::string& name) {
  if (name.rfind("step-", 0) != 0 || name.size() <= 5) return -1;
  int64_t v = 0;
  for (size_t i = 5; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return -1;
    v = v * 10 + (name[i] - '0');
  }
  return v;
}

// Complete checkpoints under root, newest first.
std::vector<std::pair<int64_t, std::string>> CompleteCheckpoints(const std::string& root) {
  std::vector<std::pair<int64_t, std::string>> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    const std::string name = e.path().filename().string();
    const int64_t step = StepOfDirName(name);
    if (step >= 0 && fs::exists(e.path() / "manifest.yaml", ec)) out.emplace_back(step, e.path().string());
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  return out;
}

Status Prune(const std::string& root, int keep) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec)) {  // stale temporaries of crashed saves
    const std::string name = e.path().filename().string();
    if (name.rfind("step-", 0) == 0 && (name.ends_with(".tmp") || name.ends_with(".old"))) fs::remove_all(e.path(), ec);
  }
  if (keep <= 0) return Status::Ok();
  auto all = CompleteCheckpoints(root);
  for (size_t i = static_cast<size_t>(keep); i < all.size(); ++i) {
    fs::remove_all(all[i].second, ec);
    if (ec) return IoError(fmt::format("cannot remove old checkpoint {}: {}", all[i].second, ec.message()));
  }
  return Status::Ok();
}

Status Publish(const std::string& root, const std::string& tmp, const std::string& final_dir,
               const CheckpointManifest& m, int keep) {
  ZINF_RETURN_IF_ERROR(WriteFileAtomic(tmp + "/manifest.yaml", ManifestYaml(m)));
  ZINF_RETURN_IF_ERROR(FsyncPath(tmp));
  std::error_code ec;
  if (fs::exists(final_dir, ec)) {  // re-saving a step (e.g. after a resume): replace it
    fs::rename(final_dir, final_dir + ".old", ec);
    if (ec) return IoError(fmt::format("cannot move aside {}: {}", final_dir, ec.message()));
  }
  fs::rename(tmp, final_dir, ec);
  if (ec) return IoError(fmt::format("cannot rename {} to {}: {}", tmp, final_dir, ec.message()));
  ZINF_RETURN_IF_ERROR(FsyncPath(root));
  ZINF_RETURN_IF_ERROR(WriteFileAtomic(root + "/latest", fs::path(final_dir).filename().string() + "\n"));
  return Prune(root, keep);
}

// Reads [offset, offset + n) of a file.
Status PreadAll(int fd, const std::string& path, void* dst, size_t n, uint64_t offset) {
  char* p = static_cast<char*>(dst);
  while (n > 0) {
    ssize_t r = ::pread(fd, p, n, static_cast<off_t>(offset));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Errno("cannot read", path);
    if (r == 0) return Corrupt(fmt::format("{}: truncated (ends at byte {})", path, offset));
    p += r;
    n -= static_cast<size_t>(r);
    offset += static_cast<uint64_t>(r);
  }
  return Status::Ok();
}

Status VerifyFile(const std::string& path, const CheckpointFile& f) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? NotFound(fmt::format("checkpoint file {} is missing", path))
                                     : Errno("cannot open", path);
  std::vector<char> buf(8 << 20);
  uint64_t off = 0;
  uint32_t crc = 0;
  Status st;
  for (;;) {
    ssize_t r = ::pread(fd, buf.data(), buf.size(), static_cast<off_t>(off));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      st = Errno("cannot read", path);
      break;
    }
    if (r == 0) break;
    crc = Crc32c(buf.data(), static_cast<size_t>(r), crc);
    off += static_cast<uint64_t>(r);
  }
  ::close(fd);
  ZINF_RETURN_IF_ERROR(st);
  if (off != f.bytes)
    return Corrupt(fmt::format("checkpoint file {} has {} bytes, the manifest says {}", path, off, f.bytes));
  if (crc != f.crc32c)
    return Corrupt(fmt::format("checkpoint file {} is corrupt: CRC-32C {:08x}, the manifest says {:08x}", path, crc,
                                f.crc32c));
  return Status::Ok();
}

Status CheckGroups(const CheckpointManifest& m, const std::string& dir, const std::vector<ParamGroup>& groups) {
  if (m.group_names.size() != groups.size())
    return InvalidArgument(fmt::format("{}/manifest.yaml: key 'groups' has {} parameter groups, this model has {} "
                                       "(a checkpoint of a different model or tiling)", dir, m.group_names.size(),
                                       groups.size()));
  for (size_t g = 0; g < groups.size(); ++g)
    if (m.group_names[g] != groups[g].name || m.group_numel[g] != groups[g].numel)
      return InvalidArgument(fmt::format("{}/manifest.yaml: key 'groups[{}]' is {} ({} elements), this model has {} ({})",
                                         dir, g, m.group_names[g], m.group_numel[g], groups[g].name, groups[g].numel));
  return Status::Ok();
}

// An old rank's file: where each group's three states start (floats from the file start).
struct OldRankFile {
  std::string path;
  int fd = -1;
  std::vector<uint64_t> base;  // per group
  std::vector<size_t> real;    // per group
};

class OldFiles {
 public:
  ~OldFiles() {
    for (auto& f : files_)
      if (f.fd >= 0) ::close(f.fd);
  }
  Status Init(const std::string& dir, const CheckpointManifest& m) {
    dir_ = dir;
    manifest_ = &m;
    for (uint64_t n : m.group_numel) old_.push_back(MakeGroupShard(n, m.meta.ranks));
    files_.resize(static_cast<size_t>(m.meta.ranks));
    return Status::Ok();
  }
  // Opens (and verifies, once) old rank q's file.
  Result<OldRankFile*> Get(int q) {
    OldRankFile& f = files_[static_cast<size_t>(q)];
    if (f.fd >= 0) return &f;
    const CheckpointFile* cf = nullptr;
    for (const CheckpointFile& c : manifest_->files)
      if (c.rank == q) cf = &c;
    if (!cf) return Corrupt(fmt::format("{}/manifest.yaml: key 'files' has no entry for rank {}", dir_, q));
    f.path = dir_ + "/" + cf->name;
    ZINF_RETURN_IF_ERROR(VerifyFile(f.path, *cf));
    uint64_t at = 0;
    for (const GroupShard& s : old_) {
      f.base.push_back(at);
      f.real.push_back(s.RealIn(q));
      at += 3 * s.RealIn(q);
    }
    f.fd = ::open(f.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (f.fd < 0) return Errno("cannot open", f.path);
    return &f;
  }
  // Copies elements [begin, end) of group g's state s (flat, real elements) into dst.
  Status Read(size_t g, int s, size_t begin, size_t end, float* dst) {
    const GroupShard& os = old_[g];
    for (size_t i = begin; i < end;) {
      const int q = static_cast<int>(i / os.shard);
      const size_t q_begin = static_cast<size_t>(q) * os.shard;
      ZINF_ASSIGN_OR_RETURN(OldRankFile * f, Get(q));
      const size_t n = std::min(end, q_begin + f->real[g]) - i;
      if (n == 0) return Internal(fmt::format("checkpoint {}: element {} of group {} is in no shard", dir_, i, g));
      const uint64_t off = (f->base[g] + static_cast<uint64_t>(s) * f->real[g] + (i - q_begin)) * sizeof(float);
      ZINF_RETURN_IF_ERROR(PreadAll(f->fd, f->path, dst + (i - begin), n * sizeof(float), off));
      i += n;
    }
    return Status::Ok();
  }

 private:
  std::string dir_;
  const CheckpointManifest* manifest_ = nullptr;
  std::vector<GroupShard> old_;
  std::vector<OldRankFile> files_;
};

}  // namespace

std::string CheckpointDirName(int64_t step) { return fmt::format("step-{:06d}", step); }

Status SaveCheckpoint(const std::string& root, const CheckpointMeta& meta, const std::vector<ParamGroup>& groups,
                      Zero3Engine& engine, Comm& comm, int keep) {
  const int rank = comm.rank();
  const std::string final_dir = root + "/" + CheckpointDirName(meta.step);
  const std::string tmp = final_dir + ".tmp";
  Status st;
  if (rank == 0) {
    st = MakeDirs(root);
    std::error_code ec;
    fs::remove_all(tmp, ec);
    if (st.ok()) st = MakeDirs(tmp);
  }
  ZINF_RETURN_IF_ERROR(Agree(comm, st.WithContext("checkpoint directory"), "creating the checkpoint directory"));
  CheckpointFile mine;
  st = WriteRankFile(tmp + "/" + RankFileName(rank), rank, engine.shards(), engine, &mine);
  ZINF_RETURN_IF_ERROR(Agree(comm, st, "writing the checkpoint shards"));
  // Rank 0 collects every file's size and checksum.
  struct Entry {
    uint64_t bytes;
    uint32_t crc;
    uint32_t pad;
  } e{mine.bytes, mine.crc32c, 0};
  std::vector<Entry> all(static_cast<size_t>(comm.size()));
  if (comm.size() > 1) ZINF_RETURN_IF_ERROR(comm.AllGatherBytes(&e, sizeof(e), all.data()));
  else all[0] = e;
  if (rank == 0) {
    TestHookPoint("checkpoint", meta.step, rank);  // tests: a crash mid-checkpoint
    CheckpointManifest m;
    m.meta = meta;
    m.meta.ranks = comm.size();
    for (const ParamGroup& g : groups) {
      m.group_names.push_back(g.name);
      m.group_numel.push_back(g.numel);
    }
    for (int q = 0; q < comm.size(); ++q)
      m.files.push_back({q, RankFileName(q), all[static_cast<size_t>(q)].bytes, all[static_cast<size_t>(q)].crc});
    st = Publish(root, tmp, final_dir, m, keep);
  }
  return Agree(comm, st, "publishing the checkpoint");
}

Result<std::string> ResolveCheckpoint(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return NotFound(fmt::format("checkpoint {} does not exist", path));
  if (fs::exists(fs::path(path) / "manifest.yaml", ec)) return path;
  const fs::path latest = fs::path(path) / "latest";
  if (fs::exists(latest, ec)) {
    ZINF_ASSIGN_OR_RETURN(std::string name, ReadFile(latest.string()));
    while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
    const fs::path dir = fs::path(path) / name;
    if (!name.empty() && name.find('/') == std::string::npos && fs::exists(dir / "manifest.yaml", ec)) return dir.string();
  }
  auto all = CompleteCheckpoints(path);
  if (all.empty())
    return NotFound(fmt::format("no checkpoint in {} (no 'latest' and no step-* directory with a manifest.yaml)", path));
  return all.front().second;
}

Result<CheckpointManifest> LoadManifest(const std::string& step_dir) {
  const std::string file = step_dir + "/manifest.yaml";
  ZINF_ASSIGN_OR_RETURN(YAML::Node root, LoadYamlFile(file));
  FieldReader r(root, file);
  CheckpointManifest m;
  const std::string format = r.String("format");
  if (!r.failed() && format != kFormat) r.Fail("format", fmt::format("'{}' is not supported (expected {})", format, kFormat));
  m.meta.step = r.Int("step", 0, int64_t{1} << 50);
  m.meta.adam_step = r.Int("adam_step", 0, int64_t{1} << 50);
  m.meta.ranks = static_cast<int>(r.Int("ranks", 1, 1 << 20));
  m.meta.model = r.String("model");
  const std::string seed = r.String("seed", std::string("0"));
  m.meta.seed = std::strtoull(seed.c_str(), nullptr, 10);
  m.meta.lr = static_cast<float>(r.Number("lr", 0, 1e6, 0.0));
  FieldReader d = r.Map("data");
  m.meta.data_path = d.String("path");
  m.meta.data_tokens = d.Int("tokens", 0, int64_t{1} << 50);
  d.Ignore("sampler");
  for (FieldReader& g : r.MapList("groups")) {
    m.group_names.push_back(g.String("name"));
    m.group_numel.push_back(static_cast<uint64_t>(g.Int("numel", 1, int64_t{1} << 50)));
  }
  for (FieldReader& f : r.MapList("files")) {
    CheckpointFile cf;
    cf.rank = static_cast<int>(f.Int("rank", 0, 1 << 20));
    cf.name = f.String("name");
    cf.bytes = static_cast<uint64_t>(f.Int("bytes", 0, int64_t{1} << 56));
    cf.crc32c = static_cast<uint32_t>(f.Int("crc32c", 0, 0xffffffffll));
    if (cf.name.find('/') != std::string::npos) f.Fail("name", "must be a file name inside the checkpoint directory");
    m.files.push_back(cf);
  }
  ZINF_RETURN_IF_ERROR(r.Finish());
  if (static_cast<int>(m.files.size()) != m.meta.ranks)
    return Corrupt(fmt::format("{}: key 'files' lists {} files for {} ranks", file, m.files.size(), m.meta.ranks));
  return m;
}

Result<CheckpointMeta> RestoreCheckpoint(const std::string& step_dir, const std::vector<ParamGroup>& groups,
                                         Zero3Engine& engine, Comm& comm) {
  Result<CheckpointManifest> m = LoadManifest(step_dir);
  Status st = m.status();
  if (st.ok()) st = CheckGroups(*m, step_dir, groups);
  if (st.ok()) {
    OldFiles old;
    st = old.Init(step_dir, *m);
    const int rank = comm.rank();
    const std::vector<GroupShard>& now = engine.shards();
    std::vector<float> buf;
    for (size_t g = 0; g < groups.size() && st.ok(); ++g) {
      const size_t begin = static_cast<size_t>(rank) * now[g].shard;
      const size_t real = now[g].RealIn(rank);
      for (int s = 0; s < 3 && st.ok(); ++s) {
        buf.assign(now[g].shard, 0.0f);  // the padding stays zero
        st = old.Read(g, s, begin, begin + real, buf.data());
        if (st.ok()) st = engine.WriteState(static_cast<int>(g), kStates[s], buf.data());
      }
    }
  }
  ZINF_RETURN_IF_ERROR(Agree(comm, st, "restoring the checkpoint"));
  engine.set_adam_step(m->meta.adam_step);
  return m->meta;
}

Status ReadCheckpointParams(const std::string& step_dir, const std::vector<ParamGroup>& groups,
                            std::vector<std::vector<float>>* out) {
  ZINF_ASSIGN_OR_RETURN(CheckpointManifest m, LoadManifest(step_dir));
  ZINF_RETURN_IF_ERROR(CheckGroups(m, step_dir, groups));
  OldFiles old;
  ZINF_RETURN_IF_ERROR(old.Init(step_dir, m));
  out->assign(groups.size(), {});
  for (size_t g = 0; g < groups.size(); ++g) {
    (*out)[g].resize(groups[g].numel);
    ZINF_RETURN_IF_ERROR(old.Read(g, 0, 0, groups[g].numel, (*out)[g].data()));
  }
  return Status::Ok();
}

}  // namespace zinf
