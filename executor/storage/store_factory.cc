#include "executor/storage/store_factory.h"

#include <fmt/format.h>

#include "executor/storage/mem_store.h"
#include "executor/storage/posix_store.h"
#include "executor/storage/uring_store.h"

namespace zinf {

Result<StoreBackend> ParseStoreBackend(std::string_view name) {
  if (name == "auto") return StoreBackend::kAuto;
  if (name == "uring") return StoreBackend::kUring;
  if (name == "posix-direct") return StoreBackend::kPosixDirect;
  if (name == "posix") return StoreBackend::kPosix;
  if (name == "mem") return StoreBackend::kMem;
  return InvalidArgument(fmt::format("storage backend '{}': allowed values are auto, uring, "
                                     "posix-direct, posix, mem", name));
}

const char* StoreBackendName(StoreBackend b) {
  switch (b) {
    case StoreBackend::kAuto: return "auto";
    case StoreBackend::kUring: return "uring";
    case StoreBackend::kPosixDirect: return "posix-direct";
    case StoreBackend::kPosix: return "posix";
    case StoreBackend::kMem: return "mem";
  }
  return "?";
}

Result<OpenedStore> OpenStore(const std::string& path, const StorageOptions& options, StoreBackend backend,
                              const PinnedHostPool* pool, bool truncate) {
  OpenedStore out;
  switch (backend) {
    case StoreBackend::kMem: {
      ZINF_ASSIGN_OR_RETURN(out.store, MemStore::Create(path, options));
      return out;
    }
    case StoreBackend::kUring: {
      ZINF_ASSIGN_OR_RETURN(out.store, UringStore::Open(path, options, pool, truncate));
      return out;
    }
    case StoreBackend::kPosixDirect:
    case StoreBackend::kPosix: {
      ZINF_ASSIGN_OR_RETURN(out.store,
                            PosixStore::Open(path, options, backend == StoreBackend::kPosixDirect, truncate));
      return out;
    }
    case StoreBackend::kAuto: break;
  }
  auto uring = UringStore::Open(path, options, pool, truncate);
  if (uring.ok()) {
    out.store = std::move(uring).value();
    return out;
  }
  if (uring.status().code() != Code::kUnsupported) return uring.status();
  out.note = "uring: " + uring.status().message();
  auto direct = PosixStore::Open(path, options, /*direct=*/true, truncate);
  if (direct.ok()) {
    out.store = std::move(direct).value();
    return out;
  }
  if (direct.status().code() != Code::kUnsupported) return direct.status();
  out.note += "; posix-direct: " + direct.status().message();
  ZINF_ASSIGN_OR_RETURN(out.store, PosixStore::Open(path, options, /*direct=*/false, truncate));
  return out;
}

}  // namespace zinf
