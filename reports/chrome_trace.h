// Chrome trace event format (chrome://tracing, Perfetto, speedscope):
//   {"traceEvents": [ {"name","cat","ph":"X","ts","dur","pid","tid","args"}, ... ],
//    "displayTimeUnit": "ms", "otherData": {...}}
// Complete events (ph "X") for intervals, metadata events (ph "M": process_name,
// thread_name, *_sort_index) so lanes are named and ordered, counter events (ph "C") for
// values over time (e.g. memory per tier). Times are microseconds.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/status.h"

namespace zinf::reports {

using TraceArgValue = std::variant<int64_t, double, std::string>;
using TraceArgs = std::map<std::string, TraceArgValue>;

struct TraceEvent {
  char ph = 'X';      // 'X' complete, 'M' metadata, 'C' counter, 'i' instant, ...
  std::string name = {};
  std::string cat = {};
  double ts_us = 0;
  double dur_us = 0;  // 'X' only
  int64_t pid = 0;
  int64_t tid = 0;
  TraceArgs args = {};
};

// Collects events; every method is thread-safe (one mutex), so executor streams and
// worker threads can record into one writer.
class ChromeTraceWriter {
 public:
  ChromeTraceWriter();

  void SetProcessName(int64_t pid, std::string name);
  void SetThreadName(int64_t pid, int64_t tid, std::string name);
  void SetThreadSortIndex(int64_t pid, int64_t tid, int64_t index);
  // "otherData" entries (e.g. source = "predicted", plan = "plan.yaml").
  void SetMetadata(std::string key, std::string value);

  // Non-finite times become 0 and negative durations 0.
  void Complete(std::string name, std::string cat, double ts_us, double dur_us, int64_t pid,
                int64_t tid, TraceArgs args = {});
  // One counter track per (pid, name); each arg is a series (e.g. {"device", bytes}).
  void Counter(std::string name, double ts_us, int64_t pid, TraceArgs values);
  void Instant(std::string name, std::string cat, double ts_us, int64_t pid, int64_t tid,
               TraceArgs args = {});
  void Add(TraceEvent event);
  // At most n events are kept (0: no limit); later ones are counted in dropped().
  void SetMaxEvents(size_t n);
  size_t dropped() const;

  // Microseconds since this writer was constructed (steady clock), for measured traces.
  double NowUs() const;

  size_t size() const;
  // Metadata events first (sorted by pid, tid), then the others in the order recorded.
  std::vector<TraceEvent> Events() const;
  std::string ToJson() const;
  Status Write(const std::string& path) const;  // atomic; the error names the path

 private:
  mutable std::mutex mu_;
  std::chrono::steady_clock::time_point epoch_;
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names_;
  std::map<std::pair<int64_t, int64_t>, int64_t> thread_sort_;
  std::map<int64_t, std::string> process_names_;
  std::map<std::string, std::string> other_;
  std::vector<TraceEvent> events_;
  size_t max_events_ = 0, dropped_ = 0;
};

// Records a complete event from construction to destruction (measured phases).
class ScopedTraceEvent {
 public:
  ScopedTraceEvent(ChromeTraceWriter* writer, std::string name, std::string cat, int64_t pid,
                   int64_t tid);
  ~ScopedTraceEvent();
  ScopedTraceEvent(const ScopedTraceEvent&) = delete;
  ScopedTraceEvent& operator=(const ScopedTraceEvent&) = delete;
  TraceArgs& args() { return args_; }

 private:
  ChromeTraceWriter* writer_;
  std::string name_, cat_;
  int64_t pid_, tid_;
  double start_us_;
  TraceArgs args_;
};

// Parses a trace: the object form ({"traceEvents": [...]}) or the bare array form.
// `origin` names the source in errors. Unknown fields are ignored.
Result<std::vector<TraceEvent>> ParseChromeTrace(std::string_view json, std::string_view origin);
Result<std::vector<TraceEvent>> ReadChromeTrace(const std::string& path);

// Lane names from thread_name metadata: (pid, tid) -> name.
std::map<std::pair<int64_t, int64_t>, std::string> TraceThreadNames(
    const std::vector<TraceEvent>& events);

}  // namespace zinf::reports
