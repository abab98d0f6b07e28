// Grouped and stacked bar charts, vertical or horizontal, with capacity markers.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "reports/escape.h"
#include "reports/svg.h"
#include "reports/svg_builder.h"

namespace zinf::reports {
namespace {

using detail::Anchor;
using detail::AxisMap;
using detail::LegendEntry;
using detail::SvgBuilder;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kValueFont = 10;

struct CleanBars {
  size_t ncat = 0;
  std::vector<std::vector<double>> values;  // [series][category], NaN = no bar
  std::vector<double> capacity;             // [category], NaN = none
  std::vector<std::string> colours;
  bool any_capacity = false;
  bool any_value = false;
};

CleanBars Clean(const BarChart& c, Palette& palette, SvgBuilder& b) {
  CleanBars d;
  d.ncat = c.categories.size();
  for (const auto& s : c.series) {
    std::vector<double> v(d.ncat, kNaN);
    size_t bad = 0;
    for (size_t i = 0; i < std::min(d.ncat, s.values.size()); ++i) {
      if (std::isfinite(s.values[i])) {
        v[i] = s.values[i];
        d.any_value = true;
      } else {
        ++bad;
      }
    }
    if (bad) b.AddNote(fmt::format("series '{}': {} not drawn", s.name, detail::CountNoun(bad, "non-finite value", "non-finite values")));
    if (s.values.size() > d.ncat)
      b.AddNote(fmt::format("series '{}': {} beyond the {} categories ignored", s.name,
                            detail::CountNoun(s.values.size() - d.ncat, "value", "values"), d.ncat));
    else if (s.values.size() < d.ncat)
      b.AddNote(fmt::format("series '{}': {} missing", s.name,
                            detail::CountNoun(d.ncat - s.values.size(), "value", "values")));
    d.values.push_back(std::move(v));
    d.colours.push_back(detail::SeriesColour(palette, s.colour, s.name));
  }
  d.capacity.assign(d.ncat, kNaN);
  for (size_t i = 0; i < std::min(d.ncat, c.capacity.size()); ++i) {
    if (std::isfinite(c.capacity[i])) {
      d.capacity[i] = c.capacity[i];
      d.any_capacity = true;
    }
  }
  if (c.capacity.size() > d.ncat) b.AddNote("capacity values beyond the categories ignored");
  if (c.value_axis.scale == Scale::kLog10) b.AddNote("bars use a linear value axis (log scale ignored)");
  return d;
}

// Positive and negative stack totals per category.
void StackTotals(const CleanBars& d, size_t cat, double* pos, double* neg) {
  *pos = 0;
  *neg = 0;
  for (const auto& s : d.values) {
    if (std::isnan(s[cat])) continue;
    (s[cat] >= 0 ? *pos : *neg) += s[cat];
  }
}

// Places bars in either orientation: `band` runs along the categories, `value` along values.
struct Geometry {
  bool horizontal = false;
  AxisMap value;
  double band0 = 0;  // pixel where category 0's slot starts
  double slot = 0;   // pixels per category

  double Clamp(double v) const { return std::clamp(v, value.d0, value.d1); }
  void Bar(SvgBuilder& b, size_t cat, double off, double thick, double v0, double v1,
           std::string_view fill, std::string_view tip, std::string_view extra) const {
    double p0 = value(Clamp(v0)), p1 = value(Clamp(v1));
    double s = band0 + slot * static_cast<double>(cat) + off;
    if (horizontal) b.Rect(std::min(p0, p1), s, std::fabs(p1 - p0), thick, fill, tip, extra);
    else b.Rect(s, std::min(p0, p1), thick, std::fabs(p1 - p0), fill, tip, extra);
  }
  void Marker(SvgBuilder& b, size_t cat, double off, double len, double v, std::string_view tip) const {
    double p = value(Clamp(v));
    double s = band0 + slot * static_cast<double>(cat) + off;
    if (horizontal) b.Line(p, s, p, s + len, detail::kInk, 2, "5 3", tip);
    else b.Line(s, p, s + len, p, detail::kInk, 2, "5 3", tip);
  }
  // A value label just beyond v (outside the bar end), centred on the bar.
  void Label(SvgBuilder& b, size_t cat, double off, double thick, double v, std::string_view text) const {
    double p = value(Clamp(v));
    double s = band0 + slot * static_cast<double>(cat) + off + thick / 2;
    bool neg = v < 0;
    if (horizontal) {
      b.Text(neg ? p - 4 : p + 4, s + 3.5, text, kValueFont, neg ? Anchor::kEnd : Anchor::kStart, detail::kMuted);
    } else {
      b.Text(s, neg ? p + kValueFont + 2 : p - 4, text, kValueFont, Anchor::kMiddle, detail::kMuted);
    }
  }
};

std::string Tip(const BarChart& c, size_t cat, size_t s, double v, double cap) {
  std::string t = fmt::format("{} · {}: {}", c.categories[cat], c.series[s].name,
                              FormatValue(v, c.value_axis.unit, 4));
  if (std::isfinite(cap) && cap > 0)
    t += fmt::format(" ({:.0f}% of {} {})", 100.0 * v / cap, FormatValue(cap, c.value_axis.unit, 4),
                     c.capacity_label);
  return t;
}

void DrawBars(const BarChart& c, const CleanBars& d, const Geometry& g, SvgBuilder& b) {
  size_t ns = d.values.size();
  bool stacked = c.layout == BarLayout::kStacked;
  double group = g.slot * (stacked ? 0.6 : 0.8);
  group = std::min(group, stacked ? 72.0 : 64.0 * static_cast<double>(std::max<size_t>(ns, 1)));
  double thick = stacked || ns == 0 ? group : group / static_cast<double>(ns);
  double start = (g.slot - group) / 2;
  const char* over = R"( stroke="#c62828" stroke-width="2")";
  for (size_t cat = 0; cat < d.ncat; ++cat) {
    double cap = d.capacity[cat];
    if (stacked) {
      double pos = 0, neg = 0, total_pos = 0, total_neg = 0;
      StackTotals(d, cat, &total_pos, &total_neg);
      bool exceeds = std::isfinite(cap) && total_pos > cap;
      for (size_t s = 0; s < ns; ++s) {
        double v = d.values[s][cat];
        if (std::isnan(v)) continue;
        double base = v >= 0 ? pos : neg;
        (v >= 0 ? pos : neg) += v;
        g.Bar(b, cat, start, thick, base, base + v, d.colours[s], Tip(c, cat, s, v, kNaN),
              exceeds ? over : "");
        double seg = std::fabs(g.value(g.Clamp(base + v)) - g.value(g.Clamp(base)));
        std::string label = FormatValue(v, c.value_axis.unit);
        double lw = SvgBuilder::TextWidth(label, kValueFont);
        bool fits = g.horizontal ? (seg >= lw + 6 && thick >= 13) : (seg >= 13 && thick >= lw + 4);
        if (c.value_labels && fits && ns > 1) {
          double mid = g.value(g.Clamp(base + v / 2));
          double band = g.band0 + g.slot * static_cast<double>(cat) + start + thick / 2;
          if (g.horizontal) b.Text(mid, band + 3.5, label, kValueFont, Anchor::kMiddle, "#ffffff");
          else b.Text(band, mid + 3.5, label, kValueFont, Anchor::kMiddle, "#ffffff");
        }
      }
      if (c.value_labels && (total_pos != 0 || total_neg == 0)) {
        std::string label = FormatValue(total_pos + total_neg, c.value_axis.unit);
        if (g.horizontal || SvgBuilder::TextWidth(label, kValueFont) <= g.slot - 2)
          g.Label(b, cat, start, thick, total_pos, label);
      }
      if (std::isfinite(cap))
        g.Marker(b, cat, start - 4, thick + 8, cap,
                 fmt::format("{} {}: {}", c.categories[cat], c.capacity_label, FormatValue(cap, c.value_axis.unit, 4)));
      continue;
    }
    for (size_t s = 0; s < ns; ++s) {
      double v = d.values[s][cat];
      if (std::isnan(v)) continue;
      double off = start + thick * static_cast<double>(s);
      bool exceeds = std::isfinite(cap) && v > cap;
      g.Bar(b, cat, off + thick * 0.06, thick * 0.88, 0, v, d.colours[s], Tip(c, cat, s, v, cap),
            exceeds ? over : "");
      std::string label = FormatValue(v, c.value_axis.unit);
      bool fits = g.horizontal ? thick >= 11 : SvgBuilder::TextWidth(label, kValueFont) <= thick + 6;
      if (c.value_labels && fits) g.Label(b, cat, off, thick, v, label);
    }
    if (std::isfinite(cap))
      g.Marker(b, cat, start - 4, group + 8, cap,
               fmt::format("{} {}: {}", c.categories[cat], c.capacity_label, FormatValue(cap, c.value_axis.unit, 4)));
  }
}

// Category labels along the band axis, truncated to their slot (full text in the tooltip).
void DrawCategories(const BarChart& c, const Geometry& g, SvgBuilder& b, double at, double max_w) {
  for (size_t i = 0; i < c.categories.size(); ++i) {
    double mid = g.band0 + g.slot * (static_cast<double>(i) + 0.5);
    double w = g.horizontal ? max_w : g.slot - 4;
    auto chars = static_cast<size_t>(std::max(1.0, w / (detail::kLabelFont * 0.58)));
    std::string text = Utf8Truncate(c.categories[i], chars);
    if (g.horizontal) b.Text(at, mid + 4, text, detail::kLabelFont, Anchor::kEnd, detail::kInk, {}, c.categories[i]);
    else b.Text(mid, at, text, detail::kLabelFont, Anchor::kMiddle, detail::kInk, {}, c.categories[i]);
  }
}

}  // namespace

Svg RenderBarChart(const BarChart& c, Palette* palette) {
  Palette local;
  Palette& pal = palette ? *palette : local;
  SvgBuilder b(c.width);
  CleanBars d = Clean(c, pal, b);
  double y = b.Header(c.title, c.subtitle);
  std::vector<LegendEntry> legend;
  for (size_t s = 0; s < c.series.size(); ++s) legend.push_back({c.series[s].name, d.colours[s]});
  if (d.any_capacity) legend.push_back({c.capacity_label, std::string(detail::kInk), LegendEntry::Kind::kDashedLine});
  y = b.Legend(legend, detail::kPad, y, b.width() - 2 * detail::kPad);

  double lo = 0, hi = 0;
  for (size_t cat = 0; cat < d.ncat; ++cat) {
    if (c.layout == BarLayout::kStacked) {
      double pos = 0, neg = 0;
      StackTotals(d, cat, &pos, &neg);
      hi = std::max(hi, pos);
      lo = std::min(lo, neg);
    } else {
      for (const auto& s : d.values) {
        if (std::isnan(s[cat])) continue;
        hi = std::max(hi, s[cat]);
        lo = std::min(lo, s[cat]);
      }
    }
    if (std::isfinite(d.capacity[cat])) hi = std::max(hi, d.capacity[cat]), lo = std::min(lo, d.capacity[cat]);
  }
  AxisTicks ticks = detail::TicksFor(c.value_axis, lo, hi, /*force_zero=*/true, /*allow_log=*/false);
  bool empty = d.ncat == 0 || !d.any_value;
  if (empty) b.AddNote("no data");

  Geometry g;
  g.horizontal = c.orientation == Orientation::kHorizontal;
  g.value.d0 = ticks.lo;
  g.value.d1 = ticks.hi;
  size_t ncat = std::max<size_t>(d.ncat, 1);
  size_t ns = std::max<size_t>(c.series.size(), 1);
  bool stacked = c.layout == BarLayout::kStacked;
  bool has_vlabel = !c.value_axis.label.empty();
  double plot_top = y + 16;
  double bottom;
  if (!g.horizontal) {
    double left = detail::kPad + (has_vlabel ? 20 : 0) + SvgBuilder::MaxLabelWidth(ticks, detail::kTickFont) + 10;
    double right = b.width() - detail::kPad - 6;
    double plot_h = c.height > 0 ? c.height - plot_top - 40 - b.NotesHeight() : 260;
    plot_h = std::max(plot_h, 80.0);
    double plot_bottom = plot_top + plot_h;
    g.value.r0 = plot_bottom;
    g.value.r1 = plot_top;
    g.band0 = left;
    g.slot = (right - left) / static_cast<double>(ncat);
    b.YAxis(ticks, g.value, left, right, c.value_axis.label, detail::kPad + 8);
    DrawBars(c, d, g, b);
    double zero = g.value(std::clamp(0.0, ticks.lo, ticks.hi));
    b.Line(left, zero, right, zero, detail::kAxisLine, 1);
    DrawCategories(c, g, b, plot_bottom + 18, 0);
    bottom = plot_bottom + 28;
  } else {
    double max_cat = 0;
    for (const auto& cat : c.categories) max_cat = std::max(max_cat, SvgBuilder::TextWidth(cat, detail::kLabelFont));
    double cat_w = std::min(max_cat, b.width() * 0.3);
    double left = detail::kPad + cat_w + 10;
    double right = b.width() - detail::kPad - (c.value_labels ? 56 : 12);
    double slot = stacked ? 30 : std::max(24.0, 14.0 * static_cast<double>(ns) + 10);
    if (c.height > 0)
      slot = std::max(8.0, (c.height - plot_top - 50 - b.NotesHeight()) / static_cast<double>(ncat));
    double plot_bottom = plot_top + slot * static_cast<double>(ncat);
    g.value.r0 = left;
    g.value.r1 = right;
    g.band0 = plot_top;
    g.slot = slot;
    bottom = b.XAxis(ticks, g.value, plot_bottom, plot_top, c.value_axis.label);
    DrawBars(c, d, g, b);
    double zero = g.value(std::clamp(0.0, ticks.lo, ticks.hi));
    b.Line(zero, plot_top, zero, plot_bottom, detail::kAxisLine, 1);
    DrawCategories(c, g, b, left - 8, cat_w);
  }
  return b.Finish(c.title, bottom);
}

}  // namespace zinf::reports
