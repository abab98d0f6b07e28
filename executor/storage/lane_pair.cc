#include "executor/storage/lane_pair.h"

#include <chrono>

#include "executor/storage/crc32c.h"

namespace zinf {

Result<LanePair> TimeLanePair(Storage& store, void* rbuf, const void* wbuf, uint64_t bytes, uint64_t file_bytes, uint64_t i) {
  const uint64_t slots = file_bytes / bytes;
  LanePair p;
  p.read_off = (i * 7919 % slots) * bytes;
  p.write_off = ((i * 7919 + slots / 2) % slots) * bytes;
  volatile uint32_t sink = 0;
  const auto t0 = std::chrono::steady_clock::now();
  ZINF_RETURN_IF_ERROR(store.Read(p.read_off, rbuf, bytes));
  sink = sink + Crc32c(rbuf, bytes);
  const auto t1 = std::chrono::steady_clock::now();
  sink = sink + Crc32c(wbuf, bytes);
  ZINF_RETURN_IF_ERROR(store.Write(p.write_off, wbuf, bytes));
  const auto t2 = std::chrono::steady_clock::now();
  p.read_s = std::chrono::duration<double>(t1 - t0).count();
  p.write_s = std::chrono::duration<double>(t2 - t1).count();
  return p;
}

}  // namespace zinf
