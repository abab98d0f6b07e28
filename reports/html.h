// A small builder for self-contained HTML reports: embedded CSS, no scripts, fonts,
// images or other network references. Every string passed in is escaped by the builder;
// the only markup inserted verbatim is an Svg rendered by reports/svg.h.
//
//   Page page("zplan: gpt-13b on 4x DGX");
//   page.Section("Memory").Paragraph("Per-tier use against capacity.").AddSvg(chart);
//   page.AddTable(table);
//   ZINF_RETURN_IF_ERROR(page.Write("out/report.html"));
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "reports/escape.h"
#include "reports/svg.h"

namespace zinf::reports {

enum class Align { kAuto, kLeft, kRight, kCenter };

struct Table {
  std::string caption = {};
  std::vector<std::string> header = {};
  std::vector<std::vector<std::string>> rows = {};  // ragged rows are padded with empty cells
  // Per column; missing or kAuto: right-aligned when every non-empty cell is numeric
  // ("12", "-3.5", "1,024", "1.5 GiB", "42%", "3e9 B/s"), else left.
  std::vector<Align> align = {};
  std::vector<size_t> highlight_rows = {};  // e.g. the chosen plan
};

using KeyValues = std::vector<std::pair<std::string, std::string>>;

// True when `cell` reads as a number with an optional unit suffix.
bool IsNumericCell(std::string_view cell);

class Page {
 public:
  explicit Page(std::string title);

  Page& Subtitle(std::string text);          // under the <h1>
  Page& Section(std::string heading);        // <h2>, listed in the table of contents
  Page& Subsection(std::string heading);     // <h3>
  Page& Paragraph(std::string text);
  Page& Callout(std::string text, bool warning = false);  // highlighted box
  Page& List(const std::vector<std::string>& items);
  Page& KeyValueTable(const KeyValues& rows, std::string caption = {});
  Page& AddTable(const Table& table);
  Page& Pre(std::string text);               // preformatted (YAML, logs, commands)
  Page& AddSvg(const Svg& svg, std::string caption = {});
  // A link to a local file next to the report (e.g. "trace.json"); hrefs with a URL
  // scheme or starting with "//" are not linked (the text is shown without a link).
  Page& Link(std::string text, std::string relative_href);
  Page& Footer(std::string text);

  std::string Render() const;
  // Atomic (temporary file + rename); the error names the path.
  Status Write(const std::string& path) const;

 private:
  std::string title_;
  std::string subtitle_;
  std::string footer_;
  std::vector<std::pair<std::string, std::string>> toc_;  // (id, heading)
  std::string body_;
};

}  // namespace zinf::reports
