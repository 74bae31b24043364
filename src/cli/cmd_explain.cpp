// verity explain: draws one query-document similarity map as a heatmap (SVG or
// PNG) with the verifier scores beside it. Picture and JSON: docs/EXPLAIN.md.
#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "cli/command.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "encode/registry.hpp"
#include "search/pipeline.hpp"
#include "text/utf8.hpp"
#include "verify/alignment_verifier.hpp"
#include "verify/heatmap.hpp"
#include "verify/pair_scoring.hpp"
#include "verify/verifier.hpp"

namespace verity::cli {
namespace {

struct ExplainArgs {
  CommonFlags common;
  std::string query, doc, out, encoder = "use-lite";
  std::string verifiers = "f0,f1,f2";
  std::optional<double> reject_below;
};

// Splits "f1,f2:lambda=0,tau=0.05" into {"f1", "f2:lambda=0,tau=0.05"}: a
// piece with '=' before any ':' continues the previous spec's key=value list.
std::vector<std::string> split_verifier_list(const std::string& list) {
  std::vector<std::string> specs;
  size_t start = 0;
  while (start <= list.size()) {
    const auto comma = std::min(list.find(',', start), list.size());
    const std::string piece = list.substr(start, comma - start);
    const auto eq = piece.find('='), colon = piece.find(':');
    if (!specs.empty() && eq != std::string::npos && (colon == std::string::npos || eq < colon))
      specs.back() += "," + piece;
    else
      specs.push_back(piece);
    start = comma + 1;
  }
  return specs;
}

enum class ImageFormat { kSvg, kPng };

ImageFormat format_of(const std::string& path) {
  const auto dot = path.find_last_of('.');
  const auto slash = path.find_last_of('/');
  std::string ext = dot == std::string::npos || (slash != std::string::npos && dot < slash)
                        ? ""
                        : path.substr(dot + 1);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ext == "svg") return ImageFormat::kSvg;
  if (ext == "png") return ImageFormat::kPng;
  throw ConfigError(cat("--out ", path, ": unknown picture format '", ext,
                        "' (the extension must be .svg or .png)"));
}

struct TokenVectors {
  std::vector<std::string> tokens;
  std::vector<float> vectors;  // [tokens × dim]
};

// The real (masked-in) positions of text b, in order.
TokenVectors real_tokens(const encode::Encoded& enc, size_t b, const char* which) {
  TokenVectors out;
  out.tokens = enc.token_strings.at(b);
  out.vectors = enc.token_block(b);
  VERITY_CHECK(out.vectors.size() == out.tokens.size() * enc.dim, Error, "explain: the encoder gave ",
               out.tokens.size(), " token strings but ", out.vectors.size() / std::max<size_t>(enc.dim, 1),
               " token vectors for the ", which);
  return out;
}

void run_explain(ExplainArgs& a) {
  apply_common_flags(a.common);
  const ImageFormat format = format_of(a.out);
  // Whitespace or punctuation alone has nothing to match: the same rule as the server's.
  VERITY_CHECK(text::holds_content(a.query), ConfigError, "--query is empty (no letter, number or symbol)");
  VERITY_CHECK(text::holds_content(a.doc), ConfigError, "--doc is empty (no letter, number or symbol)");
  const auto specs = split_verifier_list(a.verifiers);
  std::set<std::string> seen;
  std::vector<std::unique_ptr<verify::Verifier>> verifiers;
  for (const auto& spec : specs) {
    VERITY_CHECK(!spec.empty(), ConfigError, "--verifier '", a.verifiers, "': empty entry");
    VERITY_CHECK(seen.insert(spec).second, ConfigError, "--verifier: '", spec, "' given twice");
    verifiers.push_back(verify::make_verifier(spec));
  }

  auto encoder = encode::make_encoder(a.encoder);
  log("explain: encoding query and document with ", encoder->spec());
  const std::vector<std::string> texts{a.query, a.doc};
  encode::EncodeOptions options;
  options.with_tokens = true;
  const auto enc = encoder->encode(texts, options);
  const auto query = real_tokens(enc, 0, "query");
  const auto doc = real_tokens(enc, 1, "document");

  // Scored as search and /verify score: with token identities and the pooled cosine.
  const auto query_ids = verify::token_identities(query.tokens), doc_ids = verify::token_identities(doc.tokens);
  const verify::TextTokens q{query.vectors, query_ids, enc.pooled_row(0)};
  const verify::TextTokens d{doc.vectors, doc_ids, enc.pooled_row(1)};
  verify::HeatmapPlot plot;
  plot.map = verify::stage2_map(q, d, enc.dim);  // the map the scores below read
  plot.row_labels = query.tokens;
  plot.col_labels = doc.tokens;
  plot.title = cat("query: \"", a.query, "\" · document: \"", a.doc, "\" · ", a.encoder);
  nlohmann::json scores = nlohmann::json::object(), verdicts = nlohmann::json::object(),
                 traces = nlohmann::json::object();
  std::vector<std::string> trace_lines;
  const auto context = verify::pair_context(q, d);
  for (size_t k = 0; k < verifiers.size(); ++k) {
    search::check_verifier_encoder(*verifiers[k], *encoder);
    // F5 is scored through its trace (the same score), which also says which calibration rule moved it.
    const auto* f5 = plot.map.empty() ? nullptr : dynamic_cast<const verify::AlignmentVerifier*>(verifiers[k].get());
    std::optional<verify::ScoreTrace> trace;
    if (f5)
      trace = f5->trace_pairs(std::span<const verify::SimilarityMap>(&plot.map, 1),
                              std::span<const verify::PairContext>(&context, 1))[0];
    const float s = trace ? float(trace->probability)
                          : verify::score_texts(*verifiers[k], q, std::span<const verify::TextTokens>(&d, 1), enc.dim)[0];
    plot.scores.push_back({specs[k], s});
    scores[specs[k]] = s;
    std::optional<double> threshold = a.reject_below;
    if (!threshold && verifiers[k]->default_threshold()) threshold = *verifiers[k]->default_threshold();
    if (threshold) verdicts[specs[k]] = s >= *threshold ? "match" : "near-miss";
    if (trace) {
      const auto& t = *trace;
      nlohmann::json applied = nlohmann::json::array();
      if (t.capped) applied.push_back("flip_cap");
      if (t.floored) applied.push_back("surface_floor");
      if (t.name_capped) applied.push_back("name_cap");
      if (t.transposition_capped) applied.push_back("transposition_cap");
      if (t.number_capped) applied.push_back("number_cap");
      traces[specs[k]] = {{"logit", t.logit},
                          {"network_probability", t.network_probability},
                          {"pooled_cosine", context.pooled_cosine},
                          {"identity_signal", t.identity_signal},
                          {"minimal_flip", t.minimal_flip},
                          {"surface_match", t.surface_match},
                          {"name_swap", t.name_swap},
                          {"kind_swap", t.kind_swap},
                          {"transposition", t.transposition},
                          {"number_change", t.number_change},
                          {"applied", applied}};
      const char* rule = t.capped                 ? "capped as a minimal flip"
                         : t.name_capped && !t.name_swap ? "capped as a thing swapped for another of its kind"
                         : t.name_capped          ? "capped as a swapped name"
                         : t.transposition_capped ? "capped as a transposition"
                         : t.number_capped        ? "capped as a changed number"
                         : t.floored              ? "raised as the same text on the surface"
                                                  : nullptr;
      if (rule) trace_lines.push_back(cat(specs[k], ": the network alone ", t.network_probability, "; ", rule));
    }
  }

  write_file_atomic(a.out, format == ImageFormat::kSvg ? verify::render_heatmap_svg(plot)
                                                        : verify::render_heatmap_png(plot));
  const bool cropped = verify::heatmap_cropped(plot);
  log("explain: wrote ", a.out, " (", plot.map.rows(), "×", plot.map.cols(), " map",
      cropped ? cat(", drawn cropped to the first ", plot.max_tokens, " tokens") : std::string(), ")");

  if (a.common.json) {
    const auto shown = verify::heatmap_shown_map(plot);
    nlohmann::json rows = nlohmann::json::array();
    for (size_t i = 0; i < shown.rows(); ++i) {
      const auto r = shown.row(i);
      rows.push_back(std::vector<float>(r.begin(), r.end()));
    }
    print_json({{"query", a.query},
                {"doc", a.doc},
                {"encoder", spec_for_report(encoder->spec())},
                {"query_tokens", std::vector<std::string>(query.tokens.begin(),
                                                          query.tokens.begin() + shown.rows())},
                {"doc_tokens", std::vector<std::string>(doc.tokens.begin(), doc.tokens.begin() + shown.cols())},
                {"query_token_count", plot.map.rows()},
                {"doc_token_count", plot.map.cols()},
                {"map", std::move(rows)},
                {"scores", scores},
                {"verdicts", verdicts},
                {"calibration_trace", traces},
                {"out", a.out},
                {"format", format == ImageFormat::kSvg ? "svg" : "png"},
                {"cropped", cropped},
                {"max_tokens", plot.max_tokens}});
  } else {
    for (const auto& s : plot.scores)
      std::printf("%-12s %.4f%s\n", s.name.c_str(), double(s.score),
                  verdicts.contains(s.name) ? ("  " + verdicts[s.name].get<std::string>()).c_str() : "");
    for (const auto& line : trace_lines) std::printf("%s\n", line.c_str());
  }
}

void setup_explain(CLI::App& app) {
  auto args = std::make_shared<ExplainArgs>();
  auto* cmd = app.add_subcommand(
      "explain", "Draw a query-document similarity map as a heatmap with the verifier scores");
  cmd->add_option("--query", args->query, "Query text (rows of the map)")->required();
  cmd->add_option("--doc", args->doc, "Document text (columns of the map)")->required();
  cmd->add_option("--out", args->out, "Picture to write: FILE.svg or FILE.png (written atomically)")
      ->required();
  cmd->add_option("--encoder", args->encoder, "Token encoder: use-lite | glove | kind:DIR | DIR")
      ->capture_default_str();
  std::string kinds;
  for (const auto& k : verify::verifier_kinds()) kinds += (kinds.empty() ? "" : ", ") + k.name;
  cmd->add_option("--verifier", args->verifiers,
                  "Comma-separated verifiers to score with (" + kinds + "; f3/f4 need :PATH)")
      ->capture_default_str();
  cmd->add_option("--reject-below", args->reject_below,
                  "Verdict threshold (default: each calibrated verifier's own; others get no verdict)");
  add_common_flags(cmd, args->common);
  cmd->callback([args] { run_explain(*args); });
}

VERITY_REGISTER_COMMAND("explain", setup_explain);
}  // namespace
}  // namespace verity::cli
