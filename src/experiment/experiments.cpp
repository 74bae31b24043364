#include "experiment/experiments.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>

#include "core/crc32c.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "data/beir.hpp"
#include "diagnose/detail/geometry_json.hpp"
#include "diagnose/diagnose.hpp"
#include "diagnose/geometry.hpp"
#include "diagnose/statistics.hpp"
#include "encode/registry.hpp"
#include "eval/retrieval_eval.hpp"
#include "nearmiss/evaluate.hpp"
#include "train/encoder_training.hpp"

namespace verity::experiment {
using nlohmann::json;

std::vector<data::Triple> mix_triples(const std::vector<data::Triple> &standard,
                                      const std::vector<data::Triple> &structural, double ratio, size_t total,
                                      uint64_t seed) {
  VERITY_CHECK(ratio >= 0 && ratio <= 1, ConfigError, "mix ratio must be in [0, 1] (got ", ratio, ")");
  std::mt19937_64 rng(seed ^ 0x6d1c5eedull);
  auto draw = [&](const std::vector<data::Triple> &pool, size_t k, std::vector<data::Triple> &out) {
    std::vector<size_t> idx(pool.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::shuffle(idx.begin(), idx.end(), rng);
    for (size_t i = 0; i < k; ++i) out.push_back(pool[idx[i]]);
  };
  size_t n_struct = size_t(std::llround(ratio * double(total)));
  // Every arm gets exactly `total` triples: a pool too small is an error, not a smaller model.
  VERITY_CHECK(total - n_struct <= standard.size(), ConfigError, "mix: the budget needs ", total - n_struct,
               " standard triples, the standard file has ", standard.size());
  VERITY_CHECK(n_struct <= structural.size(), ConfigError, "mix: ratio ", ratio, " of ", total, " needs ",
               n_struct, " structural triples, the structural file has ", structural.size());
  std::vector<data::Triple> out;
  draw(standard, total - n_struct, out);
  draw(structural, n_struct, out);
  std::shuffle(out.begin(), out.end(), rng);
  return out;
}

MeanStd mean_std(const std::vector<double> &v) {
  auto s = diagnose::summarize(v);  // population std
  return {s.mean, s.std, v.size()};
}

MeanStd relative_change(const std::vector<double> &a, const std::vector<double> &b) {
  std::vector<double> rel;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    if (a[i] != 0) rel.push_back((b[i] - a[i]) / a[i]);
  return mean_std(rel);
}

namespace {

json mean_std_json(const MeanStd &m) { return {{"mean", m.mean}, {"std", m.std}, {"n", m.n}}; }

std::string key_part(const std::string &s) {
  std::string out;
  for (char c : std::filesystem::path(s).filename().string())
    out.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ? c : '_');
  return out.empty() ? "x" : out;
}

std::vector<data::Triple> read_all(const std::string &path) { return data::read_triples(path).triples; }

json train_json(const TrainSettings &t, const std::string &backbone) {
  return {{"max_steps", t.max_steps},
          {"batch_size", t.batch_size},
          {"learning_rate", t.learning_rate_for(backbone)},
          {"scale", t.scale},
          {"warmup_ratio", t.warmup_ratio},
          {"max_triples", t.max_triples}};
}

json eval_spec_json(const std::vector<EvalDataset> &eval) {
  json j = json::array();
  for (const auto &e : eval)
    j.push_back({{"name", e.name},
                 {"dir", e.dir},
                 {"split", e.split},
                 {"in_domain", e.in_domain},
                 {"max_queries", e.max_queries},
                 {"max_docs", e.max_docs}});
  return j;
}

// Keeps every judged document of the dataset's queries plus a seeded sample
// of the others, up to max_docs in all (corpus order kept).
void subsample_corpus(data::BeirDataset &ds, size_t max_docs) {
  std::vector<char> keep(ds.corpus.size(), 0);
  size_t kept = 0;
  for (const auto &[qid, docs] : ds.qrels)
    for (const auto &[doc, grade] : docs)
      if (auto i = ds.corpus.find(doc); i && !keep[*i]) keep[*i] = 1, ++kept;
  std::vector<size_t> others;
  for (size_t i = 0; i < keep.size(); ++i)
    if (!keep[i]) others.push_back(i);
  std::mt19937_64 rng(0x5ab5e7);
  std::shuffle(others.begin(), others.end(), rng);
  for (size_t i = 0; i < others.size() && kept < max_docs; ++i, ++kept) keep[others[i]] = 1;
  data::Corpus sub;
  sub.path = ds.corpus.path;
  sub.fields = ds.corpus.fields;
  sub.content_hash = ds.corpus.content_hash ^ (0x9e3779b97f4a7c15ull * (max_docs + 1));
  for (size_t i = 0; i < keep.size(); ++i)
    if (keep[i]) {
      sub.index_of[ds.corpus.docs[i].id] = sub.docs.size();
      sub.docs.push_back(std::move(ds.corpus.docs[i]));
    }
  log("  ", ds.name, ": corpus subsampled to ", sub.docs.size(), " of ", keep.size(), " documents");
  ds.corpus = std::move(sub);
}

// Loads each evaluation dataset once per process.
class Datasets {
 public:
  const data::BeirDataset &get(const EvalDataset &e) {
    auto it = loaded_.find(e.name);
    if (it != loaded_.end()) return *it->second;
    auto ds = std::make_unique<data::BeirDataset>(data::load_beir(e.dir, e.split));
    if (e.max_queries > 0) {  // the first max_queries judged queries, file order
      std::vector<data::Query> kept;
      data::Qrels qrels;
      for (const auto &q : ds->queries) {
        if (kept.size() >= e.max_queries) break;
        auto r = ds->qrels.find(q.id);
        if (r == ds->qrels.end()) continue;
        kept.push_back(q);
        qrels[q.id] = r->second;
      }
      ds->queries = std::move(kept);
      ds->qrels = std::move(qrels);
    }
    if (e.max_docs > 0 && ds->corpus.size() > e.max_docs) subsample_corpus(*ds, e.max_docs);
    return *loaded_.emplace(e.name, std::move(ds)).first->second;
  }

 private:
  std::map<std::string, std::unique_ptr<data::BeirDataset>> loaded_;
};

// Zero-shot retrieval (exact dense search with `encoder_spec`) on every
// dataset.
json evaluate_datasets(const std::string &encoder_spec, const std::vector<EvalDataset> &eval, Datasets &cache,
                       int threads) {
  json out = json::object();
  for (const auto &e : eval) {
    eval::RetrievalEvalOptions opt;
    opt.pipeline.stage1 = "dense";
    opt.pipeline.threads = threads;
    opt.encoder = encoder_spec;
    opt.use_cache = false;  // fine-tuned models are evaluated once
    opt.metrics = eval::EvalOptions{};
    auto r = eval::evaluate_retrieval(cache.get(e), opt);
    out[e.name] = {{"ndcg@10", r.evaluation.mean.at("ndcg@10")},
                   {"acc@1", r.evaluation.mean.at("acc@1")},
                   {"queries", r.evaluation.per_query.size()},
                   {"in_domain", e.in_domain}};
    log("  ", e.name, ": nDCG@10 ", r.evaluation.mean.at("ndcg@10"), ", Acc@1 ",
        r.evaluation.mean.at("acc@1"));
  }
  return out;
}

json nearmiss_json(const encode::Encoder &encoder, const std::vector<data::Triple> &test) {
  auto scores = nearmiss::score_triples(test, encoder, nullptr, 64);
  auto rep = nearmiss::summarize(test, scores);
  json by_type = json::object();
  for (const auto &[k, m] : rep.by_type) by_type[k] = {{"pairwise_acc", m.pairwise_acc}, {"count", m.count}};
  log("  near-miss pairwise accuracy (pooled cosine) ", rep.overall.pairwise_acc);
  return {{"pairwise_acc", rep.overall.pairwise_acc},
          {"auc", rep.overall.auc},
          {"count", rep.overall.count},
          {"by_type", by_type}};
}

// <out_dir>/models/<key>-<fnv1a64 of the spec, 8 hex digits>: a changed spec
// never reuses a model or checkpoint trained under another one.
std::string model_dir_for(const std::string& out_dir, const RunSpec& run) {
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08llx", (unsigned long long)(fnv1a64(run.spec.data(), run.spec.size()) >> 32));
  return out_dir + "/models/" + run.key + "-" + hex;
}

// Trains (unless the model directory is already complete) and returns the
// report as JSON.
json train_model(const std::string &backbone, const std::vector<data::Triple> &triples,
                 const TrainSettings &t, uint64_t seed, const std::string &model_dir) {
  if (file_exists(model_dir + "/verity.json")) {  // same spec (the name holds its hash): already trained
    log("  model ", model_dir, " exists; not retraining");
    return {{"reused_model", true}};
  }
  train::EncoderTrainOptions o;
  o.scale = t.scale;
  o.batch_size = t.batch_size;
  o.lr = t.learning_rate_for(backbone);
  o.warmup_ratio = t.warmup_ratio;
  o.max_steps = t.max_steps;
  o.epochs = std::max<size_t>(
      1, (t.max_steps * t.batch_size + triples.size() - 1) / std::max<size_t>(1, triples.size()));
  o.seed = seed;
  o.checkpoint_dir = model_dir + ".ckpt";
  o.resume = file_exists(o.checkpoint_dir + "/checkpoint.veck");
  o.metrics_path = model_dir + ".metrics.jsonl";
  o.out_dir = model_dir;
  o.threads = t.threads;
  auto r = train::train_encoder(backbone, triples, o);
  std::error_code ec;
  std::filesystem::remove_all(o.checkpoint_dir,
                              ec);  // the model is written; the checkpoint is not needed
  return {{"steps", r.steps},
          {"total_steps", r.total_steps},
          {"examples", r.examples},
          {"train_triples", r.train_triples},
          {"dropped_triples", r.dropped_triples},
          {"final_loss", r.final_loss},
          {"train_seconds", r.train_seconds},
          {"examples_per_second", r.examples_per_second},
          {"peak_rss_mb", r.peak_rss_mb},
          {"resumed_from_step", r.resumed_from_step}};
}

void write_summary(const std::string &out_dir, const json &summary) {
  write_file_atomic(out_dir + "/summary.json", summary.dump(2) + "\n");
}

std::vector<double> pick(const std::vector<json> &results, const std::vector<std::string> &path) {
  std::vector<double> out;
  for (const auto &r : results) {
    const json *j = &r;
    bool ok = true;
    for (const auto &k : path) {
      if (!j->is_object() || !j->contains(k)) {
        ok = false;
        break;
      }
      j = &(*j)[k];
    }
    if (ok && j->is_number()) out.push_back(j->get<double>());
  }
  return out;
}

}  // namespace

std::string run_tradeoff(const TradeoffConfig &c, PlanStats *stats) {
  make_directories(c.out_dir + "/models");
  RunStore store(c.out_dir);
  auto standard = read_all(c.standard_triples);
  auto structural = read_all(c.structural_triples);
  auto test = read_all(c.nearmiss_test);
  if (c.nearmiss_max_triples > 0 && test.size() > c.nearmiss_max_triples) test.resize(c.nearmiss_max_triples);
  const size_t total =
      c.train.max_triples > 0 ? std::min(c.train.max_triples, standard.size()) : standard.size();
  log("tradeoff: ", standard.size(), " standard, ", structural.size(), " structural triples; ", total,
      " per model; ", test.size(), " near-miss test triples");
  Datasets datasets;
  diagnose::GeometryOptions gopt;

  struct Planned {
    std::string backbone, arm;
    uint64_t seed = 0;
  };
  std::vector<RunSpec> runs;
  std::vector<Planned> plan;
  json common = {{"standard_triples", c.standard_triples},
                 {"structural_triples", c.structural_triples},
                 {"nearmiss_test", c.nearmiss_test},
                 {"nearmiss_max_triples", c.nearmiss_max_triples},
                 {"eval", eval_spec_json(c.eval)}};
  for (const auto &b : c.backbones) {
    json base = common;
    base["backbone"] = b;
    base["arm"] = "pretrained";
    runs.push_back({key_part(b) + "-pretrained", base.dump()});
    plan.push_back({b, "pretrained", 0});
    for (const std::string arm : {"A", "B"})
      for (uint64_t seed : c.seeds) {
        json s = common;
        s["backbone"] = b;
        s["arm"] = arm;
        s["seed"] = seed;
        s["structural_ratio"] = arm == "A" ? 0.0 : c.structural_ratio;
        s["triples"] = total;
        s["train"] = train_json(c.train, b);
        runs.push_back({cat(key_part(b), "-", arm, "-s", seed), s.dump()});
        plan.push_back({b, arm, seed});
      }
  }
  auto execute = [&](const RunSpec &run) {
    const auto &p = plan[size_t(&run - runs.data())];
    json result;
    std::string encoder_spec = p.backbone;
    if (p.arm != "pretrained") {
      auto data = mix_triples(standard, structural, p.arm == "A" ? 0.0 : c.structural_ratio, total, p.seed);
      std::string model_dir = model_dir_for(c.out_dir, run);
      result["train"] = train_model(p.backbone, data, c.train, p.seed, model_dir);
      encoder_spec = model_dir;
    }
    result["datasets"] = evaluate_datasets(encoder_spec, c.eval, datasets, c.train.threads);
    auto encoder = encode::make_encoder(encoder_spec);
    result["nearmiss"] = nearmiss_json(*encoder, test);
    result["geometry"] = diagnose::detail::geometry_json(diagnose::probe_geometry(test, *encoder, gopt));
    result["encoder"] = spec_for_report(encoder->spec());
    return result.dump();
  };
  auto texts = run_plan(store, runs, execute, stats);
  std::vector<json> results;
  for (const auto &t : texts) results.push_back(json::parse(t));

  // Summary: per backbone and arm, mean ± std over seeds; B vs A paired by
  // seed.
  json summary = {{"experiment", "tradeoff"},   {"config", c.path}, {"structural_ratio", c.structural_ratio},
                  {"triples_per_model", total}, {"seeds", c.seeds}, {"backbones", json::object()}};
  for (const auto &b : c.backbones) {
    std::map<std::string, std::vector<json>> by_arm;
    for (size_t i = 0; i < plan.size(); ++i)
      if (plan[i].backbone == b) by_arm[plan[i].arm].push_back(results[i]);
    std::vector<std::vector<std::string>> metrics;
    for (const auto &e : c.eval) {
      metrics.push_back({"datasets", e.name, "ndcg@10"});
      metrics.push_back({"datasets", e.name, "acc@1"});
    }
    metrics.push_back({"nearmiss", "pairwise_acc"});
    metrics.push_back({"geometry", "all", "cos_edit", "mean"});
    metrics.push_back({"geometry", "all", "probe_accuracy"});
    metrics.push_back({"geometry", "all", "silhouette"});
    json jb = json::object();
    for (const auto &m : metrics) {
      std::string name;
      for (size_t k = 1; k < m.size(); ++k) name += (k > 1 ? "." : "") + m[k];
      if (m[0] == "geometry") name = "geometry." + name;
      auto a = pick(by_arm["A"], m), bb = pick(by_arm["B"], m), pre = pick(by_arm["pretrained"], m);
      jb[name] = {{"pretrained", pre.empty() ? json(nullptr) : json(pre[0])},
                  {"A", mean_std_json(mean_std(a))},
                  {"B", mean_std_json(mean_std(bb))},
                  {"relative_change_B_vs_A", mean_std_json(relative_change(a, bb))}};
    }
    // Per edit type: cos(q, edited q) before (pretrained) and after (A, B).
    json types = json::object();
    if (!by_arm["pretrained"].empty())
      for (const auto &[type, g] : by_arm["pretrained"][0]["geometry"]["by_type"].items()) {
        std::vector<std::string> path = {"geometry", "by_type", type, "cos_edit", "mean"};
        types[type] = {{"pretrained", g["cos_edit"]["mean"]},
                       {"A", mean_std_json(mean_std(pick(by_arm["A"], path)))},
                       {"B", mean_std_json(mean_std(pick(by_arm["B"], path)))}};
      }
    jb["cos_edit_by_type"] = types;
    std::vector<double> eps = pick(by_arm["A"], {"train", "examples_per_second"}),
                        rss = pick(by_arm["A"], {"train", "peak_rss_mb"});
    for (double x : pick(by_arm["B"], {"train", "examples_per_second"})) eps.push_back(x);
    for (double x : pick(by_arm["B"], {"train", "peak_rss_mb"})) rss.push_back(x);
    jb["train_examples_per_second"] = mean_std_json(mean_std(eps));
    jb["train_peak_rss_mb"] = mean_std_json(mean_std(rss));
    summary["backbones"][b] = jb;
  }
  summary["runs"] = json::object();
  for (size_t i = 0; i < runs.size(); ++i) summary["runs"][runs[i].key] = results[i];
  write_summary(c.out_dir, summary);
  return summary.dump();
}

std::string run_transfer(const TransferConfig &c, PlanStats *stats) {
  make_directories(c.out_dir + "/models");
  RunStore store(c.out_dir);
  Datasets datasets;
  std::vector<std::vector<data::Triple>> triples;
  std::vector<size_t> totals;  // triples per model of each source
  for (const auto &s : c.sources) {
    triples.push_back(read_all(s.triples));
    const size_t n = triples.back().size();
    totals.push_back(c.train.max_triples > 0 ? std::min(c.train.max_triples, n) : n);
  }
  std::vector<RunSpec> runs;
  std::vector<std::pair<size_t, uint64_t>> plan;  // source index, seed
  for (size_t si = 0; si < c.sources.size(); ++si)
    for (uint64_t seed : c.seeds) {
      json s = {{"backbone", c.backbone},
                {"source", c.sources[si].name},
                {"triples_path", c.sources[si].triples},
                {"triples", totals[si]},
                {"seed", seed},
                {"train", train_json(c.train, c.backbone)},
                {"eval", eval_spec_json(c.eval)}};
      runs.push_back({cat(key_part(c.sources[si].name), "-s", seed), s.dump()});
      plan.push_back({si, seed});
    }
  auto execute = [&](const RunSpec &run) {
    auto [si, seed] = plan[size_t(&run - runs.data())];
    auto data = mix_triples(triples[si], {}, 0.0, totals[si], seed);
    std::string model_dir = model_dir_for(c.out_dir, run);
    json result;
    result["train"] = train_model(c.backbone, data, c.train, seed, model_dir);
    result["datasets"] = evaluate_datasets(model_dir, c.eval, datasets, c.train.threads);
    return result.dump();
  };
  auto texts = run_plan(store, runs, execute, stats);

  // Observed transfer per source: mean nDCG@10 over seeds on eval[0].
  const std::string target = c.eval[0].name;
  diagnose::TransferTable transfer;
  json observed = json::object();
  std::string csv = "source,metric\n";
  for (size_t si = 0; si < c.sources.size(); ++si) {
    std::vector<json> rs;
    for (size_t i = 0; i < plan.size(); ++i)
      if (plan[i].first == si) rs.push_back(json::parse(texts[i]));
    json per = json::object();
    for (const auto &e : c.eval) {
      per[e.name] = {{"ndcg@10", mean_std_json(mean_std(pick(rs, {"datasets", e.name, "ndcg@10"})))},
                     {"acc@1", mean_std_json(mean_std(pick(rs, {"datasets", e.name, "acc@1"})))}};
    }
    observed[c.sources[si].name] = per;
    double m = mean_std(pick(rs, {"datasets", target, "ndcg@10"})).mean;
    transfer.sources.push_back(c.sources[si].name);
    transfer.metric.push_back(m);
    csv += cat(c.sources[si].name, ",", m, "\n");
  }
  write_file_atomic(c.out_dir + "/transfer.csv", csv);

  // Diagnostics of the sources with the frozen backbone, and their agreement.
  log("transfer: diagnosing ", c.sources.size(), " sources with the frozen ", c.backbone);
  auto corpus = data::load_corpus(data::corpus_file(c.idf_corpus));
  std::vector<std::string> corpus_texts;
  for (size_t i = 0; i < corpus.size(); ++i) corpus_texts.push_back(corpus.indexed_text(i));
  text::Analyzer analyzer;
  std::vector<std::vector<std::string>> doc_terms;
  auto idf = diagnose::IdfTable::build(corpus_texts, analyzer, 2, &doc_terms);
  diagnose::LexicalScorer lexical(idf, analyzer);
  lexical.add_known_texts(corpus_texts, std::move(doc_terms));
  auto encoder = encode::make_encoder(c.backbone);
  diagnose::EmbeddingCache cache(*encoder, c.out_dir);
  diagnose::DiagnoseOptions dopt;
  dopt.tau = c.tau;
  dopt.gamma = c.gamma;
  diagnose::Diagnoser diagnoser(dopt);
  std::vector<diagnose::SourceInput> inputs;
  for (size_t si = 0; si < c.sources.size(); ++si) inputs.push_back({c.sources[si].name, triples[si], 0, {}});
  diagnoser.run(std::move(inputs), lexical, cache, corpus_texts);
  json table = json::object();
  for (const auto &r : diagnoser.reports()) {
    json row = {{"count", r.stats.count}};
    for (const auto &name : diagnose::diagnostic_names())
      row[name] = diagnose::diagnostic_value(r.stats, name);
    table[r.name] = row;
  }
  auto finite = [](double x) { return std::isfinite(x) ? json(x) : json(nullptr); };
  auto interval = [&](const diagnose::Interval &iv) {
    return json{{"value", finite(iv.value)}, {"ci_low", finite(iv.low)}, {"ci_high", finite(iv.high)}};
  };
  auto agreement = diagnoser.agreement(transfer, c.bootstrap);
  json agree = json::object();
  for (const auto &row : agreement.rows)
    agree[row.diagnostic] = {{"kendall_tau_b", interval(row.kendall)},
                             {"spearman_rho", interval(row.spearman)}};
  json matched = json::array();
  if (c.matched_reps > 0) {
    std::vector<size_t> bins = {5, 10, 20};
    auto m = diagnoser.matched(transfer, bins, c.matched_reps);
    for (const auto &res : m.resolutions) {
      json rows = json::object();
      for (const auto &row : res.rows)
        rows[row.diagnostic] = {{"mean_kendall_tau_b", finite(row.mean_kendall)},
                                {"recovered_rate", row.concordant_rate},
                                {"reversed_rate", row.reversed_rate}};
      matched.push_back(
          {{"bins", res.bins},
           {"matched_per_source", res.mean_matched_count.empty() ? 0.0 : res.mean_matched_count[0]},
           {"diagnostics", rows}});
    }
  }
  json summary = {{"experiment", "transfer"},
                  {"config", c.path},
                  {"backbone", c.backbone},
                  {"seeds", c.seeds},
                  {"transfer_metric", target + " nDCG@10 (mean over seeds)"},
                  {"observed", observed},
                  {"diagnostics", table},
                  {"s0", diagnoser.s0()},
                  {"agreement", agree},
                  {"bootstrap", c.bootstrap},
                  {"matched", matched}};
  summary["runs"] = json::object();
  for (size_t i = 0; i < runs.size(); ++i) summary["runs"][runs[i].key] = json::parse(texts[i]);
  write_summary(c.out_dir, summary);
  return summary.dump();
}

}  // namespace verity::experiment
