#include "reports/html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/file_util.h"

namespace zinf::reports {
namespace {

constexpr std::string_view kCss = R"css(
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #f4f6f8; color: #1f2933;
  font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1080px; margin: 0 auto; padding: 24px 28px 48px; background: #ffffff;
  min-height: 100vh; box-shadow: 0 0 0 1px #e4e7eb; }
h1 { font-size: 24px; margin: 8px 0 4px; letter-spacing: -0.01em; }
h2 { font-size: 18px; margin: 32px 0 10px; padding-bottom: 4px; border-bottom: 2px solid #e4e7eb; }
h3 { font-size: 15px; margin: 20px 0 8px; }
p { margin: 8px 0; max-width: 80ch; }
.subtitle { color: #52606d; margin-top: 0; }
nav.toc { background: #f8fafc; border: 1px solid #e4e7eb; border-radius: 6px; padding: 8px 14px;
  margin: 16px 0; font-size: 13px; }
nav.toc ol { margin: 4px 0; padding-left: 20px; columns: 2; }
a { color: #2f6fb3; }
table { border-collapse: collapse; margin: 10px 0 16px; font-size: 13px;
  font-variant-numeric: tabular-nums; }
caption { caption-side: top; text-align: left; font-weight: 600; padding: 4px 0; color: #323f4b; }
th, td { padding: 5px 10px; border-bottom: 1px solid #e4e7eb; vertical-align: top; }
thead th { background: #f0f3f6; border-bottom: 2px solid #cbd2d9; text-align: left; white-space: nowrap; }
tbody tr:nth-child(even) { background: #fafbfc; }
tbody tr.hl { background: #fff6d6; font-weight: 600; }
th.num, td.num { text-align: right; }
th.center, td.center { text-align: center; }
table.kv th { text-align: left; font-weight: 600; color: #323f4b; white-space: nowrap; }
pre { background: #f5f7fa; border: 1px solid #e4e7eb; border-radius: 6px; padding: 10px 12px;
  overflow-x: auto; font: 12px/1.45 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
figure { margin: 12px 0 20px; }
figure svg { max-width: 100%; height: auto; border: 1px solid #e4e7eb; border-radius: 6px; }
figcaption { color: #52606d; font-size: 12px; margin-top: 4px; }
.callout { border-left: 4px solid #2f6fb3; background: #eef4fb; padding: 8px 12px; margin: 12px 0;
  border-radius: 0 6px 6px 0; }
.callout.warn { border-left-color: #c62828; background: #fdecea; }
footer { margin-top: 40px; color: #7b8794; font-size: 12px; border-top: 1px solid #e4e7eb; padding-top: 8px; }
@media print { body { background: #ffffff; } main { box-shadow: none; } }
)css";

std::string Esc(std::string_view s) { return HtmlEscape(s); }

std::string Slug(std::string_view heading, size_t index) {
  std::string s;
  for (char c : heading) {
    auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) s += static_cast<char>(std::tolower(u));
    else if (!s.empty() && s.back() != '-') s += '-';
  }
  while (!s.empty() && s.back() == '-') s.pop_back();
  if (s.size() > 40) s.resize(40);
  return fmt::format("s{}-{}", index, s.empty() ? "section" : s);
}

const char* AlignClass(Align a) {
  switch (a) {
    case Align::kRight: return R"( class="num")";
    case Align::kCenter: return R"( class="center")";
    default: return "";
  }
}

bool HasScheme(std::string_view href) {
  if (href.starts_with("//") || href.starts_with("\\\\")) return true;
  size_t colon = href.find(':');
  if (colon == std::string_view::npos) return false;
  size_t stop = href.find_first_of("/?#");
  return stop == std::string_view::npos || colon < stop;
}

}  // namespace

bool IsNumericCell(std::string_view c) {
  while (!c.empty() && std::isspace(static_cast<unsigned char>(c.front()))) c.remove_prefix(1);
  while (!c.empty() && std::isspace(static_cast<unsigned char>(c.back()))) c.remove_suffix(1);
  size_t i = 0;
  if (i < c.size() && (c[i] == '-' || c[i] == '+' || c[i] == '~')) ++i;
  size_t digits = 0;
  for (; i < c.size(); ++i) {
    char ch = c[i];
    if (std::isdigit(static_cast<unsigned char>(ch))) ++digits;
    else if (ch != '.' && ch != ',') break;
  }
  if (digits == 0) return false;
  // Exponent: e.g. 3e9, 1.2E-3.
  if (i + 1 < c.size() && (c[i] == 'e' || c[i] == 'E') &&
      (std::isdigit(static_cast<unsigned char>(c[i + 1])) || c[i + 1] == '-' || c[i + 1] == '+')) {
    size_t j = i + 1;
    if (c[j] == '-' || c[j] == '+') ++j;
    size_t ed = 0;
    while (j < c.size() && std::isdigit(static_cast<unsigned char>(c[j]))) ++j, ++ed;
    if (ed > 0) i = j;
  }
  if (i < c.size() && c[i] == ' ') ++i;
  // Unit suffix: letters, '/', '%', 'x' multipliers; at most 12 characters.
  std::string_view unit = c.substr(i);
  if (unit.size() > 12) return false;
  return std::all_of(unit.begin(), unit.end(), [](char ch) {
    return std::isalpha(static_cast<unsigned char>(ch)) || ch == '/' || ch == '%';
  });
}

Page::Page(std::string title) : title_(std::move(title)) {}

Page& Page::Subtitle(std::string text) {
  subtitle_ = std::move(text);
  return *this;
}

Page& Page::Section(std::string heading) {
  std::string id = Slug(heading, toc_.size() + 1);
  body_ += fmt::format("<h2 id=\"{}\">{}</h2>\n", id, Esc(heading));
  toc_.emplace_back(std::move(id), std::move(heading));
  return *this;
}

Page& Page::Subsection(std::string heading) {
  body_ += "<h3>" + Esc(heading) + "</h3>\n";
  return *this;
}

Page& Page::Paragraph(std::string text) {
  body_ += "<p>" + Esc(text) + "</p>\n";
  return *this;
}

Page& Page::Callout(std::string text, bool warning) {
  body_ += fmt::format("<div class=\"callout{}\">{}</div>\n", warning ? " warn" : "", Esc(text));
  return *this;
}

Page& Page::List(const std::vector<std::string>& items) {
  body_ += "<ul>\n";
  for (const auto& it : items) body_ += "<li>" + Esc(it) + "</li>\n";
  body_ += "</ul>\n";
  return *this;
}

Page& Page::KeyValueTable(const KeyValues& rows, std::string caption) {
  body_ += "<table class=\"kv\">\n";
  if (!caption.empty()) body_ += "<caption>" + Esc(caption) + "</caption>\n";
  body_ += "<tbody>\n";
  for (const auto& [k, v] : rows)
    body_ += fmt::format("<tr><th scope=\"row\">{}</th><td>{}</td></tr>\n", Esc(k), Esc(v));
  body_ += "</tbody>\n</table>\n";
  return *this;
}

Page& Page::AddTable(const Table& t) {
  size_t ncol = t.header.size();
  for (const auto& r : t.rows) ncol = std::max(ncol, r.size());
  std::vector<Align> align(ncol, Align::kAuto);
  for (size_t c = 0; c < ncol; ++c) {
    if (c < t.align.size() && t.align[c] != Align::kAuto) {
      align[c] = t.align[c];
      continue;
    }
    bool any = false, all = true;
    for (const auto& r : t.rows) {
      if (c >= r.size() || r[c].empty() || r[c] == "-" || r[c] == "n/a") continue;
      any = true;
      all = all && IsNumericCell(r[c]);
    }
    align[c] = any && all ? Align::kRight : Align::kLeft;
  }
  body_ += "<table>\n";
  if (!t.caption.empty()) body_ += "<caption>" + Esc(t.caption) + "</caption>\n";
  if (!t.header.empty()) {
    body_ += "<thead><tr>";
    for (size_t c = 0; c < ncol; ++c)
      body_ += fmt::format("<th scope=\"col\"{}>{}</th>", AlignClass(align[c]),
                           c < t.header.size() ? Esc(t.header[c]) : "");
    body_ += "</tr></thead>\n";
  }
  body_ += "<tbody>\n";
  for (size_t r = 0; r < t.rows.size(); ++r) {
    bool hl = std::find(t.highlight_rows.begin(), t.highlight_rows.end(), r) != t.highlight_rows.end();
    body_ += hl ? "<tr class=\"hl\">" : "<tr>";
    for (size_t c = 0; c < ncol; ++c)
      body_ += fmt::format("<td{}>{}</td>", AlignClass(align[c]),
                           c < t.rows[r].size() ? Esc(t.rows[r][c]) : "");
    body_ += "</tr>\n";
  }
  body_ += "</tbody>\n</table>\n";
  return *this;
}

Page& Page::Pre(std::string text) {
  body_ += "<pre>" + Esc(text) + "</pre>\n";
  return *this;
}

Page& Page::AddSvg(const Svg& svg, std::string caption) {
  if (svg.empty()) return *this;
  body_ += "<figure>\n";
  body_ += svg.markup();  // produced (and escaped) by reports/svg
  if (!caption.empty()) body_ += "<figcaption>" + Esc(caption) + "</figcaption>\n";
  body_ += "</figure>\n";
  return *this;
}

Page& Page::Link(std::string text, std::string href) {
  if (href.empty() || HasScheme(href)) {
    body_ += "<p>" + Esc(text) + "</p>\n";
  } else {
    body_ += fmt::format("<p><a href=\"{}\">{}</a></p>\n", Esc(href), Esc(text));
  }
  return *this;
}

Page& Page::Footer(std::string text) {
  footer_ = std::move(text);
  return *this;
}

std::string Page::Render() const {
  std::string out;
  out.reserve(body_.size() + kCss.size() + 1024);
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n";
  out += "<title>" + Esc(title_) + "</title>\n<style>";
  out += kCss;
  out += "</style>\n</head>\n<body>\n<main>\n";
  out += "<h1>" + Esc(title_) + "</h1>\n";
  if (!subtitle_.empty()) out += "<p class=\"subtitle\">" + Esc(subtitle_) + "</p>\n";
  if (toc_.size() >= 2) {
    out += "<nav class=\"toc\"><strong>Contents</strong>\n<ol>\n";
    for (const auto& [id, heading] : toc_)
      out += fmt::format("<li><a href=\"#{}\">{}</a></li>\n", id, Esc(heading));
    out += "</ol>\n</nav>\n";
  }
  out += body_;
  if (!footer_.empty()) out += "<footer>" + Esc(footer_) + "</footer>\n";
  out += "</main>\n</body>\n</html>\n";
  return out;
}

Status Page::Write(const std::string& path) const {
  Status st = WriteFileAtomic(path, Render());
  if (!st.ok()) return st.WithContext(fmt::format("writing HTML report {}", path));
  return st;
}

}  // namespace zinf::reports
