#pragma once
// Pictures of a similarity map for `verity explain` (docs/EXPLAIN.md): a cell
// grid colored by cos, query tokens as row labels, candidate tokens as column
// labels, each row's argmax (the cell MaxSim picks) outlined, a color bar and
// the verifier scores beside the map. Output: SVG text or PNG bytes. No torch.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "verify/similarity_map.hpp"

namespace verity::verify {

// At most this many query rows and candidate columns are drawn: the leading
// tokens, as in pad_or_crop. The picture says when tokens were dropped.
inline constexpr size_t kHeatmapMaxTokens = 128;
// Cell values are printed when the drawn grid is at most this many rows and columns.
inline constexpr size_t kHeatmapMaxAnnotated = 40;
// Labels longer than this many code points are cut and end in "…".
inline constexpr size_t kHeatmapMaxLabelChars = 24;

struct NamedScore {
  std::string name;  // e.g. the verifier spec as given ("f1")
  float score = 0;
};

struct HeatmapPlot {
  SimilarityMap map;                    // rows = query tokens, columns = candidate tokens
  std::vector<std::string> row_labels;  // raw tokens, one per map row
  std::vector<std::string> col_labels;  // raw tokens, one per map column
  std::vector<NamedScore> scores;       // listed beside the map, in this order
  std::string title;                    // first line of the picture (may be empty)
  size_t max_tokens = kHeatmapMaxTokens;
};

// Throws ConfigError when the label counts do not match the map or max_tokens is 0.
void check_plot(const HeatmapPlot& plot);
// Whether rows or columns beyond plot.max_tokens are left out of the picture.
bool heatmap_cropped(const HeatmapPlot& plot);
// The drawn part: the first min(rows, max_tokens) × min(cols, max_tokens) cells.
SimilarityMap heatmap_shown_map(const HeatmapPlot& plot);

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb&) const = default;
};
// Diverging colormap over cos ∈ [-1, 1] (ColorBrewer RdBu, reversed): -1 dark
// blue #053061, 0 near-white #f7f7f7, +1 dark red #67001f, piecewise linear
// through #4393c3 at -0.5 and #d6604d at +0.5. Values outside are clamped.
Rgb heatmap_color(float cos);

// A token as drawn: invalid UTF-8 and control characters become U+FFFD, the
// SentencePiece word marker "▁" (U+2581) becomes a space and surrounding
// spaces are stripped, a token with nothing left shows as "␣", an empty one as
// "∅", and more than kHeatmapMaxLabelChars code points are cut with "…".
std::string display_token(std::string_view token);
// Escapes &, <, >, " and ' for XML text and attribute values.
std::string xml_escape(std::string_view text);

// A standalone SVG 1.1 document (UTF-8). Cells are <rect class="cell">, one
// per drawn cell; argmax outlines are <rect class="argmax">.
std::string render_heatmap_svg(const HeatmapPlot& plot);
// An 8-bit RGB PNG of the same layout. Labels are drawn with a built-in
// ASCII bitmap font; other characters show as a hollow box.
std::string render_heatmap_png(const HeatmapPlot& plot);

}  // namespace verity::verify
