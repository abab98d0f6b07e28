// Timeline (Gantt) charts: lanes of intervals coloured by key.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "reports/escape.h"
#include "reports/svg.h"
#include "reports/svg_builder.h"

namespace zinf::reports {
namespace {

using detail::Anchor;
using detail::AxisMap;
using detail::LegendEntry;
using detail::SvgBuilder;

const std::string& KeyOf(const GanttLane& lane, const GanttInterval& iv) {
  return iv.key.empty() ? lane.name : iv.key;
}

}  // namespace

Svg RenderGantt(const GanttChart& c, Palette* palette) {
  Palette local;
  Palette& pal = palette ? *palette : local;
  SvgBuilder b(c.width);
  if (c.time.scale == Scale::kLog10) b.AddNote("timelines use a linear time axis (log scale ignored)");

  // Valid intervals per lane; keys in first-seen order for the legend.
  std::vector<std::vector<const GanttInterval*>> valid(c.lanes.size());
  std::vector<std::string> keys;
  double lo = HUGE_VAL, hi = -HUGE_VAL;
  size_t bad = 0, total = 0;
  for (size_t l = 0; l < c.lanes.size(); ++l) {
    for (const auto& iv : c.lanes[l].intervals) {
      if (!std::isfinite(iv.start_s) || !std::isfinite(iv.dur_s) || iv.dur_s < 0) { ++bad; continue; }
      valid[l].push_back(&iv);
      lo = std::min(lo, iv.start_s);
      hi = std::max(hi, iv.start_s + iv.dur_s);
      ++total;
      const std::string& k = KeyOf(c.lanes[l], iv);
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    }
  }
  if (bad) b.AddNote(fmt::format("{} with a non-finite start/duration or negative duration dropped",
                                 detail::CountNoun(bad, "interval", "intervals")));
  if (total == 0) {
    lo = 0, hi = 1;
    b.AddNote("no data");
  }
  if (c.from_zero) lo = std::min(lo, 0.0);

  double y = b.Header(c.title, c.subtitle);
  std::vector<LegendEntry> legend;
  for (const auto& k : keys) legend.push_back({k, pal.ColorFor(k)});
  y = b.Legend(legend, detail::kPad, y, b.width() - 2 * detail::kPad);

  AxisTicks ticks = detail::TicksFor(c.time, lo, hi, false, false);
  bool any_group = std::any_of(c.lanes.begin(), c.lanes.end(), [](const GanttLane& l) { return !l.group.empty(); });
  double lane_w = 0, group_w = 0;
  for (const auto& l : c.lanes) {
    lane_w = std::max(lane_w, SvgBuilder::TextWidth(l.name, detail::kLabelFont));
    group_w = std::max(group_w, SvgBuilder::TextWidth(l.group, detail::kLabelFont));
  }
  lane_w = std::min(lane_w, b.width() * 0.22);
  group_w = any_group ? std::min(group_w, b.width() * 0.15) + 12 : 0;
  double left = detail::kPad + group_w + lane_w + 12;
  double last_label = ticks.ticks.empty() ? 0 : SvgBuilder::TextWidth(ticks.ticks.back().label, detail::kTickFont);
  double right = b.width() - detail::kPad - std::max(8.0, last_label / 2);
  double lane_h = std::clamp(std::isfinite(c.lane_height) ? c.lane_height : 22, 12.0, 80.0);
  double top = y + 6;
  size_t nl = std::max<size_t>(c.lanes.size(), 1);
  double plot_bottom = top + lane_h * static_cast<double>(nl);
  AxisMap m{ticks.lo, ticks.hi, left, right, false};

  // Lane stripes and names, group labels and separators.
  for (size_t l = 0; l < c.lanes.size(); ++l) {
    double ly = top + lane_h * static_cast<double>(l);
    if (l % 2 == 1) b.Rect(left, ly, right - left, lane_h, "#f5f7fa");
    auto chars = static_cast<size_t>(std::max(1.0, lane_w / (detail::kLabelFont * 0.58)));
    b.Text(left - 8, ly + lane_h / 2 + 4, Utf8Truncate(c.lanes[l].name, chars), detail::kLabelFont,
           Anchor::kEnd, detail::kInk, {}, c.lanes[l].name);
  }
  for (size_t l = 0; l < c.lanes.size();) {
    size_t e = l;
    while (e < c.lanes.size() && c.lanes[e].group == c.lanes[l].group) ++e;
    double gy0 = top + lane_h * static_cast<double>(l), gy1 = top + lane_h * static_cast<double>(e);
    if (!c.lanes[l].group.empty()) {
      auto chars = static_cast<size_t>(std::max(1.0, (group_w - 12) / (detail::kLabelFont * 0.58)));
      b.Text(detail::kPad, (gy0 + gy1) / 2 + 4, Utf8Truncate(c.lanes[l].group, chars), detail::kLabelFont,
             Anchor::kStart, detail::kMuted, R"( font-weight="600")", c.lanes[l].group);
    }
    if (l > 0) b.Line(detail::kPad, gy0, right, gy0, detail::kAxisLine, 1);
    l = e;
  }
  double bottom = b.XAxis(ticks, m, plot_bottom, top, c.time.label);

  size_t outside = 0;
  for (size_t l = 0; l < c.lanes.size(); ++l) {
    const GanttLane& lane = c.lanes[l];
    double ly = top + lane_h * static_cast<double>(l) + 3;
    b.OpenGroup(R"( class="lane")");
    for (const GanttInterval* iv : valid[l]) {
      double s = iv->start_s, e = iv->start_s + iv->dur_s;
      if (e < ticks.lo || s > ticks.hi) { ++outside; continue; }
      double x0 = m(std::max(s, ticks.lo)), x1 = m(std::min(e, ticks.hi));
      double w = std::max(x1 - x0, 1.0);
      const std::string& key = KeyOf(lane, *iv);
      std::string tip = fmt::format("{}: {}{}start {}, duration {}", lane.name,
                                    iv->label.empty() ? "" : iv->label + " ",
                                    key == iv->label ? "" : "[" + key + "] ",
                                    FormatValue(s, c.time.unit, 4), FormatValue(iv->dur_s, c.time.unit, 4));
      b.Rect(x0, ly, w, lane_h - 6, pal.ColorFor(key), tip, R"( rx="2")");
      if (!iv->label.empty() && w >= SvgBuilder::TextWidth(iv->label, 10) + 6 && lane_h >= 16)
        b.Text(x0 + w / 2, ly + (lane_h - 6) / 2 + 3.5, iv->label, 10, Anchor::kMiddle, "#ffffff",
               R"( pointer-events="none")");
    }
    b.CloseGroup();
  }
  if (outside) b.AddNote(fmt::format("{} outside the time axis range not drawn",
                                     detail::CountNoun(outside, "interval", "intervals")));
  return b.Finish(c.title, bottom);
}

}  // namespace zinf::reports
