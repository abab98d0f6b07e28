#include "reports/svg_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "reports/escape.h"

namespace zinf::reports::detail {
namespace {

constexpr size_t kMaxNotesShown = 6;
constexpr double kNoteLine = 15;
constexpr const char* kFontStack =
    "system-ui, -apple-system, &quot;Segoe UI&quot;, Roboto, &quot;Helvetica Neue&quot;, "
    "Arial, sans-serif";

const char* AnchorName(Anchor a) {
  switch (a) {
    case Anchor::kMiddle: return "middle";
    case Anchor::kEnd: return "end";
    case Anchor::kStart: break;
  }
  return "start";
}

std::string TitleElement(std::string_view tooltip) {
  if (tooltip.empty()) return "";
  return "<title>" + HtmlEscape(tooltip) + "</title>";
}

// Emits <tag attrs/> or <tag attrs><title>..</title></tag>.
void Element(std::string& out, std::string_view tag, const std::string& attrs,
             std::string_view tooltip) {
  out += '<';
  out += tag;
  out += attrs;
  if (tooltip.empty()) {
    out += "/>\n";
  } else {
    out += '>';
    out += TitleElement(tooltip);
    out += "</";
    out += tag;
    out += ">\n";
  }
}

}  // namespace

double AxisMap::operator()(double v) const {
  double a = d0, b = d1, x = v;
  if (log) {
    a = std::log10(std::max(d0, 1e-300));
    b = std::log10(std::max(d1, 1e-300));
    x = std::log10(std::max(v, 1e-300));
  }
  if (!(b != a) || !std::isfinite(x)) return r0;
  double px = r0 + (x - a) / (b - a) * (r1 - r0);
  return std::isfinite(px) ? px : r0;
}

SvgBuilder::SvgBuilder(double width) : width_(std::clamp(std::isfinite(width) ? width : 720, 240.0, 4000.0)) {}

double SvgBuilder::TextWidth(std::string_view text, double font_px) {
  return static_cast<double>(Utf8Length(text)) * font_px * 0.58;
}

void SvgBuilder::AddNote(std::string note) { notes_.push_back(std::move(note)); }

double SvgBuilder::NotesHeight() const {
  if (notes_.empty()) return 0;
  size_t shown = std::min(notes_.size(), kMaxNotesShown) + (notes_.size() > kMaxNotesShown);
  return 6 + kNoteLine * static_cast<double>(shown);
}

double SvgBuilder::Header(std::string_view title, std::string_view subtitle) {
  double y = kPad;
  if (!title.empty()) {
    Text(kPad, y + kTitleFont, title, kTitleFont, Anchor::kStart, kInk, R"( font-weight="600")");
    y += kTitleFont + 6;
  }
  if (!subtitle.empty()) {
    Text(kPad, y + kLabelFont, subtitle, kLabelFont, Anchor::kStart, kMuted);
    y += kLabelFont + 6;
  }
  return y + 4;
}

double SvgBuilder::Legend(const std::vector<LegendEntry>& entries, double x0, double y,
                          double max_w) {
  if (entries.empty()) return y;
  constexpr double kRow = 18, kSwatch = 18, kGap = 16;
  double x = x0;
  y += 2;
  OpenGroup(R"( class="legend")");
  for (const auto& e : entries) {
    std::string name = Utf8Truncate(e.name, 40);
    double w = kSwatch + 6 + TextWidth(name, kLabelFont);
    if (x > x0 && x + w > x0 + max_w) {
      x = x0;
      y += kRow;
    }
    double cy = y + kRow / 2;
    switch (e.kind) {
      case LegendEntry::Kind::kSwatch: Rect(x + 4, cy - 5, 10, 10, e.colour, e.name, R"( rx="2")"); break;
      case LegendEntry::Kind::kLine:
        Line(x, cy, x + kSwatch, cy, e.colour, 2.5, {}, e.name);
        break;
      case LegendEntry::Kind::kDashedLine:
        Line(x, cy, x + kSwatch, cy, e.colour, 2, "5 3", e.name);
        break;
    }
    if (e.marker >= 0) Marker(e.marker, x + kSwatch / 2, cy, 3.5, e.colour, e.name);
    Text(x + kSwatch + 6, cy + 4, name, kLabelFont, Anchor::kStart, kInk, {}, e.name);
    x += w + kGap;
  }
  CloseGroup();
  return y + kRow + 6;
}

void SvgBuilder::Rect(double x, double y, double w, double h, std::string_view fill,
                      std::string_view tooltip, std::string_view extra) {
  if (w < 0) x += w, w = -w;
  if (h < 0) y += h, h = -h;
  Element(body_, "rect",
          fmt::format(R"( x="{}" y="{}" width="{}" height="{}" fill="{}"{})", SvgNum(x), SvgNum(y),
                      SvgNum(w), SvgNum(h), HtmlEscape(fill), extra),
          tooltip);
}

void SvgBuilder::Line(double x1, double y1, double x2, double y2, std::string_view stroke,
                      double stroke_width, std::string_view dash, std::string_view tooltip) {
  std::string attrs = fmt::format(R"( x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="{}")",
                                  SvgNum(x1), SvgNum(y1), SvgNum(x2), SvgNum(y2),
                                  HtmlEscape(stroke), SvgNum(stroke_width));
  if (!dash.empty()) attrs += fmt::format(R"( stroke-dasharray="{}")", HtmlEscape(dash));
  Element(body_, "line", attrs, tooltip);
}

void SvgBuilder::Text(double x, double y, std::string_view text, double size, Anchor anchor,
                      std::string_view fill, std::string_view extra, std::string_view tooltip) {
  body_ += fmt::format(R"(<text x="{}" y="{}" font-size="{}" fill="{}" text-anchor="{}"{}>)",
                       SvgNum(x), SvgNum(y), SvgNum(size), HtmlEscape(fill), AnchorName(anchor),
                       extra);
  body_ += TitleElement(tooltip);
  body_ += HtmlEscape(text);
  body_ += "</text>\n";
}

void SvgBuilder::Polyline(const std::vector<std::pair<double, double>>& pts,
                          std::string_view stroke, double stroke_width, bool dashed,
                          std::string_view tooltip) {
  if (pts.size() < 2) return;
  std::string p;
  for (const auto& [x, y] : pts) {
    if (!p.empty()) p += ' ';
    p += SvgNum(x) + "," + SvgNum(y);
  }
  std::string attrs = fmt::format(
      R"( points="{}" fill="none" stroke="{}" stroke-width="{}" stroke-linejoin="round" stroke-linecap="round")",
      p, HtmlEscape(stroke), SvgNum(stroke_width));
  if (dashed) attrs += R"( stroke-dasharray="6 4")";
  Element(body_, "polyline", attrs, tooltip);
}

void SvgBuilder::Marker(int shape, double x, double y, double r, std::string_view fill,
                        std::string_view tooltip) {
  std::string f = HtmlEscape(fill);
  const char* ring = R"( stroke="#ffffff" stroke-width="1")";
  switch (((shape % 4) + 4) % 4) {
    case 0:
      Element(body_, "circle",
              fmt::format(R"( cx="{}" cy="{}" r="{}" fill="{}"{})", SvgNum(x), SvgNum(y), SvgNum(r), f, ring),
              tooltip);
      break;
    case 1:
      Rect(x - r * 0.9, y - r * 0.9, r * 1.8, r * 1.8, fill, tooltip, ring);
      break;
    case 2:
      Element(body_, "polygon",
              fmt::format(R"( points="{},{} {},{} {},{}" fill="{}"{})", SvgNum(x), SvgNum(y - r * 1.2),
                          SvgNum(x - r * 1.1), SvgNum(y + r * 0.8), SvgNum(x + r * 1.1),
                          SvgNum(y + r * 0.8), f, ring),
              tooltip);
      break;
    default:
      Element(body_, "polygon",
              fmt::format(R"( points="{},{} {},{} {},{} {},{}" fill="{}"{})", SvgNum(x), SvgNum(y - r * 1.2),
                          SvgNum(x + r * 1.2), SvgNum(y), SvgNum(x), SvgNum(y + r * 1.2),
                          SvgNum(x - r * 1.2), SvgNum(y), f, ring),
              tooltip);
      break;
  }
}

void SvgBuilder::OpenGroup(std::string_view extra) {
  body_ += "<g";
  body_ += extra;
  body_ += ">\n";
}

void SvgBuilder::CloseGroup() { body_ += "</g>\n"; }

double SvgBuilder::XAxis(const AxisTicks& t, const AxisMap& m, double axis_y, double grid_top,
                         std::string_view label) {
  OpenGroup(R"( class="axis x")");
  // Label every k-th tick when neighbouring labels would overlap.
  size_t every = 1;
  if (t.ticks.size() > 1) {
    double spacing = std::fabs(m.r1 - m.r0);
    for (size_t i = 1; i < t.ticks.size(); ++i)
      spacing = std::min(spacing, std::fabs(m(t.ticks[i].value) - m(t.ticks[i - 1].value)));
    double need = MaxLabelWidth(t, kTickFont) + 8;
    if (spacing > 0 && need > spacing) every = static_cast<size_t>(std::ceil(need / spacing));
  }
  for (size_t i = 0; i < t.ticks.size(); ++i) {
    const Tick& tick = t.ticks[i];
    double x = m(tick.value);
    if (grid_top < axis_y) Line(x, grid_top, x, axis_y, kGrid, 1);
    Line(x, axis_y, x, axis_y + 4, kAxisLine, 1);
    if (i % every == 0)
      Text(x, axis_y + 6 + kTickFont, tick.label, kTickFont, Anchor::kMiddle, kMuted);
  }
  Line(m.r0, axis_y, m.r1, axis_y, kAxisLine, 1);
  double y = axis_y + 8 + kTickFont;
  if (!label.empty()) {
    Text((m.r0 + m.r1) / 2, y + kLabelFont + 4, label, kLabelFont, Anchor::kMiddle, kInk);
    y += kLabelFont + 8;
  }
  CloseGroup();
  return y;
}

void SvgBuilder::YAxis(const AxisTicks& t, const AxisMap& m, double axis_x, double grid_right,
                       std::string_view label, double label_x) {
  OpenGroup(R"( class="axis y")");
  for (const auto& tick : t.ticks) {
    double y = m(tick.value);
    if (grid_right > axis_x) Line(axis_x, y, grid_right, y, kGrid, 1);
    Line(axis_x - 4, y, axis_x, y, kAxisLine, 1);
    Text(axis_x - 6, y + 4, tick.label, kTickFont, Anchor::kEnd, kMuted);
  }
  Line(axis_x, m.r0, axis_x, m.r1, kAxisLine, 1);
  if (!label.empty()) {
    double cy = (m.r0 + m.r1) / 2;
    Text(label_x, cy, label, kLabelFont, Anchor::kMiddle, kInk,
         fmt::format(R"x( transform="rotate(-90 {} {})")x", SvgNum(label_x), SvgNum(cy)));
  }
  CloseGroup();
}

double SvgBuilder::MaxLabelWidth(const AxisTicks& t, double font_px) {
  double w = 0;
  for (const auto& tick : t.ticks) w = std::max(w, TextWidth(tick.label, font_px));
  return w;
}

Svg SvgBuilder::Finish(std::string_view title, double content_bottom) {
  double height = std::max(60.0, content_bottom + NotesHeight() + 8);
  std::string out = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" class="report-chart" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" font-family="{f}">)"
      "\n",
      fmt::arg("w", SvgNum(width_)), fmt::arg("h", SvgNum(height)), fmt::arg("f", kFontStack));
  out += "<title>" + HtmlEscape(title.empty() ? std::string_view("chart") : title) + "</title>\n";
  out += fmt::format(R"(<rect x="0" y="0" width="{}" height="{}" fill="#ffffff"/>)", SvgNum(width_),
                     SvgNum(height));
  out += "\n";
  out += body_;
  double y = content_bottom + 6 + kNoteLine - 4;
  size_t shown = std::min(notes_.size(), kMaxNotesShown);
  for (size_t i = 0; i < shown; ++i, y += kNoteLine) {
    out += fmt::format(R"(<text x="{}" y="{}" font-size="11" font-style="italic" fill="{}">)",
                       SvgNum(kPad), SvgNum(y), kNoteInk);
    out += "note: " + HtmlEscape(notes_[i]) + "</text>\n";
  }
  if (notes_.size() > shown) {
    out += fmt::format(R"(<text x="{}" y="{}" font-size="11" font-style="italic" fill="{}">)",
                       SvgNum(kPad), SvgNum(y), kNoteInk);
    out += fmt::format("... and {} more notes</text>\n", notes_.size() - shown);
  }
  out += "</svg>\n";
  Svg svg;
  svg.markup_ = std::move(out);
  svg.notes_ = std::move(notes_);
  return svg;
}

AxisTicks TicksFor(const Axis& axis, double lo, double hi, bool force_zero, bool allow_log) {
  bool log = allow_log && axis.scale == Scale::kLog10;
  if (axis.min && std::isfinite(*axis.min) && (!log || *axis.min > 0)) lo = *axis.min;
  if (axis.max && std::isfinite(*axis.max) && (!log || *axis.max > 0)) hi = *axis.max;
  if (log) return Log10Ticks(lo, hi, axis.unit);
  if (force_zero || axis.include_zero) {
    lo = std::min(lo, 0.0);
    hi = std::max(hi, 0.0);
  }
  AxisTicks t = LinearTicks(lo, hi, axis.unit);
  // Respect explicit bounds exactly (the nice widening only applies to data ranges).
  if (axis.min && std::isfinite(*axis.min) && *axis.min < t.hi) t.lo = *axis.min;
  if (axis.max && std::isfinite(*axis.max) && *axis.max > t.lo) t.hi = *axis.max;
  std::erase_if(t.ticks, [&](const Tick& k) {
    return k.value < t.lo - 1e-9 * std::fabs(t.hi - t.lo) || k.value > t.hi + 1e-9 * std::fabs(t.hi - t.lo);
  });
  return t;
}

std::string SeriesColour(Palette& palette, std::string_view colour, std::string_view key) {
  if (Palette::IsValidColour(colour)) return std::string(colour);
  return palette.ColorFor(key);
}

std::string CountNoun(size_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

}  // namespace zinf::reports::detail
