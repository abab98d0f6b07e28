#include "core/process_env.h"

#include <pthread.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace zinf {

void EnsurePassiveOpenMpWait(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  if (::setenv("OMP_WAIT_POLICY", "passive", 1) != 0) return;
  // A bounded spin first (libgomp reads it even with the passive policy): a few hundred us.
  if (std::getenv("GOMP_SPINCOUNT") == nullptr) (void)::setenv("GOMP_SPINCOUNT", kOpenMpSpinCount, 1);
  ::execv("/proc/self/exe", argv);
  // exec failed: carry on with the variable set for any later-loaded runtime.
}

void SetThreadName(const char* name) {
  std::string n = std::string("zinf:") + name;
  if (n.size() > 15) n.resize(15);
  (void)pthread_setname_np(pthread_self(), n.c_str());
}

}  // namespace zinf
