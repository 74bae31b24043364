// The training-curve SVG of train-encoder (write_training_plot in
// encoder_training.hpp): train loss (left axis) and dev nDCG@10 (right axis)
// against the step, read back from the metrics JSONL.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/io.hpp"
#include "train/encoder_training.hpp"

namespace verity::train {
namespace {

using Series = std::vector<std::pair<double, double>>;  // (step, value)

std::string fmt(double v, const char* f = "%.4g") {
  char buf[32];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

void write_training_plot(const std::string& metrics_path, const std::string& svg_path) {
  Series loss, ndcg;
  for_each_line(metrics_path, [&](std::string_view line, size_t number) {
    if (line.empty()) return;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
      const auto type = j.at("type").get<std::string>();
      const auto step = j.at("step").get<double>();
      if (type == "train") loss.emplace_back(step, j.at("loss").get<double>());
      if (type == "eval") ndcg.emplace_back(step, j.at("ndcg@10").get<double>());
    } catch (const nlohmann::json::exception& e) {
      throw FormatError(cat(metrics_path, ":", number, ": ", e.what()));
    }
  });
  constexpr double W = 720, H = 400, L = 70, R = 70, T = 40, B = 50;
  const double pw = W - L - R, ph = H - T - B;
  double max_step = 1;
  for (const auto* s : {&loss, &ndcg})
    for (const auto& p : *s) max_step = std::max(max_step, p.first);
  double loss_max = 1e-9;
  for (const auto& p : loss) loss_max = std::max(loss_max, p.second);
  double nd_lo = 1, nd_hi = 0;
  for (const auto& p : ndcg) nd_lo = std::min(nd_lo, p.second), nd_hi = std::max(nd_hi, p.second);
  if (ndcg.empty() || nd_hi - nd_lo < 0.02) {  // keep a flat curve readable
    const double mid = ndcg.empty() ? 0.5 : (nd_lo + nd_hi) / 2;
    nd_lo = mid - 0.01, nd_hi = mid + 0.01;
  }
  auto x = [&](double step) { return L + pw * step / max_step; };
  auto y_loss = [&](double v) { return T + ph * (1 - v / loss_max); };
  auto y_nd = [&](double v) { return T + ph * (1 - (v - nd_lo) / (nd_hi - nd_lo)); };
  auto polyline = [&](const Series& s, auto y, const char* color) {
    std::string pts;
    for (const auto& p : s) pts += fmt(x(p.first), "%.1f") + "," + fmt(y(p.second), "%.1f") + " ";
    return cat("<polyline fill=\"none\" stroke=\"", color, "\" stroke-width=\"2\" points=\"", pts, "\"/>\n");
  };
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" << W << "\" height=\"" << H
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << W / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">"
    << "train-encoder: train loss (blue, left) and dev nDCG@10 (red, right)</text>\n"
    << "<rect x=\"" << L << "\" y=\"" << T << "\" width=\"" << pw << "\" height=\"" << ph
    << "\" fill=\"none\" stroke=\"#444\"/>\n";
  for (int i = 0; i <= 4; ++i) {
    const double f = i / 4.0, yy = T + ph * (1 - f);
    o << "<line x1=\"" << L << "\" x2=\"" << L + pw << "\" y1=\"" << yy << "\" y2=\"" << yy
      << "\" stroke=\"#ddd\"/>\n"
      << "<text x=\"" << L - 6 << "\" y=\"" << yy + 4 << "\" text-anchor=\"end\" fill=\"#1f77b4\">"
      << fmt(loss_max * f) << "</text>\n"
      << "<text x=\"" << L + pw + 6 << "\" y=\"" << yy + 4 << "\" fill=\"#d62728\">"
      << fmt(nd_lo + (nd_hi - nd_lo) * f) << "</text>\n"
      << "<text x=\"" << x(max_step * f) << "\" y=\"" << T + ph + 18 << "\" text-anchor=\"middle\">"
      << fmt(max_step * f, "%.0f") << "</text>\n";
  }
  o << "<text x=\"" << L + pw / 2 << "\" y=\"" << H - 10 << "\" text-anchor=\"middle\">step</text>\n";
  o << polyline(loss, y_loss, "#1f77b4") << polyline(ndcg, y_nd, "#d62728");
  for (const auto& p : ndcg)
    o << "<circle cx=\"" << fmt(x(p.first), "%.1f") << "\" cy=\"" << fmt(y_nd(p.second), "%.1f")
      << "\" r=\"3\" fill=\"#d62728\"/>\n";
  o << "</svg>\n";
  write_file_atomic(svg_path, o.str());
}

}  // namespace verity::train
