#include "reports/svg.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "tests/reports/test_util.h"

namespace zinf::reports {
namespace {

using testing::ExpectFinite;
using testing::ExpectNoRawHostile;
using testing::ExpectWellFormed;
using testing::kHostile;

constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

BarChart MemoryChart() {
  BarChart c;
  c.title = "Memory per tier against capacity";
  c.categories = {"GPU", "CPU", "NVMe"};
  c.series = {{"params", {10 * kGiB, 200 * kGiB, 1000 * kGiB}, ""},
              {"optimizer", {2 * kGiB, 600 * kGiB, 3000 * kGiB}, ""}};
  c.capacity = {32 * kGiB, 512 * kGiB, 3500 * kGiB};
  c.value_axis = {"bytes per node", Unit::kBytes};
  return c;
}

size_t Count(const std::string& s, std::string_view what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(BarChart, GroupedVerticalWithCapacity) {
  Svg svg = RenderBarChart(MemoryChart());
  const std::string& out = svg.markup();
  ExpectWellFormed(out);
  ExpectFinite(out);
  EXPECT_TRUE(out.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_NE(out.find("<title>Memory per tier against capacity</title>"), std::string::npos);
  EXPECT_NE(out.find("stroke-dasharray"), std::string::npos);     // capacity markers
  EXPECT_NE(out.find("#c62828"), std::string::npos);              // CPU optimizer > capacity
  EXPECT_NE(out.find("CPU · optimizer: 600 GiB (117% of 512 GiB capacity)"), std::string::npos);
  EXPECT_NE(out.find("GPU capacity: 32 GiB"), std::string::npos);
  EXPECT_NE(out.find(">capacity</text>"), std::string::npos);     // legend
  EXPECT_TRUE(svg.notes().empty());
  EXPECT_EQ(out.find("<script"), std::string::npos);
  EXPECT_EQ(out.find("href"), std::string::npos);                 // no external references
}

TEST(BarChart, StackedAndHorizontalVariants) {
  BarChart c;
  c.title = "Step time breakdown";
  c.categories = {"zero3-gpu", "offload-cpu", "offload-nvme"};
  c.series = {{"compute", {1.0, 1.1, 1.2}, ""},
              {"h2d", {0.0, 0.4, 0.9}, ""},
              {"nvme read", {0, 0, 2.5}, ""}};
  c.value_axis = {"seconds per step", Unit::kSeconds};
  c.layout = BarLayout::kStacked;
  for (auto o : {Orientation::kVertical, Orientation::kHorizontal}) {
    c.orientation = o;
    std::string out = RenderBarChart(c).markup();
    ExpectWellFormed(out);
    ExpectFinite(out);
    EXPECT_NE(out.find("4.6 s"), std::string::npos) << "stack total label";
  }
  c.layout = BarLayout::kGrouped;
  c.orientation = Orientation::kHorizontal;
  c.series[0].values = {-0.5, 1, 2};  // negative bars extend the other way
  std::string out = RenderBarChart(c).markup();
  ExpectWellFormed(out);
  ExpectFinite(out);
}

TEST(BarChart, BadDataIsDroppedWithNotes) {
  BarChart c = MemoryChart();
  c.series[0].values = {kNaN, kInf, 1.0, 2.0};  // non-finite + an extra value
  c.series[1].values = {1.0};                  // missing values
  c.value_axis.scale = Scale::kLog10;
  Svg svg = RenderBarChart(c);
  ExpectWellFormed(svg.markup());
  ExpectFinite(svg.markup());
  EXPECT_GE(svg.notes().size(), 4u);
  EXPECT_NE(svg.markup().find("note: series &#39;params&#39;: 2 non-finite values not drawn"), std::string::npos);
}

TEST(BarChart, EmptyChart) {
  BarChart c;
  for (const auto& svg : {RenderBarChart(c), [] {
                            BarChart e;
                            e.categories = {"a", "b"};
                            e.series = {{"s", {}, ""}};
                            return RenderBarChart(e);
                          }()}) {
    ExpectWellFormed(svg.markup());
    ExpectFinite(svg.markup());
    EXPECT_NE(svg.markup().find("no data"), std::string::npos);
  }
}

LineChart ThroughputChart() {
  LineChart c;
  c.title = "TFLOP/s per GPU vs model size";
  c.x = {"parameters", Unit::kCount, Scale::kLog10};
  c.y = {"throughput per GPU", Unit::kFlops, Scale::kLinear, true};
  c.series = {{"ZeRO-3", {{1e9, 40e12}, {1e10, 38e12}, {1e11, 30e12}}, "", true, false},
              {"ZeRO-Infinity (NVMe)", {{1e9, 35e12}, {1e11, 33e12}, {1e12, 30e12, "32 nodes"}}, "", true, true}};
  return c;
}

TEST(LineChart, LogXLinearY) {
  Svg svg = RenderLineChart(ThroughputChart());
  const std::string& out = svg.markup();
  ExpectWellFormed(out);
  EXPECT_EQ(out.find("nan"), std::string::npos);
  EXPECT_NE(out.find("<polyline"), std::string::npos);
  EXPECT_NE(out.find("1T"), std::string::npos);           // x tick label
  EXPECT_NE(out.find("TFLOP/s"), std::string::npos);      // y tick label
  EXPECT_NE(out.find("(32 nodes)"), std::string::npos);   // point tooltip
  EXPECT_NE(out.find("stroke-dasharray=\"6 4\""), std::string::npos);
  EXPECT_TRUE(svg.notes().empty());
}

TEST(LineChart, LogAxesDropZeroAndNegativeWithNote) {
  LineChart c;
  c.title = "Max model size vs nodes";
  c.x = {"nodes", Unit::kNone, Scale::kLog10};
  c.y = {"parameters", Unit::kCount, Scale::kLog10};
  c.series = {{"a", {{0, 1e9}, {-1, 1e9}, {1, 0}, {2, -5}, {4, 1e10}, {8, 2e11}}, "", true, false},
              {"b", {{kNaN, 1}, {1, kInf}}, "", true, false},
              {"c", {}, "", true, false}};
  Svg svg = RenderLineChart(c);
  const std::string& out = svg.markup();
  ExpectWellFormed(out);
  ExpectFinite(out);
  EXPECT_NE(out.find("series &#39;a&#39;: 2 points with x &lt;= 0 (log x axis) dropped"), std::string::npos);
  EXPECT_NE(out.find("series &#39;a&#39;: 2 points with y &lt;= 0 (log y axis) dropped"), std::string::npos);
  EXPECT_NE(out.find("series &#39;b&#39;: no data"), std::string::npos);
  EXPECT_NE(out.find("c (no data)"), std::string::npos);
  EXPECT_EQ(svg.notes().size(), 5u);
}

TEST(LineChart, AllEmptyAndSinglePoint) {
  LineChart c;
  c.x.scale = Scale::kLog10;
  c.y.scale = Scale::kLog10;
  Svg empty = RenderLineChart(c);
  ExpectWellFormed(empty.markup());
  ExpectFinite(empty.markup());
  EXPECT_NE(empty.markup().find(">no data</text>"), std::string::npos);
  c.series = {{"one", {{5, 5}}, "", false, false}};
  c.x.scale = c.y.scale = Scale::kLinear;
  Svg one = RenderLineChart(c);
  ExpectWellFormed(one.markup());
  ExpectFinite(one.markup());
  EXPECT_NE(one.markup().find("<circle"), std::string::npos);
}

TEST(LineChart, AxisOverridesClipWithNote) {
  LineChart c = ThroughputChart();
  c.y.max = 35e12;
  Svg svg = RenderLineChart(c);
  ExpectWellFormed(svg.markup());
  ASSERT_FALSE(svg.notes().empty());
  EXPECT_NE(svg.notes()[0].find("outside the axis range"), std::string::npos);
}

GanttChart Timeline() {
  GanttChart g;
  g.title = "Predicted vs measured step timeline";
  g.lanes = {{"compute", "predicted", {{0, 0.010, "fwd 0", "compute"}, {0.012, 0.02, "bwd 0", "compute"}}},
             {"H2D", "predicted", {{0, 0.004, "p1", "h2d"}}},
             {"compute", "measured", {{0, 0.011, "fwd 0", "compute"}, {0.013, 0.024, "bwd 0", "compute"}}},
             {"H2D", "measured", {{0.001, 0.005, "p1", "h2d"}, {0.02, -1, "bad", "h2d"}, {kNaN, 1, "bad", "h2d"}}}};
  return g;
}

TEST(Gantt, LanesGroupsAndBadIntervals) {
  Svg svg = RenderGantt(Timeline());
  const std::string& out = svg.markup();
  ExpectWellFormed(out);
  ExpectFinite(out);
  EXPECT_NE(out.find(">predicted</text>"), std::string::npos);
  EXPECT_NE(out.find(">measured</text>"), std::string::npos);
  EXPECT_NE(out.find("compute: fwd 0 [compute] start 0 s, duration 10 ms"), std::string::npos);
  EXPECT_NE(out.find(" ms</text>"), std::string::npos);  // axis ticks in ms
  ASSERT_EQ(svg.notes().size(), 1u);
  EXPECT_NE(svg.notes()[0].find("2 intervals"), std::string::npos);
  Svg empty = RenderGantt(GanttChart{});
  ExpectWellFormed(empty.markup());
  ExpectFinite(empty.markup());
}

TEST(Palette, ConsistentAcrossCharts) {
  Palette p;
  BarChart b;
  b.categories = {"x"};
  b.series = {{"zero3", {1}, ""}, {"offload", {2}, ""}};
  LineChart l;
  l.series = {{"offload", {{1, 1}, {2, 2}}, "", true, false}};
  std::string bo = RenderBarChart(b, &p).markup();
  std::string lo = RenderLineChart(l, &p).markup();
  const std::string& colour = p.ColorFor("offload");
  EXPECT_EQ(colour, Palette::DefaultColours()[1]);
  EXPECT_NE(lo.find("stroke=\"" + colour + "\""), std::string::npos);
  EXPECT_TRUE(p.Assign("nvme", "#123abc"));
  EXPECT_FALSE(p.Assign("nvme", "red\" onload=\"x"));
  EXPECT_EQ(p.ColorFor("nvme"), "#123abc");
}

TEST(Palette, InjectedColourRejected) {
  BarChart b;
  b.categories = {"x"};
  b.series = {{"s", {1}, "\"/><script>alert(1)</script>"}};
  std::string out = RenderBarChart(b).markup();
  ExpectWellFormed(out);
  EXPECT_EQ(out.find("<script"), std::string::npos);
  EXPECT_EQ(out.find("alert"), std::string::npos);
}

TEST(Escaping, HostileStringsEverywhere) {
  std::string h(kHostile);
  BarChart b;
  b.title = b.subtitle = b.capacity_label = h;
  b.categories = {h, h + "2"};
  b.series = {{h, {1, 2}, ""}};
  b.capacity = {1.5, 1.5};
  b.value_axis.label = h;
  for (auto layout : {BarLayout::kGrouped, BarLayout::kStacked}) {
    for (auto o : {Orientation::kVertical, Orientation::kHorizontal}) {
      b.layout = layout;
      b.orientation = o;
      std::string out = RenderBarChart(b).markup();
      ExpectNoRawHostile(out);
      ExpectWellFormed(out);
      EXPECT_NE(out.find("&lt;script&gt;"), std::string::npos);
    }
  }
  LineChart l;
  l.title = l.subtitle = l.x.label = l.y.label = h;
  l.series = {{h, {{1, 1, h}, {2, kNaN, h}}, "", true, false}, {h, {}, "", true, true}};
  std::string lo = RenderLineChart(l).markup();
  ExpectNoRawHostile(lo);
  ExpectWellFormed(lo);
  GanttChart g;
  g.title = g.subtitle = g.time.label = h;
  g.lanes = {{h, h, {{0, 1, h, h}, {0, -1, h, h}}}};
  std::string go = RenderGantt(g).markup();
  ExpectNoRawHostile(go);
  ExpectWellFormed(go);
}

TEST(Svg, SizeScalesWithCategories) {
  BarChart c;
  c.orientation = Orientation::kHorizontal;
  for (int i = 0; i < 40; ++i) c.categories.push_back("layer " + std::to_string(i));
  c.series = {{"s", std::vector<double>(40, 1.0), ""}};
  std::string out = RenderBarChart(c).markup();
  ExpectWellFormed(out);
  EXPECT_GE(Count(out, "<rect"), 41u);
}

}  // namespace
}  // namespace zinf::reports
