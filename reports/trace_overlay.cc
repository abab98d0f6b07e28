#include "reports/trace_overlay.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace zinf::reports {

std::vector<GanttLane> TraceToLanes(const std::vector<TraceEvent>& events,
                                    const TraceLaneOptions& options) {
  using Id = std::pair<int64_t, int64_t>;
  std::map<Id, std::string> thread_names = TraceThreadNames(events);
  std::map<int64_t, std::string> process_names;
  std::map<Id, int64_t> sort_index;
  std::set<int64_t> pids;
  double origin = options.origin_us;
  bool find_origin = !std::isfinite(origin);
  if (find_origin) origin = HUGE_VAL;
  for (const auto& e : events) {
    if (e.ph == 'M') {
      auto it = e.args.find(e.name == "thread_sort_index" ? "sort_index" : "name");
      if (it == e.args.end()) continue;
      if (e.name == "process_name") {
        if (const auto* s = std::get_if<std::string>(&it->second)) process_names[e.pid] = *s;
      } else if (e.name == "thread_sort_index") {
        if (const auto* v = std::get_if<int64_t>(&it->second)) sort_index[{e.pid, e.tid}] = *v;
        else if (const auto* d = std::get_if<double>(&it->second)) sort_index[{e.pid, e.tid}] = static_cast<int64_t>(*d);
      }
    } else if (e.ph == 'X') {
      pids.insert(e.pid);
      if (find_origin) origin = std::min(origin, e.ts_us);
    }
  }
  if (!std::isfinite(origin)) origin = 0;

  std::map<Id, GanttLane> lanes;
  for (const auto& e : events) {
    if (e.ph != 'X') continue;
    Id id{e.pid, e.tid};
    auto [it, inserted] = lanes.try_emplace(id);
    GanttLane& lane = it->second;
    if (inserted) {
      auto tn = thread_names.find(id);
      std::string name = tn != thread_names.end() ? tn->second : fmt::format("tid {}", e.tid);
      if (pids.size() > 1) {
        auto pn = process_names.find(e.pid);
        name = (pn != process_names.end() ? pn->second : fmt::format("pid {}", e.pid)) + " / " + name;
      }
      lane.name = std::move(name);
      lane.group = options.group;
    }
    GanttInterval iv;
    iv.start_s = (e.ts_us - origin) * 1e-6;
    iv.dur_s = e.dur_us * 1e-6;
    iv.label = e.name;
    iv.key = options.key_by_name || e.cat.empty() ? e.name : e.cat;
    lane.intervals.push_back(std::move(iv));
  }
  std::vector<std::pair<Id, GanttLane*>> order;
  for (auto& [id, lane] : lanes) order.emplace_back(id, &lane);
  std::stable_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    auto sa = sort_index.find(a.first), sb = sort_index.find(b.first);
    int64_t ka = sa != sort_index.end() ? sa->second : INT64_MAX;
    int64_t kb = sb != sort_index.end() ? sb->second : INT64_MAX;
    if (ka != kb) return ka < kb;
    return a.first < b.first;
  });
  std::vector<GanttLane> out;
  out.reserve(order.size());
  for (auto& [id, lane] : order) out.push_back(std::move(*lane));
  return out;
}

}  // namespace zinf::reports
