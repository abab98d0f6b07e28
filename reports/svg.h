// Self-contained inline SVG charts (no scripts, fonts or external references).
// Every string from the caller (titles, names, labels) is escaped here; tooltips are
// <title> elements. Data that cannot be drawn (NaN/inf, values <= 0 on a log axis,
// mismatched lengths) is dropped and reported as a note under the chart and in notes().
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reports/format.h"

namespace zinf::reports {

namespace detail {
class SvgBuilder;
}

// A rendered chart. Only this library creates non-empty ones, which is what lets
// Page::AddSvg insert the markup without escaping it.
class Svg {
 public:
  Svg() = default;
  const std::string& markup() const { return markup_; }
  const std::vector<std::string>& notes() const { return notes_; }
  bool empty() const { return markup_.empty(); }

 private:
  friend class detail::SvgBuilder;
  std::string markup_;
  std::vector<std::string> notes_;
};

// Colours by key (series, resource, tier), assigned in first-seen order and stable
// afterwards: share one Palette across the charts of a report so that a strategy or a
// resource keeps its colour everywhere. Not thread-safe.
class Palette {
 public:
  Palette();
  explicit Palette(std::vector<std::string> colours);  // "#rrggbb"; invalid ones skipped
  const std::string& ColorFor(std::string_view key);
  // Pins a colour for a key; false (and no change) if `colour` is not "#rgb"/"#rrggbb".
  bool Assign(std::string_view key, std::string_view colour);
  static const std::vector<std::string>& DefaultColours();
  static bool IsValidColour(std::string_view colour);

 private:
  std::vector<std::string> colours_;
  std::map<std::string, std::string, std::less<>> assigned_;
  size_t next_ = 0;
};

enum class Scale { kLinear, kLog10 };

struct Axis {
  std::string label = {};
  Unit unit = Unit::kNone;
  Scale scale = Scale::kLinear;
  bool include_zero = false;   // linear only (bars always include zero)
  std::optional<double> min = std::nullopt;   // data units; overrides the data range
  std::optional<double> max = std::nullopt;
};

inline Axis SecondsAxis(std::string label) {
  Axis a;
  a.label = std::move(label);
  a.unit = Unit::kSeconds;
  return a;
}

// ---- Bars: grouped or stacked, vertical or horizontal, optional capacity markers.
struct BarSeries {
  std::string name = {};
  std::vector<double> values = {};  // one per category; NaN = no bar
  std::string colour = {};          // empty: from the palette
};

enum class BarLayout { kGrouped, kStacked };
enum class Orientation { kVertical, kHorizontal };

struct BarChart {
  std::string title = {};
  std::string subtitle = {};
  std::vector<std::string> categories = {};
  std::vector<BarSeries> series = {};
  Axis value_axis;  // linear only
  BarLayout layout = BarLayout::kGrouped;
  Orientation orientation = Orientation::kVertical;
  // Optional capacity per category (e.g. a tier's bytes), drawn as a dashed marker; bars
  // (grouped) or stacks (stacked) above it are outlined in red. NaN = no marker.
  std::vector<double> capacity = {};
  std::string capacity_label = "capacity";
  bool value_labels = true;  // drawn where they fit; always in the tooltip
  double width = 720;
  double height = 0;  // 0: from the number of categories
};

Svg RenderBarChart(const BarChart& chart, Palette* palette = nullptr);

// ---- Lines: several series, linear or log10 axes, markers.
struct Point {
  double x = 0;
  double y = 0;
  std::string label = {};  // optional extra tooltip text
};

struct LineSeries {
  std::string name = {};
  std::vector<Point> points = {};  // drawn in the given order
  std::string colour = {};
  bool markers = true;
  bool dashed = false;
};

struct LineChart {
  std::string title = {};
  std::string subtitle = {};
  Axis x;
  Axis y;
  std::vector<LineSeries> series = {};
  double width = 720;
  double height = 420;
};

Svg RenderLineChart(const LineChart& chart, Palette* palette = nullptr);

// ---- Timeline (Gantt): lanes of intervals coloured by key.
struct GanttInterval {
  double start_s = 0;
  double dur_s = 0;
  std::string label = {};  // drawn inside the bar when it fits; always in the tooltip
  std::string key = {};    // colour + legend entry (e.g. the phase or resource)
};

struct GanttLane {
  std::string name = {};   // e.g. "compute", "H2D"
  std::string group = {};  // optional, e.g. "predicted" / "measured"; consecutive lanes of a
                      // group are labelled together and separated from the next group
  std::vector<GanttInterval> intervals = {};
};

struct GanttChart {
  std::string title = {};
  std::string subtitle = {};
  std::vector<GanttLane> lanes = {};
  Axis time = SecondsAxis("time");  // linear only
  bool from_zero = true;  // start the axis at 0 rather than the first interval
  double width = 960;
  double lane_height = 22;
};

Svg RenderGantt(const GanttChart& chart, Palette* palette = nullptr);

}  // namespace zinf::reports
