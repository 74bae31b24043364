// Heatmap pictures: colormap, token display, SVG structure, cropping and PNG encoding.
#include "verify/heatmap.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace verity::verify {
namespace {

HeatmapPlot make_plot(size_t rows, size_t cols) {
  std::vector<float> v(rows * cols);
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) v[i * cols + j] = std::sin(0.7f * float(i) + 0.3f * float(j));
  HeatmapPlot p;
  p.map = SimilarityMap(rows, cols, std::move(v));
  for (size_t i = 0; i < rows; ++i) p.row_labels.push_back("▁q" + std::to_string(i));
  for (size_t j = 0; j < cols; ++j) p.col_labels.push_back("▁d" + std::to_string(j));
  p.scores = {{"f0", 0.125f}, {"f1", 0.75f}};
  p.title = "test";
  return p;
}

size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

// Minimal XML check: tags balance, and text outside tags has no raw '<' and
// only known entities after '&'. Returns "" when well-formed, else the problem.
std::string xml_problem(const std::string& s) {
  std::vector<std::string> stack;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] == '&') {
      const auto semi = s.find(';', i);
      if (semi == std::string::npos) return "unterminated entity at " + std::to_string(i);
      const auto entity = s.substr(i, semi - i + 1);
      if (entity != "&amp;" && entity != "&lt;" && entity != "&gt;" && entity != "&quot;" &&
          entity != "&apos;")
        return "unknown entity " + entity;
      i = semi + 1;
      continue;
    }
    if (s[i] != '<') {
      if (s[i] == '>') return "raw '>' in text at " + std::to_string(i);
      ++i;
      continue;
    }
    const auto close = s.find('>', i);
    if (close == std::string::npos) return "unterminated tag at " + std::to_string(i);
    std::string tag = s.substr(i + 1, close - i - 1);
    if (tag.find('<') != std::string::npos) return "'<' inside a tag at " + std::to_string(i);
    i = close + 1;
    if (tag.starts_with("?")) continue;  // XML declaration
    if (tag.ends_with("/")) continue;    // self-closing
    if (tag.starts_with("/")) {
      const std::string name = tag.substr(1);
      if (stack.empty() || stack.back() != name) return "unbalanced </" + name + ">";
      stack.pop_back();
      continue;
    }
    stack.push_back(tag.substr(0, tag.find_first_of(" \t\n")));
  }
  return stack.empty() ? "" : "unclosed <" + stack.back() + ">";
}

TEST(Heatmap, ColormapEndpointsAndMidpoint) {
  EXPECT_EQ(heatmap_color(-1.0f), (Rgb{5, 48, 97}));
  EXPECT_EQ(heatmap_color(-0.5f), (Rgb{67, 147, 195}));
  EXPECT_EQ(heatmap_color(0.0f), (Rgb{247, 247, 247}));
  EXPECT_EQ(heatmap_color(0.5f), (Rgb{214, 96, 77}));
  EXPECT_EQ(heatmap_color(1.0f), (Rgb{103, 0, 31}));
  EXPECT_EQ(heatmap_color(3.0f), heatmap_color(1.0f)) << "clamped above";
  EXPECT_EQ(heatmap_color(-3.0f), heatmap_color(-1.0f)) << "clamped below";
  // Halfway between two stops is the rounded average of their colors.
  EXPECT_EQ(heatmap_color(0.25f), (Rgb{231, 172, 162}));
  // Negative cosines are blue, positive ones red.
  for (int k = 1; k <= 20; ++k) {
    const float v = float(k) / 20.0f;
    EXPECT_GT(heatmap_color(-v).b, heatmap_color(-v).r) << -v;
    EXPECT_GT(heatmap_color(v).r, heatmap_color(v).b) << v;
  }
}

TEST(Heatmap, DisplayTokenHandlesSentencePieceMarkersAndBadBytes) {
  EXPECT_EQ(display_token("▁dog"), "dog");
  EXPECT_EQ(display_token("ing"), "ing");
  EXPECT_EQ(display_token("##ing"), "##ing");
  EXPECT_EQ(display_token("▁"), "␣");
  EXPECT_EQ(display_token(""), "∅");
  EXPECT_EQ(display_token("▁café"), "café");
  EXPECT_EQ(display_token("a\xFF" "b"), "a\xEF\xBF\xBD" "b") << "invalid byte -> U+FFFD";
  EXPECT_EQ(display_token("a\x01"), "a\xEF\xBF\xBD") << "control character -> U+FFFD";
  EXPECT_EQ(display_token("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD") << "overlong encoding rejected";
  const std::string long_token = "▁" + std::string(30, 'x');
  EXPECT_EQ(display_token(long_token), std::string(kHeatmapMaxLabelChars - 1, 'x') + "…");
}

TEST(Heatmap, XmlEscape) {
  EXPECT_EQ(xml_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(xml_escape("plain ▁"), "plain ▁");
}

TEST(Heatmap, SvgIsWellFormedWithOneRectPerCell) {
  auto plot = make_plot(5, 7);
  plot.row_labels[1] = "<b>&\"x\"";
  plot.col_labels[2] = "▁caf\xC3\xA9'";
  const auto svg = render_heatmap_svg(plot);
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_TRUE(svg.starts_with("<?xml"));
  EXPECT_EQ(count(svg, "<rect class=\"cell\""), 5u * 7u);
  EXPECT_EQ(count(svg, "<rect class=\"argmax\""), 5u) << "one outline per row";
  EXPECT_NE(svg.find("&lt;b&gt;&amp;&quot;x&quot;"), std::string::npos) << "escaped row label";
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
  EXPECT_NE(svg.find(">café&apos;<"), std::string::npos) << "column label, ▁ stripped";
  EXPECT_NE(svg.find(">q0<"), std::string::npos);
  EXPECT_NE(svg.find(">d6<"), std::string::npos);
  EXPECT_NE(svg.find(">f1<"), std::string::npos);
  EXPECT_NE(svg.find(">0.7500<"), std::string::npos) << "score value";
  // Small grids print every value: M[2][3] = sin(1.4 + 0.9).
  char buf[16];
  std::snprintf(buf, sizeof buf, ">%.2f<", std::sin(2.3));
  EXPECT_NE(svg.find(buf), std::string::npos);
  EXPECT_EQ(svg.find("cropped"), std::string::npos);
  EXPECT_EQ(render_heatmap_svg(plot), svg) << "deterministic";
}

TEST(Heatmap, ArgmaxMarksTheRowMaximum) {
  HeatmapPlot p;
  p.map = SimilarityMap(2, 3, {0.1f, 0.9f, 0.2f, 0.8f, 0.3f, 0.7f});
  p.row_labels = {"a", "b"};
  p.col_labels = {"x", "y", "z"};
  const auto svg = render_heatmap_svg(p);
  // Row 0's maximum is column 1, row 1's column 0: outlines start in those cells.
  auto cell_x = [&](size_t j) {
    const auto at = svg.find("<rect class=\"cell\"", 0);
    const auto x0 = std::stod(svg.substr(svg.find("x=\"", at) + 3));
    const auto w = std::stod(svg.substr(svg.find("width=\"", at) + 7));
    return x0 + double(j) * w;
  };
  std::vector<double> outline_x;
  for (size_t at = svg.find("<rect class=\"argmax\""); at != std::string::npos;
       at = svg.find("<rect class=\"argmax\"", at + 1))
    outline_x.push_back(std::stod(svg.substr(svg.find("x=\"", at) + 3)));
  ASSERT_EQ(outline_x.size(), 2u);
  EXPECT_NEAR(outline_x[0], cell_x(1), 3.0);
  EXPECT_NEAR(outline_x[1], cell_x(0), 3.0);
  // Dark cells get white values, and no CSS rule overrides that attribute.
  EXPECT_NE(svg.find("fill=\"#ffffff\" font-weight=\"bold\">0.90<"), std::string::npos);
  const auto rule = svg.find("text{");
  ASSERT_NE(rule, std::string::npos);
  EXPECT_EQ(svg.substr(rule, svg.find('}', rule) - rule).find("fill"), std::string::npos);
}

TEST(Heatmap, LargeMapsAreCroppedAndSaySo) {
  auto plot = make_plot(kHeatmapMaxTokens + 2, 45);
  EXPECT_TRUE(heatmap_cropped(plot));
  const auto shown = heatmap_shown_map(plot);
  ASSERT_EQ(shown.rows(), kHeatmapMaxTokens);
  ASSERT_EQ(shown.cols(), 45u);
  EXPECT_EQ(shown.at(100, 44), plot.map.at(100, 44));
  const auto svg = render_heatmap_svg(plot);
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_EQ(count(svg, "<rect class=\"cell\""), kHeatmapMaxTokens * 45);
  EXPECT_NE(svg.find("cropped: showing the first 128 of 130 query tokens"), std::string::npos);
  EXPECT_EQ(count(svg, "<g class=\"values\""), 0u) << "no values printed above 40×40";
  EXPECT_FALSE(heatmap_cropped(make_plot(kHeatmapMaxTokens, kHeatmapMaxTokens)));
}

TEST(Heatmap, ArgmaxBeyondTheCropIsPointedAt) {
  HeatmapPlot p;
  p.max_tokens = 2;
  p.map = SimilarityMap(1, 3, {0.1f, 0.2f, 0.9f});
  p.row_labels = {"a"};
  p.col_labels = {"x", "y", "z"};
  const auto svg = render_heatmap_svg(p);
  EXPECT_EQ(count(svg, "<rect class=\"cell\""), 2u);
  EXPECT_EQ(count(svg, "class=\"argmax\""), 0u);
  EXPECT_EQ(count(svg, "class=\"argmax-beyond\""), 1u);
}

TEST(Heatmap, EmptyMapAndBadLabels) {
  HeatmapPlot p;
  p.map = SimilarityMap(0, 3, {});
  p.col_labels = {"x", "y", "z"};
  const auto svg = render_heatmap_svg(p);
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_EQ(count(svg, "<rect class=\"cell\""), 0u);
  EXPECT_NE(svg.find("empty map"), std::string::npos);
  p.col_labels.pop_back();
  EXPECT_THROW(render_heatmap_svg(p), ConfigError);
  EXPECT_THROW(render_heatmap_png(p), ConfigError);
}

uint32_t be32(const std::string& s, size_t at) {
  return uint32_t(uint8_t(s[at])) << 24 | uint32_t(uint8_t(s[at + 1])) << 16 |
         uint32_t(uint8_t(s[at + 2])) << 8 | uint32_t(uint8_t(s[at + 3]));
}

TEST(Heatmap, PngHasValidChunksAndTheCellColors) {
  HeatmapPlot p;
  p.map = SimilarityMap(1, 2, {-1.0f, 0.5f});
  p.row_labels = {"q"};
  p.col_labels = {"a", "b"};
  p.scores = {{"f1", 0.5f}};
  const auto png = render_heatmap_png(p);
  ASSERT_GT(png.size(), 8u + 25u + 12u + 12u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  // Walk the chunks: each CRC covers type + data.
  std::vector<std::string> types;
  std::string idat;
  uint32_t width = 0, height = 0;
  for (size_t at = 8; at < png.size();) {
    ASSERT_LE(at + 12, png.size());
    const uint32_t len = be32(png, at);
    ASSERT_LE(at + 12 + len, png.size());
    const std::string type = png.substr(at + 4, 4);
    const auto* bytes = reinterpret_cast<const Bytef*>(png.data() + at + 4);
    EXPECT_EQ(be32(png, at + 8 + len), uint32_t(crc32(0L, bytes, uInt(4 + len)))) << type;
    if (type == "IHDR") {
      ASSERT_EQ(len, 13u);
      width = be32(png, at + 8);
      height = be32(png, at + 12);
      EXPECT_EQ(png[at + 16], 8) << "bit depth";
      EXPECT_EQ(png[at + 17], 2) << "RGB";
    }
    if (type == "IDAT") idat += png.substr(at + 8, len);
    types.push_back(type);
    at += 12 + len;
  }
  ASSERT_EQ(types, (std::vector<std::string>{"IHDR", "IDAT", "IEND"}));
  ASSERT_GT(width, 100u);
  ASSERT_GT(height, 100u);
  std::string raw(size_t(height) * (1 + 3 * size_t(width)), '\0');
  uLongf raw_size = raw.size();
  ASSERT_EQ(uncompress(reinterpret_cast<Bytef*>(raw.data()), &raw_size,
                       reinterpret_cast<const Bytef*>(idat.data()), uLong(idat.size())),
            Z_OK);
  ASSERT_EQ(raw_size, raw.size());
  // Each cell's color fills most of its 35×35 px square, less the printed
  // value and, for the row's argmax (0.5), the 3 px outline.
  for (float v : {-1.0f, 0.5f}) {
    const Rgb want = heatmap_color(v);
    size_t hits = 0;
    for (size_t y = 0; y < height; ++y) {
      const size_t row = y * (1 + 3 * size_t(width));
      ASSERT_EQ(raw[row], 0) << "filter type none";
      for (size_t x = 0; x < width; ++x) {
        const auto* px = reinterpret_cast<const uint8_t*>(raw.data() + row + 1 + 3 * x);
        hits += px[0] == want.r && px[1] == want.g && px[2] == want.b;
      }
    }
    EXPECT_GT(hits, 600u) << v;
  }
}

}  // namespace
}  // namespace verity::verify
