// Internal to reports/: the drawing primitives, axes, legend and frame shared by the
// chart renderers. Every text/tooltip argument is escaped here; `extra` attribute
// arguments are library constants only, never caller data.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reports/format.h"
#include "reports/svg.h"

namespace zinf::reports::detail {

inline constexpr std::string_view kInk = "#1f2933";
inline constexpr std::string_view kMuted = "#52606d";
inline constexpr std::string_view kGrid = "#e4e7eb";
inline constexpr std::string_view kAxisLine = "#9aa5b1";
inline constexpr std::string_view kWarn = "#c62828";
inline constexpr std::string_view kNoteInk = "#8d5a00";
inline constexpr double kTickFont = 11;
inline constexpr double kLabelFont = 12;
inline constexpr double kTitleFont = 15;
inline constexpr double kPad = 12;

enum class Anchor { kStart, kMiddle, kEnd };

struct LegendEntry {
  enum class Kind { kSwatch, kLine, kDashedLine };
  std::string name;
  std::string colour;
  Kind kind = Kind::kSwatch;
  int marker = -1;  // marker shape drawn on a line entry, -1 none
};

// Maps data values to pixels, linearly or in log10.
struct AxisMap {
  double d0 = 0, d1 = 1;  // domain, data units (positive when log)
  double r0 = 0, r1 = 1;  // pixels
  bool log = false;
  double operator()(double v) const;
};

class SvgBuilder {
 public:
  explicit SvgBuilder(double width);
  double width() const { return width_; }
  static double TextWidth(std::string_view text, double font_px);

  void AddNote(std::string note);
  double NotesHeight() const;

  // Title and subtitle; returns the y below them.
  double Header(std::string_view title, std::string_view subtitle);
  // Legend flowed in rows within [x0, x0 + max_w] starting at y; returns the y below it.
  double Legend(const std::vector<LegendEntry>& entries, double x0, double y, double max_w);

  void Rect(double x, double y, double w, double h, std::string_view fill,
            std::string_view tooltip = {}, std::string_view extra = {});
  void Line(double x1, double y1, double x2, double y2, std::string_view stroke,
            double stroke_width = 1, std::string_view dash = {}, std::string_view tooltip = {});
  void Text(double x, double y, std::string_view text, double size,
            Anchor anchor = Anchor::kStart, std::string_view fill = kInk,
            std::string_view extra = {}, std::string_view tooltip = {});
  void Polyline(const std::vector<std::pair<double, double>>& pts, std::string_view stroke,
                double stroke_width, bool dashed, std::string_view tooltip);
  // shape: 0 circle, 1 square, 2 triangle, 3 diamond (mod 4).
  void Marker(int shape, double x, double y, double r, std::string_view fill,
              std::string_view tooltip);
  void OpenGroup(std::string_view extra);  // <g extra>
  void CloseGroup();

  // Horizontal axis at y = axis_y: grid lines up to grid_top, tick labels, label.
  // Returns the y below the axis label.
  double XAxis(const AxisTicks& t, const AxisMap& m, double axis_y, double grid_top,
               std::string_view label);
  // Vertical axis at x = axis_x: grid lines to grid_right, tick labels left of it, the
  // label rotated at x = label_x.
  void YAxis(const AxisTicks& t, const AxisMap& m, double axis_x, double grid_right,
             std::string_view label, double label_x);
  static double MaxLabelWidth(const AxisTicks& t, double font_px);

  // Wraps everything into the <svg> root; height = content_bottom + notes.
  Svg Finish(std::string_view title, double content_bottom);

 private:
  double width_;
  std::string body_;
  std::vector<std::string> notes_;
};

// Ticks for `axis` over the data range [lo, hi] (axis.min/max override it). Log only when
// the axis asks for it and allow_log; force_zero puts 0 in a linear domain.
AxisTicks TicksFor(const Axis& axis, double lo, double hi, bool force_zero, bool allow_log);
// The explicit colour when valid, else the palette's colour for key.
std::string SeriesColour(Palette& palette, std::string_view colour, std::string_view key);
std::string CountNoun(size_t n, std::string_view one, std::string_view many);

}  // namespace zinf::reports::detail
