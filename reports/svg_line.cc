// Multi-series line charts with linear or log10 axes.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "reports/svg.h"
#include "reports/svg_builder.h"

namespace zinf::reports {
namespace {

using detail::Anchor;
using detail::AxisMap;
using detail::LegendEntry;
using detail::SvgBuilder;

constexpr size_t kMaxMarkers = 200;  // per series; denser series are drawn as lines only

struct CleanSeries {
  std::vector<const Point*> points;
  std::string colour;
};

bool InRange(const Axis& a, double v) {
  if (a.min && std::isfinite(*a.min) && v < *a.min) return false;
  if (a.max && std::isfinite(*a.max) && v > *a.max) return false;
  return true;
}

std::vector<CleanSeries> Clean(const LineChart& c, Palette& palette, SvgBuilder& b) {
  bool logx = c.x.scale == Scale::kLog10, logy = c.y.scale == Scale::kLog10;
  std::vector<CleanSeries> out;
  for (const auto& s : c.series) {
    CleanSeries cs;
    cs.colour = detail::SeriesColour(palette, s.colour, s.name);
    size_t nonfinite = 0, nonpos_x = 0, nonpos_y = 0, outside = 0;
    for (const auto& p : s.points) {
      if (!std::isfinite(p.x) || !std::isfinite(p.y)) { ++nonfinite; continue; }
      if (logx && p.x <= 0) { ++nonpos_x; continue; }
      if (logy && p.y <= 0) { ++nonpos_y; continue; }
      if (!InRange(c.x, p.x) || !InRange(c.y, p.y)) { ++outside; continue; }
      cs.points.push_back(&p);
    }
    auto note = [&](size_t n, std::string_view why) {
      if (n) b.AddNote(fmt::format("series '{}': {} {} dropped", s.name, detail::CountNoun(n, "point", "points"), why));
    };
    note(nonfinite, "with non-finite coordinates");
    note(nonpos_x, "with x <= 0 (log x axis)");
    note(nonpos_y, "with y <= 0 (log y axis)");
    note(outside, "outside the axis range");
    if (cs.points.empty()) b.AddNote(fmt::format("series '{}': no data", s.name));
    out.push_back(std::move(cs));
  }
  return out;
}

}  // namespace

Svg RenderLineChart(const LineChart& c, Palette* palette) {
  Palette local;
  Palette& pal = palette ? *palette : local;
  SvgBuilder b(c.width);
  std::vector<CleanSeries> series = Clean(c, pal, b);

  double y = b.Header(c.title, c.subtitle);
  std::vector<LegendEntry> legend;
  for (size_t i = 0; i < c.series.size(); ++i) {
    const auto& s = c.series[i];
    legend.push_back({series[i].points.empty() ? s.name + " (no data)" : s.name, series[i].colour,
                      s.dashed ? LegendEntry::Kind::kDashedLine : LegendEntry::Kind::kLine,
                      s.markers ? static_cast<int>(i % 4) : -1});
  }
  y = b.Legend(legend, detail::kPad, y, b.width() - 2 * detail::kPad);

  bool logx = c.x.scale == Scale::kLog10, logy = c.y.scale == Scale::kLog10;
  double xlo = HUGE_VAL, xhi = -HUGE_VAL, ylo = HUGE_VAL, yhi = -HUGE_VAL;
  size_t total = 0;
  for (const auto& s : series) {
    for (const Point* p : s.points) {
      xlo = std::min(xlo, p->x);
      xhi = std::max(xhi, p->x);
      ylo = std::min(ylo, p->y);
      yhi = std::max(yhi, p->y);
      ++total;
    }
  }
  if (total == 0) {
    xlo = logx ? 1 : 0, xhi = logx ? 10 : 1;
    ylo = logy ? 1 : 0, yhi = logy ? 10 : 1;
  }
  AxisTicks xt = detail::TicksFor(c.x, xlo, xhi, false, true);
  AxisTicks yt = detail::TicksFor(c.y, ylo, yhi, false, true);

  double left = detail::kPad + (c.y.label.empty() ? 0 : 20) +
                SvgBuilder::MaxLabelWidth(yt, detail::kTickFont) + 10;
  double last_label = xt.ticks.empty() ? 0 : SvgBuilder::TextWidth(xt.ticks.back().label, detail::kTickFont);
  double right = b.width() - detail::kPad - std::max(8.0, last_label / 2);
  double height = std::clamp(std::isfinite(c.height) ? c.height : 420, 160.0, 4000.0);
  double plot_top = y + 8;
  double plot_bottom = height - b.NotesHeight() - 8 - 22 - (c.x.label.empty() ? 0 : 20);
  plot_bottom = std::max(plot_bottom, plot_top + 80);

  AxisMap mx{xt.lo, xt.hi, left, right, logx};
  AxisMap my{yt.lo, yt.hi, plot_bottom, plot_top, logy};
  b.YAxis(yt, my, left, right, c.y.label, detail::kPad + 8);
  double bottom = b.XAxis(xt, mx, plot_bottom, plot_top, c.x.label);

  if (total == 0) {
    b.Text((left + right) / 2, (plot_top + plot_bottom) / 2, "no data", 13, Anchor::kMiddle, detail::kMuted);
  }
  for (size_t i = 0; i < series.size(); ++i) {
    const auto& s = c.series[i];
    const auto& cs = series[i];
    if (cs.points.empty()) continue;
    b.OpenGroup(R"( class="series")");
    std::vector<std::pair<double, double>> px;
    for (const Point* p : cs.points) px.emplace_back(mx(p->x), my(p->y));
    b.Polyline(px, cs.colour, 2.2, s.dashed, s.name);
    bool markers = s.markers && (cs.points.size() <= kMaxMarkers || cs.points.size() == 1);
    if (cs.points.size() == 1 && !s.markers) markers = true;  // a lone point needs a marker
    if (markers) {
      for (size_t k = 0; k < cs.points.size(); ++k) {
        const Point* p = cs.points[k];
        std::string tip = fmt::format("{}: {} = {}, {} = {}", s.name,
                                      c.x.label.empty() ? "x" : c.x.label, FormatValue(p->x, c.x.unit, 4),
                                      c.y.label.empty() ? "y" : c.y.label, FormatValue(p->y, c.y.unit, 4));
        if (!p->label.empty()) tip += " (" + p->label + ")";
        b.Marker(static_cast<int>(i % 4), px[k].first, px[k].second, 3.8, cs.colour, tip);
      }
    }
    b.CloseGroup();
  }
  return b.Finish(c.title, std::max(bottom, height - b.NotesHeight() - 8));
}

}  // namespace zinf::reports
