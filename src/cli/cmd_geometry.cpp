// verity geometry: pooled-space geometry probes on near-miss triples
// (docs/DIAGNOSTICS.md, "Geometry probes").
#include <cstdio>

#include "cli/command.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "data/triples.hpp"
#include "diagnose/detail/geometry_json.hpp"
#include "diagnose/geometry.hpp"
#include "encode/registry.hpp"

namespace verity::cli {
namespace {

struct GeometryArgs {
  CommonFlags common;
  std::vector<std::string> data;
  std::string encoder = "use-lite";
  size_t max_triples = 0;
  size_t batch_size = 32;
  diagnose::GeometryOptions options;
};

void run_geometry(GeometryArgs &a) {
  apply_common_flags(a.common);
  install_interrupt_handler();
  std::vector<data::Triple> triples;
  nlohmann::json files = nlohmann::json::array();
  for (const auto &path : a.data) {
    auto file = data::read_triples(path);  // strict: a bad line names path:line
    files.push_back(
        {{"path", path}, {"fnv1a64", cat(std::hex, file.content_hash)}, {"triples", file.triples.size()}});
    for (auto &t : file.triples) triples.push_back(std::move(t));
  }
  VERITY_CHECK(!triples.empty(), ConfigError, "geometry: no triples in --data");
  if (a.max_triples > 0 && triples.size() > a.max_triples) triples.resize(a.max_triples);  // file order
  auto encoder = encode::make_encoder(a.encoder);
  log("geometry: ", triples.size(), " triples, encoder ", encoder->spec());
  auto report = diagnose::probe_geometry(triples, *encoder, a.options, a.batch_size);
  if (!a.common.json) {
    std::printf("%-14s %6s %9s %9s %8s %8s\n", "type", "count", "cos(q,n)", "cos(q,p)", "probe", "silh.");
    auto row = [](const diagnose::TypeGeometry &g) {
      if (g.probed)
        std::printf("%-14s %6zu %9.4f %9.4f %8.4f %8.4f\n", g.type.c_str(), g.count, g.cos_edit.mean,
                    g.cos_paraphrase.mean, g.probe_accuracy, g.silhouette);
      else
        std::printf("%-14s %6zu %9.4f %9.4f %8s %8s\n", g.type.c_str(), g.count, g.cos_edit.mean,
                    g.cos_paraphrase.mean, "-", "-");
    };
    for (const auto &t : report.by_type) row(t);
    row(report.all);
    return;
  }
  auto out = diagnose::detail::geometry_json(report);
  out["encoder"] = spec_for_report(encoder->spec());
  out["data"] = files;
  out["options"] = {{"holdout", a.options.holdout},
                    {"seed", a.options.seed},
                    {"epochs", a.options.epochs},
                    {"learning_rate", a.options.learning_rate},
                    {"l2", a.options.l2},
                    {"silhouette_points", a.options.silhouette_points},
                    {"min_type_count", a.options.min_type_count},
                    {"max_triples", a.max_triples}};
  out["invocation"] = invocation();
  print_json(out);
}

void setup_geometry(CLI::App &app) {
  auto a = std::make_shared<GeometryArgs>();
  auto *cmd = app.add_subcommand("geometry",
                                 "Pooled-space geometry of near-miss edits: "
                                 "cosines, linear probe, silhouette");
  cmd->add_option("--data", a->data, "Near-miss triple JSONL (repeatable)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--encoder", a->encoder, "Encoder spec (use-lite | glove | DIR)")
      ->capture_default_str()
      ->envname("VERITY_ENCODER");
  cmd->add_option("--max-triples", a->max_triples, "Use the first N triples (0 = all)")
      ->capture_default_str();
  cmd->add_option("--holdout", a->options.holdout, "Share of queries held out for probe accuracy")
      ->capture_default_str();
  cmd->add_option("--seed", a->options.seed, "Split hash / silhouette subsample seed")->capture_default_str();
  cmd->add_option("--epochs", a->options.epochs, "Probe gradient steps")->capture_default_str();
  cmd->add_option("--l2", a->options.l2, "Probe ridge penalty")->capture_default_str();
  cmd->add_option("--silhouette-points", a->options.silhouette_points,
                  "Triples per cluster for the silhouette")
      ->capture_default_str();
  cmd->add_option("--batch-size", a->batch_size, "Encoder batch size")->capture_default_str();
  add_common_flags(cmd, a->common);
  cmd->callback([a] { run_geometry(*a); });
}

VERITY_REGISTER_COMMAND("geometry", setup_geometry);

}  // namespace
}  // namespace verity::cli
