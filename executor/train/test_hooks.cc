#include "executor/train/test_hooks.h"

#include <fmt/format.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <string>
#include <string_view>

namespace zinf {

namespace {

// "POINT[:STEP[:RANK]]" matches (point, step, rank)?
bool Matches(const char* spec, const char* point, int64_t step, int rank) {
  if (!spec) return false;
  std::string_view s(spec);
  const size_t c1 = s.find(':');
  if (s.substr(0, c1) != point) return false;
  if (c1 == std::string_view::npos) return true;
  const std::string rest(s.substr(c1 + 1));
  const size_t c2 = rest.find(':');
  if (std::strtoll(rest.substr(0, c2).c_str(), nullptr, 10) != step) return false;
  return c2 == std::string::npos || std::strtol(rest.c_str() + c2 + 1, nullptr, 10) == rank;
}

}  // namespace

void TestHookPoint(const char* point, int64_t step, int rank) {
  if (Matches(std::getenv("ZINF_TEST_CRASH"), point, step, rank)) std::raise(SIGKILL);
  if (Matches(std::getenv("ZINF_TEST_HANG"), point, step, rank))
    for (;;) ::pause();
}

Result<std::optional<FaultSpec>> TestNvmeFaultsFromEnv() {
  const char* v = std::getenv("ZINF_TEST_NVME_FAULT");
  if (!v || !*v) return std::optional<FaultSpec>();
  FaultSpec f;
  std::string_view s(v);
  while (!s.empty()) {
    const size_t comma = s.find(',');
    const std::string item(s.substr(0, comma));
    s = comma == std::string_view::npos ? std::string_view() : s.substr(comma + 1);
    const size_t eq = item.find('=');
    if (eq == std::string::npos) return InvalidArgument(fmt::format("ZINF_TEST_NVME_FAULT: '{}' is not KEY=VALUE", item));
    const std::string key = item.substr(0, eq);
    char* end = nullptr;
    const long long n = std::strtoll(item.c_str() + eq + 1, &end, 10);
    if (*end != '\0' || n < 0) return InvalidArgument(fmt::format("ZINF_TEST_NVME_FAULT: '{}' needs a count >= 0", item));
    if (key == "enospc_after") f.enospc_after_bytes = n;
    else if (key == "eio_on_op") f.eio_on_op = n;
    else if (key == "short_every") f.short_every = static_cast<uint32_t>(n);
    else if (key == "corrupt_offset") f.corrupt_offset = n;
    else return InvalidArgument(fmt::format("ZINF_TEST_NVME_FAULT: unknown key '{}' (allowed: enospc_after, eio_on_op, "
                                            "short_every, corrupt_offset)", key));
  }
  return std::optional<FaultSpec>(f);
}

}  // namespace zinf
