#include "core/cpu_clock.h"

#include <time.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace zinf {
namespace {
double Read(clockid_t id) {
  timespec ts{};
  if (clock_gettime(id, &ts) != 0) return 0.0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
}  // namespace

double CurrentThreadCpuSeconds() { return Read(CLOCK_THREAD_CPUTIME_ID); }

double ThreadCpuSeconds(pthread_t thread) {
  clockid_t id;
  if (pthread_getcpuclockid(thread, &id) != 0) return 0.0;
  return Read(id);
}

double ProcessCpuSeconds() { return Read(CLOCK_PROCESS_CPUTIME_ID); }

NodeCpuTimes ReadNodeCpuTimes() {
  std::ifstream f("/proc/stat");
  std::string line;
  if (!f || !std::getline(f, line) || line.rfind("cpu ", 0) != 0) return {};
  std::istringstream in(line.substr(4));
  std::vector<double> v;
  for (double x; in >> x;) v.push_back(x);
  if (v.size() < 5) return {};
  // user nice system idle iowait irq softirq steal (guest and guest_nice are inside user and nice).
  double total = 0;
  for (size_t i = 0; i < v.size() && i < 8; ++i) total += v[i];
  const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  if (hz <= 0) return {};
  return {(total - v[3] - v[4]) / hz, total / hz};
}

}  // namespace zinf
