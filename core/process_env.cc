#include "core/process_env.h"

#include <unistd.h>

#include <cstdlib>

namespace zinf {

void EnsurePassiveOpenMpWait(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  if (::setenv("OMP_WAIT_POLICY", "passive", 1) != 0) return;
  ::execv("/proc/self/exe", argv);
  // exec failed: carry on with the variable set for any later-loaded runtime.
}

}  // namespace zinf
