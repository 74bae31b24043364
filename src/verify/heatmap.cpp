#include "verify/heatmap.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/error.hpp"
#include "text/utf8.hpp"

namespace verity::verify {

// ---------------------------------------------------------------- checks ---

void check_plot(const HeatmapPlot& plot) {
  VERITY_CHECK(plot.row_labels.size() == plot.map.rows(), ConfigError, "heatmap: ",
               plot.row_labels.size(), " row labels for a map with ", plot.map.rows(), " rows");
  VERITY_CHECK(plot.col_labels.size() == plot.map.cols(), ConfigError, "heatmap: ",
               plot.col_labels.size(), " column labels for a map with ", plot.map.cols(),
               " columns");
  VERITY_CHECK(plot.max_tokens > 0, ConfigError, "heatmap: max_tokens must be positive");
}

bool heatmap_cropped(const HeatmapPlot& plot) {
  return plot.map.rows() > plot.max_tokens || plot.map.cols() > plot.max_tokens;
}

SimilarityMap heatmap_shown_map(const HeatmapPlot& plot) {
  const size_t rows = std::min(plot.map.rows(), plot.max_tokens);
  const size_t cols = std::min(plot.map.cols(), plot.max_tokens);
  std::vector<float> values;
  values.reserve(rows * cols);
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) values.push_back(plot.map.at(i, j));
  return SimilarityMap(rows, cols, std::move(values));
}

// -------------------------------------------------------------- colormap ---

Rgb heatmap_color(float cos) {
  struct Stop {
    float at;
    Rgb color;
  };
  static constexpr std::array<Stop, 5> kStops{{{-1.0f, {5, 48, 97}},
                                                {-0.5f, {67, 147, 195}},
                                                {0.0f, {247, 247, 247}},
                                                {0.5f, {214, 96, 77}},
                                                {1.0f, {103, 0, 31}}}};
  const float v = std::isfinite(cos) ? std::clamp(cos, -1.0f, 1.0f) : 0.0f;
  size_t k = 0;
  while (k + 2 < kStops.size() && v > kStops[k + 1].at) ++k;
  const auto& a = kStops[k];
  const auto& b = kStops[k + 1];
  const float t = (v - a.at) / (b.at - a.at);
  auto mix = [t](uint8_t x, uint8_t y) {
    return static_cast<uint8_t>(std::lround(x + (float(y) - float(x)) * t));
  };
  return {mix(a.color.r, b.color.r), mix(a.color.g, b.color.g), mix(a.color.b, b.color.b)};
}

// ----------------------------------------------------------------- text ----

namespace {

constexpr char32_t kReplacement = 0xFFFD;

// Decodes UTF-8; each invalid or overlong sequence yields one U+FFFD.
std::u32string decode_utf8(std::string_view s) {
  std::u32string out;
  size_t i = 0;
  while (i < s.size()) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    size_t len = b0 < 0x80 ? 1 : (b0 >> 5) == 0x6 ? 2 : (b0 >> 4) == 0xE ? 3 : (b0 >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > s.size()) {
      out.push_back(kReplacement);
      ++i;
      continue;
    }
    char32_t cp = len == 1 ? b0 : b0 & (0x7F >> len);
    bool ok = true;
    for (size_t k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) ok = false;
      cp = (cp << 6) | (b & 0x3F);
    }
    static constexpr char32_t kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};
    if (!ok || cp < kMinForLength[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      out.push_back(kReplacement);
      ++i;
      continue;
    }
    out.push_back(cp);
    i += len;
  }
  return out;
}

std::string encode_utf8(std::u32string_view s) {
  std::string out;
  for (char32_t cp : s) text::append_utf8(out, cp);
  return out;
}

// XML 1.0 forbids most C0 controls; C1 controls and non-characters are invisible anyway.
bool drawable(char32_t cp) {
  return cp >= 0x20 && cp != 0x7F && !(cp >= 0x80 && cp < 0xA0) && cp != 0xFFFE && cp != 0xFFFF;
}

// Sanitized code points of free text (titles), cut to max_chars.
std::u32string clean_text(std::string_view text, size_t max_chars) {
  std::u32string cps = decode_utf8(text);
  for (auto& cp : cps)
    if (!drawable(cp)) cp = cp == U'\t' || cp == U'\n' || cp == U'\r' ? U' ' : kReplacement;
  if (cps.size() > max_chars) {
    cps.resize(max_chars - 1);
    cps.push_back(U'…');
  }
  return cps;
}

}  // namespace

std::string display_token(std::string_view token) {
  if (token.empty()) return "∅";
  std::u32string cps = decode_utf8(token);
  for (auto& cp : cps) {
    if (cp == U'▁') cp = U' ';
    else if (!drawable(cp)) cp = kReplacement;
  }
  const auto first = cps.find_first_not_of(U' ');
  if (first == std::u32string::npos) return "␣";
  cps = cps.substr(first, cps.find_last_not_of(U' ') - first + 1);
  if (cps.size() > kHeatmapMaxLabelChars) {
    cps.resize(kHeatmapMaxLabelChars - 1);
    cps.push_back(U'…');
  }
  return encode_utf8(cps);
}

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

// ---------------------------------------------------------------- layout ---

namespace {

constexpr size_t kMaxTitleChars = 140;
constexpr double kMargin = 16;
constexpr double kTitleFont = 16, kTextFont = 12, kTickFont = 11, kScoreFont = 13;
constexpr double kLineGap = 20;

// The PNG draws text with a 5×8 bitmap font (advance 6 px) at integer scales;
// this keeps the one layout wide enough for both renderers.
int png_text_scale(double font) { return font >= 15 ? 2 : 1; }
double char_advance(double font) { return std::max(0.6 * font, 6.0 * png_text_scale(font)); }
double text_width(std::u32string_view s, double font) { return double(s.size()) * char_advance(font); }

std::string format_value(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", double(v));
  std::string s = buf;
  return s == "-0.00" ? "0.00" : s;
}

std::string format_score(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", double(v));
  return buf;
}

struct TextLine {
  std::u32string text;
  double font = kTextFont;
  enum Kind { kTitle, kNote, kWarning } kind = kNote;  // warnings (cropping) are red
};

// Every position both renderers need, in pixels.
struct Layout {
  SimilarityMap shown;
  std::vector<std::u32string> row_labels, col_labels;  // display form
  std::vector<size_t> row_argmax;  // per shown row, argmax over ALL columns
  std::vector<float> row_max;
  bool annotate = false;
  double cell = 0, label_font = 0, value_font = 0;
  std::vector<TextLine> header;  // title, subtitle, notices
  double header_y0 = 0;          // baseline of the first header line
  double grid_x = 0, grid_y = 0, grid_w = 0, grid_h = 0;
  double rowmax_x = 0, rowmax_w = 0;  // "max" column right of the grid (annotated maps only)
  double bar_x = 0, bar_y = 0, bar_w = 16, bar_h = 0;
  double scores_x = 0, scores_y = 0, scores_right = 0;
  std::vector<std::pair<std::u32string, std::u32string>> scores;  // name, value
  double width = 0, height = 0;
};

Layout make_layout(const HeatmapPlot& plot) {
  check_plot(plot);
  Layout L;
  L.shown = heatmap_shown_map(plot);
  const size_t rows = L.shown.rows(), cols = L.shown.cols();
  for (size_t i = 0; i < rows; ++i) L.row_labels.push_back(decode_utf8(display_token(plot.row_labels[i])));
  for (size_t j = 0; j < cols; ++j) L.col_labels.push_back(decode_utf8(display_token(plot.col_labels[j])));
  for (size_t i = 0; i < rows; ++i) {
    const auto row = plot.map.row(i);
    const size_t best = std::max_element(row.begin(), row.end()) - row.begin();
    L.row_argmax.push_back(best);
    L.row_max.push_back(row.empty() ? 0.0f : row[best]);
  }

  const size_t extent = std::max<size_t>({rows, cols, 1});
  L.annotate = rows > 0 && cols > 0 && rows <= kHeatmapMaxAnnotated && cols <= kHeatmapMaxAnnotated;
  L.cell = L.annotate ? 36 : std::clamp(std::floor(1100.0 / double(extent)), 8.0, 26.0);
  L.label_font = std::min(kTextFont, L.cell - 1);
  L.value_font = 10;

  if (!plot.title.empty())
    L.header.push_back({clean_text(plot.title, kMaxTitleChars), kTitleFont, TextLine::kTitle});
  L.header.push_back({decode_utf8(cat("rows: ", plot.map.rows(), " query tokens · columns: ",
                                      plot.map.cols(), " document tokens · color: cos(query token, "
                                      "document token)"))});
  L.header.push_back({decode_utf8(cat("outlined: each row's argmax, the cell MaxSim (f1) picks",
                                      L.annotate ? " · max: the row's maximum" : ""))});
  if (heatmap_cropped(plot))
    L.header.push_back({decode_utf8(cat("cropped: showing the first ", rows, " of ", plot.map.rows(),
                                        " query tokens and ", cols, " of ", plot.map.cols(),
                                        " document tokens; scores use the full map")),
                        kTextFont, TextLine::kWarning});
  if (plot.map.empty())
    L.header.push_back({decode_utf8("empty map: no query or no document tokens; every verifier scores 0"),
                        kTextFont, TextLine::kWarning});
  L.header_y0 = kMargin + kTitleFont;

  double row_label_w = 0, col_label_h = 0;
  for (const auto& s : L.row_labels) row_label_w = std::max(row_label_w, text_width(s, L.label_font));
  for (const auto& s : L.col_labels) col_label_h = std::max(col_label_h, text_width(s, L.label_font));

  const double header_bottom = L.header_y0 + double(L.header.size() - 1) * kLineGap + 12;
  L.grid_x = kMargin + row_label_w + 8;
  L.grid_y = header_bottom + col_label_h + 10;
  L.grid_w = double(cols) * L.cell;
  L.grid_h = double(rows) * L.cell;
  L.rowmax_x = L.grid_x + L.grid_w;
  L.rowmax_w = L.annotate ? 48 : 0;

  L.bar_x = L.rowmax_x + L.rowmax_w + 24;
  L.bar_y = L.grid_y;
  L.bar_h = std::max(L.grid_h, 160.0);
  const double bar_right = L.bar_x + L.bar_w + 8 + text_width(U"-1.0", kTickFont);

  for (const auto& s : plot.scores)
    L.scores.emplace_back(clean_text(s.name, 40), decode_utf8(format_score(s.score)));
  double name_w = text_width(U"verifier", kScoreFont);
  for (const auto& s : L.scores) name_w = std::max(name_w, text_width(s.first, kScoreFont));
  L.scores_x = bar_right + 32;
  L.scores_y = L.grid_y;
  L.scores_right = L.scores_x + name_w + 16 + text_width(U"-0.0000", kScoreFont);
  const double scores_bottom = L.scores_y + kLineGap * double(L.scores.size() + 1);

  L.width = L.scores_right + kMargin;
  for (const auto& line : L.header)
    L.width = std::max(L.width, kMargin * 2 + text_width(line.text, line.font));
  L.height = std::max({L.grid_y + L.grid_h, L.bar_y + L.bar_h + kTickFont, scores_bottom}) + kMargin;
  L.width = std::ceil(L.width);
  L.height = std::ceil(L.height);
  return L;
}

// Colors used by both renderers.
constexpr Rgb kInk{17, 17, 17}, kMuted{85, 85, 85}, kWarning{178, 24, 43}, kWhite{255, 255, 255};
constexpr Rgb kGridLine{255, 255, 255};

// Dark cells get white values.
Rgb value_ink(Rgb fill) {
  const double luminance = 0.299 * fill.r + 0.587 * fill.g + 0.114 * fill.b;
  return luminance < 140 ? kWhite : kInk;
}

std::string hex(Rgb c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r, c.g, c.b);
  return buf;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  std::string s = buf;
  if (s.size() > 2 && s.substr(s.size() - 2) == ".0") s.resize(s.size() - 2);
  return s;
}

constexpr std::array<float, 5> kTicks{1.0f, 0.5f, 0.0f, -0.5f, -1.0f};
std::string tick_label(float t) { return t > 0 ? "+" + num(t) : t == 0 ? "0" : num(t); }

}  // namespace

// ------------------------------------------------------------------- SVG ---

std::string render_heatmap_svg(const HeatmapPlot& plot) {
  const Layout L = make_layout(plot);
  const size_t rows = L.shown.rows(), cols = L.shown.cols();
  std::ostringstream o;
  auto text = [](std::u32string_view s) { return xml_escape(encode_utf8(s)); };
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" << num(L.width)
    << "\" height=\"" << num(L.height) << "\" viewBox=\"0 0 " << num(L.width) << " "
    << num(L.height) << "\" fill=\"" << hex(kInk) << "\">\n"
    // No fill in the text rule: CSS would override the per-value fill attributes.
    << "<style>text{font-family:'DejaVu Sans Mono',Menlo,Consolas,monospace}"
    << " .title{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;font-weight:bold} "
       ".warn{fill:"
    << hex(kWarning) << "} .muted{fill:" << hex(kMuted) << "}</style>\n"
    << "<defs><linearGradient id=\"colorbar\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\">";
  for (int k = 0; k <= 20; ++k) {
    const float v = 1.0f - float(k) / 10.0f;
    o << "<stop offset=\"" << num(k * 5.0) << "%\" stop-color=\"" << hex(heatmap_color(v)) << "\"/>";
  }
  o << "</linearGradient></defs>\n"
    << "<rect class=\"background\" x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";

  for (size_t k = 0; k < L.header.size(); ++k) {
    static constexpr const char* kClass[] = {"title", "muted", "warn"};
    o << "<text x=\"" << num(kMargin) << "\" y=\"" << num(L.header_y0 + double(k) * kLineGap)
      << "\" font-size=\"" << num(L.header[k].font) << "\" class=\"" << kClass[L.header[k].kind]
      << "\">" << text(L.header[k].text) << "</text>\n";
  }

  o << "<g class=\"row-labels\" font-size=\"" << num(L.label_font) << "\" text-anchor=\"end\">\n";
  for (size_t i = 0; i < rows; ++i)
    o << "<text x=\"" << num(L.grid_x - 6) << "\" y=\"" << num(L.grid_y + (double(i) + 0.5) * L.cell)
      << "\" dy=\"0.35em\">" << text(L.row_labels[i]) << "</text>\n";
  o << "</g>\n<g class=\"col-labels\" font-size=\"" << num(L.label_font) << "\">\n";
  for (size_t j = 0; j < cols; ++j) {
    const double x = L.grid_x + (double(j) + 0.5) * L.cell, y = L.grid_y - 6;
    o << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\" dy=\"0.35em\" transform=\"rotate(-90 "
      << num(x) << " " << num(y) << ")\">" << text(L.col_labels[j]) << "</text>\n";
  }
  o << "</g>\n<g class=\"cells\" stroke=\"" << hex(kGridLine) << "\" stroke-width=\""
    << (L.cell >= 16 ? "1" : "0.5") << "\">\n";
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) {
      const float v = L.shown.at(i, j);
      o << "<rect class=\"cell\" x=\"" << num(L.grid_x + double(j) * L.cell) << "\" y=\""
        << num(L.grid_y + double(i) * L.cell) << "\" width=\"" << num(L.cell) << "\" height=\""
        << num(L.cell) << "\" fill=\"" << hex(heatmap_color(v)) << "\"><title>"
        << text(L.row_labels[i]) << " × " << text(L.col_labels[j]) << ": " << format_value(v)
        << "</title></rect>\n";
    }
  o << "</g>\n";
  if (L.annotate) {
    o << "<g class=\"values\" font-size=\"" << num(L.value_font) << "\" text-anchor=\"middle\">\n";
    for (size_t i = 0; i < rows; ++i)
      for (size_t j = 0; j < cols; ++j) {
        const float v = L.shown.at(i, j);
        o << "<text x=\"" << num(L.grid_x + (double(j) + 0.5) * L.cell) << "\" y=\""
          << num(L.grid_y + (double(i) + 0.5) * L.cell) << "\" dy=\"0.35em\" fill=\""
          << hex(value_ink(heatmap_color(v))) << "\""
          << (L.row_argmax[i] == j ? " font-weight=\"bold\"" : "") << ">" << format_value(v)
          << "</text>\n";
      }
    o << "</g>\n<g class=\"row-max\" font-size=\"" << num(L.value_font) << "\">\n"
      << "<text x=\"" << num(L.rowmax_x + 8) << "\" y=\"" << num(L.grid_y - 6)
      << "\" class=\"muted\">max</text>\n";
    for (size_t i = 0; i < rows; ++i)
      o << "<text x=\"" << num(L.rowmax_x + 8) << "\" y=\"" << num(L.grid_y + (double(i) + 0.5) * L.cell)
        << "\" dy=\"0.35em\">" << format_value(L.row_max[i]) << "</text>\n";
    o << "</g>\n";
  }
  const double stroke = std::max(1.5, L.cell / 12);
  o << "<g class=\"argmax-marks\" fill=\"none\" stroke=\"" << hex(kInk) << "\" stroke-width=\""
    << num(stroke) << "\">\n";
  for (size_t i = 0; i < rows; ++i) {
    const double y = L.grid_y + double(i) * L.cell;
    if (L.row_argmax[i] < cols) {
      o << "<rect class=\"argmax\" x=\"" << num(L.grid_x + double(L.row_argmax[i]) * L.cell + stroke / 2)
        << "\" y=\"" << num(y + stroke / 2) << "\" width=\"" << num(L.cell - stroke) << "\" height=\""
        << num(L.cell - stroke) << "\"/>\n";
    } else {  // the best column was cropped away: point right, past the grid
      o << "<path class=\"argmax-beyond\" d=\"M" << num(L.rowmax_x + 2) << " " << num(y + 1) << " L"
        << num(L.rowmax_x + 2 + L.cell / 2) << " " << num(y + L.cell / 2) << " L" << num(L.rowmax_x + 2)
        << " " << num(y + L.cell - 1) << "\"/>\n";
    }
  }
  o << "</g>\n";

  o << "<g class=\"colorbar\" font-size=\"" << num(kTickFont) << "\">\n"
    << "<rect x=\"" << num(L.bar_x) << "\" y=\"" << num(L.bar_y) << "\" width=\"" << num(L.bar_w)
    << "\" height=\"" << num(L.bar_h) << "\" fill=\"url(#colorbar)\" stroke=\"" << hex(kMuted)
    << "\" stroke-width=\"0.5\"/>\n";
  for (float t : kTicks) {
    const double y = L.bar_y + (1.0 - t) / 2.0 * L.bar_h;
    o << "<line x1=\"" << num(L.bar_x + L.bar_w) << "\" y1=\"" << num(y) << "\" x2=\""
      << num(L.bar_x + L.bar_w + 4) << "\" y2=\"" << num(y) << "\" stroke=\"" << hex(kMuted) << "\"/>"
      << "<text x=\"" << num(L.bar_x + L.bar_w + 7) << "\" y=\"" << num(y) << "\" dy=\"0.35em\">"
      << tick_label(t) << "</text>\n";
  }
  o << "</g>\n<g class=\"scores\" font-size=\"" << num(kScoreFont) << "\">\n"
    << "<text x=\"" << num(L.scores_x) << "\" y=\"" << num(L.scores_y + kScoreFont)
    << "\" class=\"title\">verifier scores</text>\n";
  for (size_t k = 0; k < L.scores.size(); ++k) {
    const double y = L.scores_y + kScoreFont + kLineGap * double(k + 1);
    o << "<text x=\"" << num(L.scores_x) << "\" y=\"" << num(y) << "\">" << text(L.scores[k].first)
      << "</text><text x=\"" << num(L.scores_right) << "\" y=\"" << num(y)
      << "\" text-anchor=\"end\">" << text(L.scores[k].second) << "</text>\n";
  }
  o << "</g>\n</svg>\n";
  return o.str();
}

// ------------------------------------------------------------------- PNG ---

namespace {

// 5×8 bitmap glyphs drawn for this file: printable ASCII, then "…", "␣", a
// hollow box for characters without a glyph, and "·". One byte per row, top to bottom, bit 4
// is the leftmost column; the last row holds descenders.
constexpr size_t kGlyphCount = 99;
constexpr uint8_t kGlyphs[kGlyphCount][8] = {
{0x00,0x00,0x00,0x00,0x00,0x00,0x00,0x00},  // space
    {0x04,0x04,0x04,0x04,0x04,0x00,0x04,0x00},  // !
    {0x0A,0x0A,0x0A,0x00,0x00,0x00,0x00,0x00},  // "
    {0x0A,0x0A,0x1F,0x0A,0x1F,0x0A,0x0A,0x00},  // #
    {0x04,0x0F,0x14,0x0E,0x05,0x1E,0x04,0x00},  // $
    {0x18,0x19,0x02,0x04,0x08,0x13,0x03,0x00},  // %
    {0x0C,0x12,0x14,0x08,0x15,0x12,0x0D,0x00},  // &
    {0x0C,0x04,0x08,0x00,0x00,0x00,0x00,0x00},  // quote
    {0x02,0x04,0x08,0x08,0x08,0x04,0x02,0x00},  // (
    {0x08,0x04,0x02,0x02,0x02,0x04,0x08,0x00},  // )
    {0x00,0x04,0x15,0x0E,0x15,0x04,0x00,0x00},  // *
    {0x00,0x04,0x04,0x1F,0x04,0x04,0x00,0x00},  // +
    {0x00,0x00,0x00,0x00,0x0C,0x04,0x08,0x00},  // ,
    {0x00,0x00,0x00,0x1F,0x00,0x00,0x00,0x00},  // -
    {0x00,0x00,0x00,0x00,0x00,0x0C,0x0C,0x00},  // .
    {0x00,0x01,0x02,0x04,0x08,0x10,0x00,0x00},  // /
    {0x0E,0x11,0x13,0x15,0x19,0x11,0x0E,0x00},  // 0
    {0x04,0x0C,0x04,0x04,0x04,0x04,0x0E,0x00},  // 1
    {0x0E,0x11,0x01,0x02,0x04,0x08,0x1F,0x00},  // 2
    {0x1F,0x02,0x04,0x02,0x01,0x11,0x0E,0x00},  // 3
    {0x02,0x06,0x0A,0x12,0x1F,0x02,0x02,0x00},  // 4
    {0x1F,0x10,0x1E,0x01,0x01,0x11,0x0E,0x00},  // 5
    {0x06,0x08,0x10,0x1E,0x11,0x11,0x0E,0x00},  // 6
    {0x1F,0x01,0x02,0x04,0x08,0x08,0x08,0x00},  // 7
    {0x0E,0x11,0x11,0x0E,0x11,0x11,0x0E,0x00},  // 8
    {0x0E,0x11,0x11,0x0F,0x01,0x02,0x0C,0x00},  // 9
    {0x00,0x0C,0x0C,0x00,0x0C,0x0C,0x00,0x00},  // :
    {0x00,0x0C,0x0C,0x00,0x0C,0x04,0x08,0x00},  // ;
    {0x02,0x04,0x08,0x10,0x08,0x04,0x02,0x00},  // <
    {0x00,0x00,0x1F,0x00,0x1F,0x00,0x00,0x00},  // =
    {0x08,0x04,0x02,0x01,0x02,0x04,0x08,0x00},  // >
    {0x0E,0x11,0x01,0x02,0x04,0x00,0x04,0x00},  // ?
    {0x0E,0x11,0x01,0x0D,0x15,0x15,0x0E,0x00},  // @
    {0x0E,0x11,0x11,0x11,0x1F,0x11,0x11,0x00},  // A
    {0x1E,0x11,0x11,0x1E,0x11,0x11,0x1E,0x00},  // B
    {0x0E,0x11,0x10,0x10,0x10,0x11,0x0E,0x00},  // C
    {0x1C,0x12,0x11,0x11,0x11,0x12,0x1C,0x00},  // D
    {0x1F,0x10,0x10,0x1E,0x10,0x10,0x1F,0x00},  // E
    {0x1F,0x10,0x10,0x1E,0x10,0x10,0x10,0x00},  // F
    {0x0E,0x11,0x10,0x17,0x11,0x11,0x0F,0x00},  // G
    {0x11,0x11,0x11,0x1F,0x11,0x11,0x11,0x00},  // H
    {0x0E,0x04,0x04,0x04,0x04,0x04,0x0E,0x00},  // I
    {0x07,0x02,0x02,0x02,0x02,0x12,0x0C,0x00},  // J
    {0x11,0x12,0x14,0x18,0x14,0x12,0x11,0x00},  // K
    {0x10,0x10,0x10,0x10,0x10,0x10,0x1F,0x00},  // L
    {0x11,0x1B,0x15,0x15,0x11,0x11,0x11,0x00},  // M
    {0x11,0x11,0x19,0x15,0x13,0x11,0x11,0x00},  // N
    {0x0E,0x11,0x11,0x11,0x11,0x11,0x0E,0x00},  // O
    {0x1E,0x11,0x11,0x1E,0x10,0x10,0x10,0x00},  // P
    {0x0E,0x11,0x11,0x11,0x15,0x12,0x0D,0x00},  // Q
    {0x1E,0x11,0x11,0x1E,0x14,0x12,0x11,0x00},  // R
    {0x0F,0x10,0x10,0x0E,0x01,0x01,0x1E,0x00},  // S
    {0x1F,0x04,0x04,0x04,0x04,0x04,0x04,0x00},  // T
    {0x11,0x11,0x11,0x11,0x11,0x11,0x0E,0x00},  // U
    {0x11,0x11,0x11,0x11,0x11,0x0A,0x04,0x00},  // V
    {0x11,0x11,0x11,0x15,0x15,0x15,0x0A,0x00},  // W
    {0x11,0x11,0x0A,0x04,0x0A,0x11,0x11,0x00},  // X
    {0x11,0x11,0x11,0x0A,0x04,0x04,0x04,0x00},  // Y
    {0x1F,0x01,0x02,0x04,0x08,0x10,0x1F,0x00},  // Z
    {0x0E,0x08,0x08,0x08,0x08,0x08,0x0E,0x00},  // [
    {0x00,0x10,0x08,0x04,0x02,0x01,0x00,0x00},  // backslash
    {0x0E,0x02,0x02,0x02,0x02,0x02,0x0E,0x00},  // ]
    {0x04,0x0A,0x11,0x00,0x00,0x00,0x00,0x00},  // ^
    {0x00,0x00,0x00,0x00,0x00,0x00,0x1F,0x00},  // _
    {0x08,0x04,0x02,0x00,0x00,0x00,0x00,0x00},  // `
    {0x00,0x00,0x0E,0x01,0x0F,0x11,0x0F,0x00},  // a
    {0x10,0x10,0x16,0x19,0x11,0x11,0x1E,0x00},  // b
    {0x00,0x00,0x0E,0x10,0x10,0x11,0x0E,0x00},  // c
    {0x01,0x01,0x0D,0x13,0x11,0x11,0x0F,0x00},  // d
    {0x00,0x00,0x0E,0x11,0x1F,0x10,0x0E,0x00},  // e
    {0x06,0x09,0x08,0x1C,0x08,0x08,0x08,0x00},  // f
    {0x00,0x00,0x0F,0x11,0x11,0x0F,0x01,0x0E},  // g
    {0x10,0x10,0x16,0x19,0x11,0x11,0x11,0x00},  // h
    {0x04,0x00,0x0C,0x04,0x04,0x04,0x0E,0x00},  // i
    {0x02,0x00,0x06,0x02,0x02,0x02,0x12,0x0C},  // j
    {0x10,0x10,0x12,0x14,0x18,0x14,0x12,0x00},  // k
    {0x0C,0x04,0x04,0x04,0x04,0x04,0x0E,0x00},  // l
    {0x00,0x00,0x1A,0x15,0x15,0x11,0x11,0x00},  // m
    {0x00,0x00,0x16,0x19,0x11,0x11,0x11,0x00},  // n
    {0x00,0x00,0x0E,0x11,0x11,0x11,0x0E,0x00},  // o
    {0x00,0x00,0x1E,0x11,0x11,0x1E,0x10,0x10},  // p
    {0x00,0x00,0x0F,0x11,0x11,0x0F,0x01,0x01},  // q
    {0x00,0x00,0x16,0x19,0x10,0x10,0x10,0x00},  // r
    {0x00,0x00,0x0F,0x10,0x0E,0x01,0x1E,0x00},  // s
    {0x08,0x08,0x1C,0x08,0x08,0x09,0x06,0x00},  // t
    {0x00,0x00,0x11,0x11,0x11,0x13,0x0D,0x00},  // u
    {0x00,0x00,0x11,0x11,0x11,0x0A,0x04,0x00},  // v
    {0x00,0x00,0x11,0x11,0x15,0x15,0x0A,0x00},  // w
    {0x00,0x00,0x11,0x0A,0x04,0x0A,0x11,0x00},  // x
    {0x00,0x00,0x11,0x11,0x11,0x0F,0x01,0x0E},  // y
    {0x00,0x00,0x1F,0x02,0x04,0x08,0x1F,0x00},  // z
    {0x02,0x04,0x04,0x08,0x04,0x04,0x02,0x00},  // {
    {0x04,0x04,0x04,0x04,0x04,0x04,0x04,0x00},  // |
    {0x08,0x04,0x04,0x02,0x04,0x04,0x08,0x00},  // }
    {0x00,0x00,0x08,0x15,0x02,0x00,0x00,0x00},  // ~
    {0x00,0x00,0x00,0x00,0x00,0x00,0x15,0x00},  // …
    {0x00,0x00,0x00,0x00,0x00,0x11,0x1F,0x00},  // ␣
    {0x1F,0x11,0x11,0x11,0x11,0x11,0x1F,0x00},  // □
    {0x00,0x00,0x00,0x04,0x00,0x00,0x00,0x00},  // ·
};
constexpr size_t kEllipsis = 95, kOpenBox = 96, kHollowBox = 97, kMiddleDot = 98;
constexpr int kGlyphW = 5, kGlyphH = 8, kAdvance = 6;

const uint8_t* glyph(char32_t cp) {
  if (cp >= 0x20 && cp < 0x7F) return kGlyphs[cp - 0x20];
  if (cp == U'…') return kGlyphs[kEllipsis];
  if (cp == U'␣') return kGlyphs[kOpenBox];
  if (cp == U'·') return kGlyphs[kMiddleDot];
  if (cp == U'−') return kGlyphs['-' - 0x20];
  return kGlyphs[kHollowBox];
}

class Canvas {
 public:
  Canvas(int w, int h) : w_(w), h_(h), px_(size_t(w) * size_t(h) * 3, 255) {}
  int width() const { return w_; }
  int height() const { return h_; }
  void put(int x, int y, Rgb c) {
    if (x < 0 || y < 0 || x >= w_ || y >= h_) return;
    uint8_t* p = &px_[(size_t(y) * size_t(w_) + size_t(x)) * 3];
    p[0] = c.r, p[1] = c.g, p[2] = c.b;
  }
  void fill(double x0, double y0, double x1, double y1, Rgb c) {
    for (int y = int(std::lround(y0)); y < int(std::lround(y1)); ++y)
      for (int x = int(std::lround(x0)); x < int(std::lround(x1)); ++x) put(x, y, c);
  }
  void frame(double x0, double y0, double x1, double y1, int thickness, Rgb c) {
    fill(x0, y0, x1, y0 + thickness, c);
    fill(x0, y1 - thickness, x1, y1, c);
    fill(x0, y0, x0 + thickness, y1, c);
    fill(x1 - thickness, y0, x1, y1, c);
  }
  // Text whose glyph boxes start at (x, top); vertical text reads bottom to
  // top from (x = left edge, top = bottom end).
  void text(double x, double top, std::u32string_view s, int scale, Rgb c, bool vertical = false) {
    const int x0 = int(std::lround(x)), y0 = int(std::lround(top));
    for (size_t k = 0; k < s.size(); ++k) {
      const uint8_t* g = glyph(s[k]);
      for (int gy = 0; gy < kGlyphH; ++gy)
        for (int gx = 0; gx < kGlyphW; ++gx) {
          if (!(g[gy] >> (kGlyphW - 1 - gx) & 1)) continue;
          const int along = int(k) * kAdvance + gx;
          for (int sy = 0; sy < scale; ++sy)
            for (int sx = 0; sx < scale; ++sx) {
              if (vertical) put(x0 + gy * scale + sy, y0 - along * scale - sx, c);
              else put(x0 + along * scale + sx, y0 + gy * scale + sy, c);
            }
        }
    }
  }
  const std::vector<uint8_t>& pixels() const { return px_; }

 private:
  int w_, h_;
  std::vector<uint8_t> px_;
};

void append_be32(std::string& out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(char((v >> s) & 0xFF));
}

void append_chunk(std::string& out, const char type[4], std::string_view data) {
  append_be32(out, uint32_t(data.size()));
  const size_t start = out.size();
  out.append(type, 4);
  out.append(data);
  const auto* p = reinterpret_cast<const Bytef*>(out.data() + start);
  append_be32(out, uint32_t(crc32(0L, p, uInt(out.size() - start))));
}

std::string encode_png(const Canvas& canvas) {
  const size_t stride = size_t(canvas.width()) * 3;
  std::string raw;  // each scanline: filter type 0 (none), then RGB
  raw.reserve((stride + 1) * size_t(canvas.height()));
  for (int y = 0; y < canvas.height(); ++y) {
    raw.push_back('\0');
    raw.append(reinterpret_cast<const char*>(canvas.pixels().data()) + size_t(y) * stride, stride);
  }
  uLongf packed_size = compressBound(uLong(raw.size()));
  std::string packed(packed_size, '\0');
  const int rc = compress2(reinterpret_cast<Bytef*>(packed.data()), &packed_size,
                           reinterpret_cast<const Bytef*>(raw.data()), uLong(raw.size()), 6);
  VERITY_CHECK(rc == Z_OK, Error, "heatmap PNG: zlib compress2 failed with code ", rc);
  packed.resize(packed_size);

  std::string png("\x89PNG\r\n\x1a\n", 8);
  std::string ihdr;
  append_be32(ihdr, uint32_t(canvas.width()));
  append_be32(ihdr, uint32_t(canvas.height()));
  ihdr += std::string("\x08\x02\x00\x00\x00", 5);  // 8-bit RGB, deflate, no filter set, no interlace
  append_chunk(png, "IHDR", ihdr);
  append_chunk(png, "IDAT", packed);
  append_chunk(png, "IEND", "");
  return png;
}

}  // namespace

std::string render_heatmap_png(const HeatmapPlot& plot) {
  const Layout L = make_layout(plot);
  const size_t rows = L.shown.rows(), cols = L.shown.cols();
  Canvas c(int(L.width), int(L.height));
  auto glyph_h = [](int scale) { return double(kGlyphH * scale); };
  auto centered_top = [&](double center_y, int scale) { return center_y - glyph_h(scale) / 2 + scale; };

  for (size_t k = 0; k < L.header.size(); ++k) {
    const int s = png_text_scale(L.header[k].font);
    const Rgb ink = L.header[k].kind == TextLine::kTitle   ? kInk
                    : L.header[k].kind == TextLine::kWarning ? kWarning
                                                             : kMuted;
    c.text(kMargin, L.header_y0 + double(k) * kLineGap - 7.0 * s, L.header[k].text, s, ink);
  }
  const int label_scale = png_text_scale(L.label_font);
  for (size_t i = 0; i < rows; ++i) {
    const double w = double(L.row_labels[i].size()) * kAdvance * label_scale;
    c.text(L.grid_x - 6 - w, centered_top(L.grid_y + (double(i) + 0.5) * L.cell, label_scale),
           L.row_labels[i], label_scale, kInk);
  }
  for (size_t j = 0; j < cols; ++j)
    c.text(L.grid_x + (double(j) + 0.5) * L.cell - glyph_h(label_scale) / 2 + label_scale, L.grid_y - 6,
           L.col_labels[j], label_scale, kInk, /*vertical=*/true);

  const double gap = L.cell >= 16 ? 1 : 0;
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) {
      const double x = L.grid_x + double(j) * L.cell, y = L.grid_y + double(i) * L.cell;
      const Rgb fill = heatmap_color(L.shown.at(i, j));
      c.fill(x, y, x + L.cell - gap, y + L.cell - gap, fill);
      if (L.annotate) {
        const auto v = decode_utf8(format_value(L.shown.at(i, j)));
        c.text(x + (L.cell - double(v.size() * kAdvance)) / 2, centered_top(y + L.cell / 2, 1), v, 1,
               value_ink(fill));
      }
    }
  if (L.annotate) {
    c.text(L.rowmax_x + 8, L.grid_y - 6 - 8, U"max", 1, kMuted);
    for (size_t i = 0; i < rows; ++i)
      c.text(L.rowmax_x + 8, centered_top(L.grid_y + (double(i) + 0.5) * L.cell, 1),
             decode_utf8(format_value(L.row_max[i])), 1, kInk);
  }
  const int stroke = std::max(2, int(L.cell / 12));
  for (size_t i = 0; i < rows; ++i) {
    const double y = L.grid_y + double(i) * L.cell;
    if (L.row_argmax[i] < cols) {
      const double x = L.grid_x + double(L.row_argmax[i]) * L.cell;
      c.frame(x, y, x + L.cell - gap, y + L.cell - gap, stroke, kInk);
    } else {
      for (int d = 0; d < int(L.cell / 2); ++d)
        c.fill(L.rowmax_x + 2, y + L.cell / 2 - d / 2.0, L.rowmax_x + 2 + (L.cell / 2 - d), y + L.cell / 2 - d / 2.0 + 1, kInk);
    }
  }

  for (int y = 0; y < int(L.bar_h); ++y)
    c.fill(L.bar_x, L.bar_y + y, L.bar_x + L.bar_w, L.bar_y + y + 1,
           heatmap_color(float(1.0 - 2.0 * (y + 0.5) / L.bar_h)));
  c.frame(L.bar_x - 1, L.bar_y - 1, L.bar_x + L.bar_w + 1, L.bar_y + L.bar_h + 1, 1, kMuted);
  for (float t : kTicks) {
    const double y = L.bar_y + (1.0 - t) / 2.0 * L.bar_h;
    c.fill(L.bar_x + L.bar_w, y, L.bar_x + L.bar_w + 4, y + 1, kMuted);
    c.text(L.bar_x + L.bar_w + 7, centered_top(y, 1), decode_utf8(tick_label(t)), 1, kInk);
  }
  c.text(L.scores_x, L.scores_y + kScoreFont - 7, U"verifier scores", 1, kInk);
  for (size_t k = 0; k < L.scores.size(); ++k) {
    const double top = L.scores_y + kScoreFont + kLineGap * double(k + 1) - 7;
    c.text(L.scores_x, top, L.scores[k].first, 1, kInk);
    const double w = double(L.scores[k].second.size() * kAdvance);
    c.text(L.scores_right - w, top, L.scores[k].second, 1, kInk);
  }
  return encode_png(c);
}

}  // namespace verity::verify
