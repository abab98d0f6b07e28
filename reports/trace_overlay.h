// Turns Chrome trace events into timeline lanes, e.g. to draw a predicted and a measured
// trace one above the other (two calls with groups "predicted" and "measured").
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "reports/chrome_trace.h"
#include "reports/svg.h"

namespace zinf::reports {

struct TraceLaneOptions {
  std::string group = {};  // GanttLane::group for every lane
  // Subtracted from every ts; NaN: the earliest complete event's ts.
  double origin_us = std::numeric_limits<double>::quiet_NaN();
  bool key_by_name = false;  // colour by event name instead of category
};

// One lane per (pid, tid) with complete ('X') events, ordered by thread_sort_index then
// (pid, tid), named from thread_name metadata (prefixed by process_name when the trace
// has several processes). Times are converted to seconds.
std::vector<GanttLane> TraceToLanes(const std::vector<TraceEvent>& events,
                                    const TraceLaneOptions& options = {});

}  // namespace zinf::reports
