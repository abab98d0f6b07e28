#include "planner/report/sim_trace.h"

#include "reports/chrome_trace.h"

namespace zinf {

Status WriteSimTrace(const SimResult& r, const std::string& path) {
  reports::ChromeTraceWriter w;
  w.SetMetadata("source", "predicted");
  w.SetProcessName(0, "simulated rank");
  for (int i = 0; i < kNumRes; ++i) {
    w.SetThreadName(0, i, ResName(static_cast<Res>(i)));
    w.SetThreadSortIndex(0, i, i);
  }
  // A task whose CPU the model gives apart from its time carries it as zrun's events carry
  // theirs (args.cpu_us).
  for (const SimTask& t : r.tasks)
    w.Complete(t.name.empty() ? ResName(t.res) : t.name, t.phase, t.start_s * 1e6, t.dur_s * 1e6, 0, static_cast<int>(t.res),
               t.cpu_s > 0 ? reports::TraceArgs{{"cpu_us", t.cpu_s * 1e6}} : reports::TraceArgs{});
  return w.Write(path);
}

}  // namespace zinf
