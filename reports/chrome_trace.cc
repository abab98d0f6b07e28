#include "reports/chrome_trace.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/file_util.h"

namespace zinf::reports {
namespace {

using json = nlohmann::ordered_json;

double Finite(double v) { return std::isfinite(v) ? v : 0.0; }

json ArgsJson(const TraceArgs& args) {
  json j = json::object();
  for (const auto& [k, v] : args) {
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, double>) j[k] = Finite(x);
          else j[k] = x;
        },
        v);
  }
  return j;
}

json EventJson(const TraceEvent& e) {
  json j;
  j["name"] = e.name;
  if (!e.cat.empty()) j["cat"] = e.cat;
  j["ph"] = std::string(1, e.ph);
  if (e.ph != 'M') j["ts"] = Finite(e.ts_us);
  if (e.ph == 'X') j["dur"] = std::max(0.0, Finite(e.dur_us));
  j["pid"] = e.pid;
  if (e.ph != 'C') j["tid"] = e.tid;
  if (e.ph == 'i') j["s"] = "t";
  if (!e.args.empty() || e.ph == 'C' || e.ph == 'M') j["args"] = ArgsJson(e.args);
  return j;
}

TraceEvent Meta(std::string name, int64_t pid, int64_t tid, const char* key, TraceArgValue v) {
  TraceEvent e;
  e.ph = 'M';
  e.name = std::move(name);
  e.pid = pid;
  e.tid = tid;
  e.args[key] = std::move(v);
  return e;
}

// Integer field: JSON integers, integral floats and numeric strings are accepted.
bool ReadId(const json& j, const char* key, int64_t* out) {
  auto it = j.find(key);
  if (it == j.end()) return true;
  if (it->is_number_integer() || it->is_number_unsigned()) { *out = it->get<int64_t>(); return true; }
  if (it->is_number_float()) { *out = static_cast<int64_t>(it->get<double>()); return true; }
  if (it->is_string()) {
    try {
      *out = std::stoll(it->get<std::string>());
      return true;
    } catch (...) {
      return false;
    }
  }
  return false;
}

bool ReadNumber(const json& j, const char* key, double* out) {
  auto it = j.find(key);
  if (it == j.end()) return true;
  if (!it->is_number()) return false;
  *out = it->get<double>();
  return true;
}

}  // namespace

ChromeTraceWriter::ChromeTraceWriter() : epoch_(std::chrono::steady_clock::now()) {}

void ChromeTraceWriter::SetProcessName(int64_t pid, std::string name) {
  std::lock_guard lock(mu_);
  process_names_[pid] = std::move(name);
}

void ChromeTraceWriter::SetThreadName(int64_t pid, int64_t tid, std::string name) {
  std::lock_guard lock(mu_);
  thread_names_[{pid, tid}] = std::move(name);
}

void ChromeTraceWriter::SetThreadSortIndex(int64_t pid, int64_t tid, int64_t index) {
  std::lock_guard lock(mu_);
  thread_sort_[{pid, tid}] = index;
}

void ChromeTraceWriter::SetMetadata(std::string key, std::string value) {
  std::lock_guard lock(mu_);
  other_[std::move(key)] = std::move(value);
}

void ChromeTraceWriter::Complete(std::string name, std::string cat, double ts_us, double dur_us,
                                 int64_t pid, int64_t tid, TraceArgs args) {
  TraceEvent e{'X', std::move(name), std::move(cat), Finite(ts_us), std::max(0.0, Finite(dur_us)),
               pid, tid, std::move(args)};
  Add(std::move(e));
}

void ChromeTraceWriter::Counter(std::string name, double ts_us, int64_t pid, TraceArgs values) {
  Add(TraceEvent{'C', std::move(name), {}, Finite(ts_us), 0, pid, 0, std::move(values)});
}

void ChromeTraceWriter::Instant(std::string name, std::string cat, double ts_us, int64_t pid,
                                int64_t tid, TraceArgs args) {
  Add(TraceEvent{'i', std::move(name), std::move(cat), Finite(ts_us), 0, pid, tid, std::move(args)});
}

void ChromeTraceWriter::Add(TraceEvent event) {
  std::lock_guard lock(mu_);
  if (max_events_ > 0 && events_.size() >= max_events_) {
    ++dropped_;
    return;
  }
  events_.push_back(std::move(event));
}

void ChromeTraceWriter::SetMaxEvents(size_t n) {
  std::lock_guard lock(mu_);
  max_events_ = n;
}

size_t ChromeTraceWriter::dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

double ChromeTraceWriter::NowUs() const {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - epoch_).count();
}

size_t ChromeTraceWriter::size() const {
  std::lock_guard lock(mu_);
  return events_.size();
}

std::vector<TraceEvent> ChromeTraceWriter::Events() const {
  std::lock_guard lock(mu_);
  std::vector<TraceEvent> out;
  out.reserve(events_.size() + process_names_.size() + thread_names_.size() + thread_sort_.size());
  for (const auto& [pid, name] : process_names_) out.push_back(Meta("process_name", pid, 0, "name", name));
  for (const auto& [id, name] : thread_names_) out.push_back(Meta("thread_name", id.first, id.second, "name", name));
  for (const auto& [id, idx] : thread_sort_)
    out.push_back(Meta("thread_sort_index", id.first, id.second, "sort_index", idx));
  out.insert(out.end(), events_.begin(), events_.end());
  return out;
}

std::string ChromeTraceWriter::ToJson() const {
  std::vector<TraceEvent> events = Events();
  std::map<std::string, std::string> other;
  {
    std::lock_guard lock(mu_);
    other = other_;
  }
  // One event per line: readable, diffable, and cheap to stream.
  std::string out = "{\"traceEvents\": [\n";
  for (size_t i = 0; i < events.size(); ++i) {
    out += EventJson(events[i]).dump(-1, ' ', false, json::error_handler_t::replace);
    out += i + 1 < events.size() ? ",\n" : "\n";
  }
  out += "],\n\"displayTimeUnit\": \"ms\"";
  if (!other.empty()) {
    json o = json::object();
    for (const auto& [k, v] : other) o[k] = v;
    out += ",\n\"otherData\": " + o.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  out += "\n}\n";
  return out;
}

Status ChromeTraceWriter::Write(const std::string& path) const {
  Status st = WriteFileAtomic(path, ToJson());
  if (!st.ok()) return st.WithContext(fmt::format("writing Chrome trace {}", path));
  return st;
}

ScopedTraceEvent::ScopedTraceEvent(ChromeTraceWriter* writer, std::string name, std::string cat,
                                   int64_t pid, int64_t tid)
    : writer_(writer), name_(std::move(name)), cat_(std::move(cat)), pid_(pid), tid_(tid),
      start_us_(writer ? writer->NowUs() : 0) {}

ScopedTraceEvent::~ScopedTraceEvent() {
  if (!writer_) return;
  writer_->Complete(std::move(name_), std::move(cat_), start_us_, writer_->NowUs() - start_us_, pid_,
                    tid_, std::move(args_));
}

Result<std::vector<TraceEvent>> ParseChromeTrace(std::string_view text, std::string_view origin) {
  json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Corrupt(fmt::format("{}: not valid JSON", origin));
  const json* arr = &doc;
  if (doc.is_object()) {
    auto it = doc.find("traceEvents");
    if (it == doc.end() || !it->is_array())
      return Corrupt(fmt::format("{}: key 'traceEvents': missing or not an array", origin));
    arr = &*it;
  } else if (!doc.is_array()) {
    return Corrupt(fmt::format("{}: expected an object with 'traceEvents' or an array", origin));
  }
  std::vector<TraceEvent> out;
  out.reserve(arr->size());
  for (size_t i = 0; i < arr->size(); ++i) {
    const json& j = (*arr)[i];
    auto bad = [&](std::string_view what) {
      return Corrupt(fmt::format("{}: traceEvents[{}]: {}", origin, i, what));
    };
    if (!j.is_object()) return bad("not an object");
    TraceEvent e;
    auto ph = j.find("ph");
    if (ph == j.end() || !ph->is_string() || ph->get<std::string>().size() != 1)
      return bad("key 'ph': missing or not a one-letter string");
    e.ph = ph->get<std::string>()[0];
    if (auto it = j.find("name"); it != j.end() && it->is_string()) e.name = it->get<std::string>();
    if (auto it = j.find("cat"); it != j.end() && it->is_string()) e.cat = it->get<std::string>();
    if (!ReadNumber(j, "ts", &e.ts_us)) return bad("key 'ts': not a number");
    if (!ReadNumber(j, "dur", &e.dur_us)) return bad("key 'dur': not a number");
    if (!ReadId(j, "pid", &e.pid)) return bad("key 'pid': not an integer");
    if (!ReadId(j, "tid", &e.tid)) return bad("key 'tid': not an integer");
    if (auto it = j.find("args"); it != j.end() && it->is_object()) {
      for (const auto& [k, v] : it->items()) {
        if (v.is_number_integer() || v.is_number_unsigned()) e.args[k] = v.get<int64_t>();
        else if (v.is_number_float()) e.args[k] = v.get<double>();
        else if (v.is_string()) e.args[k] = v.get<std::string>();
        else e.args[k] = v.dump();
      }
    }
    out.push_back(std::move(e));
  }
  return out;
}

Result<std::vector<TraceEvent>> ReadChromeTrace(const std::string& path) {
  ZINF_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseChromeTrace(text, path);
}

std::map<std::pair<int64_t, int64_t>, std::string> TraceThreadNames(
    const std::vector<TraceEvent>& events) {
  std::map<std::pair<int64_t, int64_t>, std::string> out;
  for (const auto& e : events) {
    if (e.ph != 'M' || e.name != "thread_name") continue;
    auto it = e.args.find("name");
    if (it != e.args.end())
      if (const auto* s = std::get_if<std::string>(&it->second)) out[{e.pid, e.tid}] = *s;
  }
  return out;
}

}  // namespace zinf::reports
