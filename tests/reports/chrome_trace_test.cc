#include "reports/chrome_trace.h"

#include <gtest/gtest.h>

#include "tests/remove_at_exit.h"
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/file_util.h"
#include "reports/svg.h"
#include "reports/trace_overlay.h"
#include "tests/reports/test_util.h"

namespace zinf::reports {
namespace {

std::string TempPath(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("zinf_reports_trace_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  zinf::testing::RemoveAtExit(dir.string());
  return (dir / name).string();
}

void Fill(ChromeTraceWriter& w) {
  w.SetProcessName(0, "rank 0");
  w.SetThreadName(0, 1, "compute");
  w.SetThreadName(0, 2, "H2D");
  w.SetThreadSortIndex(0, 2, 0);
  w.SetThreadSortIndex(0, 1, 1);
  w.SetMetadata("source", "predicted");
  w.Complete("fwd layer0", "compute", 10.0, 250.5, 0, 1, {{"flops", int64_t{123456789012}}, {"op", std::string("gemm")}});
  w.Complete("fetch layer1", "h2d", 0.0, 120.0, 0, 2);
  w.Counter("memory", 0.0, 0, {{"device", int64_t{1} << 33}, {"host", 1.5e10}});
  w.Instant("step end", "marker", 400.0, 0, 1);
}

TEST(ChromeTrace, JsonIsValidAndComplete) {
  ChromeTraceWriter w;
  Fill(w);
  auto j = nlohmann::json::parse(w.ToJson());
  ASSERT_TRUE(j.contains("traceEvents"));
  const auto& ev = j["traceEvents"];
  ASSERT_EQ(ev.size(), 9u);
  // Metadata first.
  EXPECT_EQ(ev[0]["ph"], "M");
  EXPECT_EQ(ev[0]["name"], "process_name");
  EXPECT_EQ(ev[0]["args"]["name"], "rank 0");
  EXPECT_EQ(ev[1]["name"], "thread_name");
  EXPECT_EQ(ev[3]["name"], "thread_sort_index");
  const auto& x = ev[5];
  EXPECT_EQ(x["ph"], "X");
  EXPECT_EQ(x["cat"], "compute");
  EXPECT_DOUBLE_EQ(x["ts"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(x["dur"].get<double>(), 250.5);
  EXPECT_EQ(x["args"]["flops"].get<int64_t>(), 123456789012);
  const auto& c = ev[7];
  EXPECT_EQ(c["ph"], "C");
  EXPECT_EQ(c["args"]["device"].get<int64_t>(), int64_t{1} << 33);
  EXPECT_FALSE(c.contains("tid"));
  EXPECT_EQ(ev[8]["ph"], "i");
  EXPECT_EQ(j["otherData"]["source"], "predicted");
  EXPECT_EQ(j["displayTimeUnit"], "ms");
}

TEST(ChromeTrace, RoundTripThroughReader) {
  ChromeTraceWriter w;
  Fill(w);
  std::string hostile(testing::kHostile);
  w.Complete(hostile, "we\"ird\n", 1, 2, 3, 4, {{hostile, hostile}});
  std::string path = TempPath("trace.json");
  ASSERT_TRUE(w.Write(path).ok());
  auto read = ReadChromeTrace(path);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  std::vector<TraceEvent> want = w.Events();
  ASSERT_EQ(read->size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const TraceEvent& a = want[i];
    const TraceEvent& b = (*read)[i];
    EXPECT_EQ(a.ph, b.ph) << i;
    EXPECT_EQ(a.name, b.name) << i;
    EXPECT_EQ(a.cat, b.cat) << i;
    EXPECT_DOUBLE_EQ(a.ts_us, b.ts_us) << i;
    EXPECT_DOUBLE_EQ(a.dur_us, b.dur_us) << i;
    EXPECT_EQ(a.pid, b.pid) << i;
    if (a.ph != 'C') {
      EXPECT_EQ(a.tid, b.tid) << i;
    }
    EXPECT_EQ(a.args, b.args) << i;
  }
  auto names = TraceThreadNames(*read);
  EXPECT_EQ((names[{0, 1}]), "compute");
  std::filesystem::remove(path);
}

TEST(ChromeTrace, ThreadSafe) {
  ChromeTraceWriter w;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&w, t] {
      w.SetThreadName(0, t, "stream " + std::to_string(t));
      for (int i = 0; i < 1000; ++i) {
        ScopedTraceEvent ev(&w, "op", "compute", 0, t);
        ev.args()["i"] = int64_t{i};
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(w.size(), 4000u);
  auto j = nlohmann::json::parse(w.ToJson());
  EXPECT_EQ(j["traceEvents"].size(), 4004u);
  for (const auto& e : w.Events())
    if (e.ph == 'X') {
      EXPECT_GE(e.dur_us, 0);
    }
}

TEST(ChromeTrace, NonFiniteTimesSanitised) {
  ChromeTraceWriter w;
  double nan = std::numeric_limits<double>::quiet_NaN();
  w.Complete("a", "c", nan, -5, 0, 0, {{"v", std::numeric_limits<double>::infinity()}});
  std::string json = w.ToJson();
  EXPECT_TRUE(nlohmann::json::accept(json));
  EXPECT_EQ(json.find("nan"), std::string::npos);
  EXPECT_EQ(json.find("null"), std::string::npos);
  auto ev = w.Events();
  EXPECT_EQ(ev[0].ts_us, 0);
  EXPECT_EQ(ev[0].dur_us, 0);
}

TEST(ChromeTrace, ReaderErrors) {
  auto missing = ReadChromeTrace("/nonexistent/zinf/trace.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
  EXPECT_NE(missing.status().message().find("/nonexistent/zinf/trace.json"), std::string::npos);

  auto bad = ParseChromeTrace("{not json", "x.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kCorrupt);
  EXPECT_NE(bad.status().message().find("x.json"), std::string::npos);

  auto no_events = ParseChromeTrace(R"({"foo": 1})", "y.json");
  ASSERT_FALSE(no_events.ok());
  EXPECT_NE(no_events.status().message().find("traceEvents"), std::string::npos);

  auto no_ph = ParseChromeTrace(R"([{"name":"a","ph":"X","ts":1},{"name":"b"}])", "z.json");
  ASSERT_FALSE(no_ph.ok());
  EXPECT_NE(no_ph.status().message().find("traceEvents[1]"), std::string::npos);

  auto bad_ts = ParseChromeTrace(R"([{"ph":"X","ts":"soon"}])", "t.json");
  EXPECT_FALSE(bad_ts.ok());
}

TEST(ChromeTrace, ReaderAcceptsArrayFormAndStringIds) {
  auto ev = ParseChromeTrace(
      R"([{"name":"a","ph":"X","ts":5,"dur":2,"pid":"3","tid":7,"args":{"n":1,"f":0.5,"s":"x","b":true}}])", "a.json");
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  ASSERT_EQ(ev->size(), 1u);
  const TraceEvent& e = (*ev)[0];
  EXPECT_EQ(e.pid, 3);
  EXPECT_EQ(e.tid, 7);
  EXPECT_EQ(std::get<int64_t>(e.args.at("n")), 1);
  EXPECT_DOUBLE_EQ(std::get<double>(e.args.at("f")), 0.5);
  EXPECT_EQ(std::get<std::string>(e.args.at("s")), "x");
  EXPECT_EQ(std::get<std::string>(e.args.at("b")), "true");
}

TEST(ChromeTrace, WriteErrorNamesPath) {
  ChromeTraceWriter w;
  Status st = w.Write("/nonexistent/zinf/dir/trace.json");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("/nonexistent/zinf/dir/trace.json"), std::string::npos);
}

TEST(TraceOverlay, LanesFromTrace) {
  ChromeTraceWriter w;
  Fill(w);
  std::vector<TraceEvent> events = w.Events();
  TraceLaneOptions opt;
  opt.group = "measured";
  std::vector<GanttLane> lanes = TraceToLanes(events, opt);
  ASSERT_EQ(lanes.size(), 2u);
  EXPECT_EQ(lanes[0].name, "H2D");  // thread_sort_index 0
  EXPECT_EQ(lanes[1].name, "compute");
  EXPECT_EQ(lanes[1].group, "measured");
  ASSERT_EQ(lanes[1].intervals.size(), 1u);
  EXPECT_DOUBLE_EQ(lanes[1].intervals[0].start_s, 10e-6);
  EXPECT_DOUBLE_EQ(lanes[1].intervals[0].dur_s, 250.5e-6);
  EXPECT_EQ(lanes[1].intervals[0].key, "compute");
  EXPECT_EQ(lanes[1].intervals[0].label, "fwd layer0");

  GanttChart g;
  g.title = "measured";
  g.lanes = lanes;
  std::string svg = RenderGantt(g).markup();
  testing::ExpectWellFormed(svg);
  testing::ExpectFinite(svg);
  EXPECT_NE(svg.find(" us</text>"), std::string::npos);
}

}  // namespace
}  // namespace zinf::reports
