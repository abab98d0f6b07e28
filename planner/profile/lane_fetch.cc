#include "planner/profile/lane_fetch.h"

#include <cmath>
#include <cstring>
#include <ctime>

namespace zinf {

SignalPtr SubmitCopyFetch(Lane& nvme, Lane& copy, double nvme_wait_s, float* host, float* dev, size_t floats) {
  SignalPtr prev;
  if (nvme_wait_s > 0)
    prev = nvme.Submit([nvme_wait_s, host] {
      const timespec ts{static_cast<time_t>(nvme_wait_s), static_cast<long>((nvme_wait_s - std::floor(nvme_wait_s)) * 1e9)};
      ::nanosleep(&ts, nullptr);
      host[0] += 1.0f;
      return Status::Ok();
    });
  return copy.Submit([prev, host, dev, floats] {
    if (prev) ZINF_RETURN_IF_ERROR(prev->Wait());
    std::memcpy(dev, host, floats * sizeof(float));
    return Status::Ok();
  });
}

}  // namespace zinf
