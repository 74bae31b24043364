// The precision–hit-ratio SVG of cache-eval (write_cache_plot in cache_eval.hpp).
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "core/io.hpp"
#include "eval/cache_eval.hpp"

namespace verity::eval {
namespace {
constexpr double kPanelW = 420, kPanelH = 340, kLeft = 56, kTop = 40, kPlotW = 330, kPlotH = 240;
const char* const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"};

std::string fmt(double v, const char* f = "%.3g") {
  char buf[32];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}
}  // namespace

void write_cache_plot(const std::vector<FileReport>& files, const std::string& svg_path) {
  std::ostringstream svg;
  const double width = kPanelW * double(std::max<size_t>(files.size(), 1));
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << kPanelH
      << "\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  for (size_t f = 0; f < files.size(); ++f) {
    const auto& file = files[f];
    const double ox = kPanelW * double(f) + kLeft, oy = kTop;
    auto x = [&](double hit_ratio) { return ox + hit_ratio * kPlotW; };
    auto y = [&](double precision) { return oy + (1.0 - precision) * kPlotH; };
    std::string name = std::filesystem::path(file.path).parent_path().filename().string() + "/" + std::filesystem::path(file.path).filename().string();
    svg << "<text x=\"" << ox << "\" y=\"" << oy - 22 << "\" font-size=\"12\" font-weight=\"bold\">"
        << escape(name + " (" + file.protocol + ", " + std::to_string(file.pairs) + " pairs)") << "</text>\n";
    svg << "<rect x=\"" << ox << "\" y=\"" << oy << "\" width=\"" << kPlotW << "\" height=\"" << kPlotH
        << "\" fill=\"none\" stroke=\"#444\"/>\n";
    for (int i = 0; i <= 5; ++i) {
      double v = i / 5.0;
      svg << "<line x1=\"" << x(v) << "\" y1=\"" << oy << "\" x2=\"" << x(v) << "\" y2=\"" << oy + kPlotH
          << "\" stroke=\"#eee\"/>\n<line x1=\"" << ox << "\" y1=\"" << y(v) << "\" x2=\"" << ox + kPlotW << "\" y2=\""
          << y(v) << "\" stroke=\"#eee\"/>\n";
      svg << "<text x=\"" << x(v) << "\" y=\"" << oy + kPlotH + 14 << "\" text-anchor=\"middle\">" << fmt(v)
          << "</text>\n<text x=\"" << ox - 6 << "\" y=\"" << y(v) + 4 << "\" text-anchor=\"end\">" << fmt(v)
          << "</text>\n";
    }
    svg << "<line x1=\"" << ox << "\" y1=\"" << y(0.9) << "\" x2=\"" << ox + kPlotW << "\" y2=\"" << y(0.9)
        << "\" stroke=\"#999\" stroke-dasharray=\"4 3\"/>\n";
    svg << "<text x=\"" << ox + kPlotW / 2 << "\" y=\"" << oy + kPlotH + 30 << "\" text-anchor=\"middle\">hit ratio (hits / lookups)</text>\n";
    svg << "<text transform=\"translate(" << ox - 40 << "," << oy + kPlotH / 2
        << ") rotate(-90)\" text-anchor=\"middle\">precision (correct / hits)</text>\n";
    for (size_t s = 0; s < file.scorers.size(); ++s) {
      const auto& sc = file.scorers[s];
      const char* color = kColors[s % (sizeof kColors / sizeof *kColors)];
      svg << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"1.6\" points=\"";
      // Thin to about one point per pixel column.
      double last_x = -1;
      for (size_t i = 0; i < sc.curve.size(); ++i) {
        const auto& p = sc.curve[i];
        double px = x(p.hit_ratio);
        if (px - last_x < 0.5 && i + 1 < sc.curve.size()) continue;
        last_x = px;
        svg << fmt(px, "%.1f") << "," << fmt(y(p.precision), "%.1f") << " ";
      }
      svg << "\"/>\n";
      double ly = oy + 14 + 14 * double(s);
      std::string label = sc.name;
      if (!sc.at_precision.empty() && sc.at_precision[0].hit_ratio)
        label += " (" + fmt(*sc.at_precision[0].hit_ratio, "%.3f") + " at P" + fmt(sc.at_precision[0].target, "%.2f") + ")";
      svg << "<line x1=\"" << ox + kPlotW - 150 << "\" y1=\"" << ly << "\" x2=\"" << ox + kPlotW - 132 << "\" y2=\""
          << ly << "\" stroke=\"" << color << "\" stroke-width=\"2\"/>\n<text x=\"" << ox + kPlotW - 128 << "\" y=\""
          << ly + 4 << "\">" << escape(label) << "</text>\n";
    }
  }
  svg << "</svg>\n";
  write_file_atomic(svg_path, svg.str());
}

}  // namespace verity::eval
