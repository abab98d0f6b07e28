// Choosing and opening a file-backed Storage, with the documented fallback chain:
// auto = uring -> posix-direct (io_uring unavailable) -> posix (O_DIRECT unsupported).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "executor/storage/pinned_host_pool.h"
#include "executor/storage/storage.h"

namespace zinf {

enum class StoreBackend { kAuto, kUring, kPosixDirect, kPosix, kMem };

// "auto", "uring", "posix-direct", "posix", "mem".
Result<StoreBackend> ParseStoreBackend(std::string_view name);
const char* StoreBackendName(StoreBackend b);

struct OpenedStore {
  std::unique_ptr<Storage> store;
  std::string note;  // the fallbacks taken and why (empty if the first choice worked)
};

// `pool` (may be null) is registered as fixed buffers by the uring backend.
// Only Unsupported errors trigger a fallback; others (NotFound, Io, ...) are returned.
Result<OpenedStore> OpenStore(const std::string& path, const StorageOptions& options, StoreBackend backend,
                              const PinnedHostPool* pool = nullptr, bool truncate = true);

}  // namespace zinf
