// verity.build_index, verity.Pipeline / Hit and verity.Verifier / Verification.
#include <map>
#include <pybind11/stl.h>

#include "common.hpp"
#include "data/beir.hpp"
#include "index/doc_store.hpp"
#include "search/detail/index_report_json.hpp"
#include "search/index_builder.hpp"
#include "search/pipeline.hpp"
#include "search/text_verifier.hpp"

namespace verity::python {
namespace {

// A hit keeps its pipeline alive, so title and text are read from the mmapped
// document store only when asked for.
struct PyHit {
  search::SearchHit hit;
  std::shared_ptr<const search::Pipeline> pipeline;
};

std::optional<std::string> verdict_or_none(const std::string& v) {
  if (v.empty()) return std::nullopt;
  return v;
}

py::object build_index(const std::string& corpus, const std::string& out_dir, bool bm25, bool dense,
                       bool tokens, const std::string& encoder, const std::string& fields,
                       const std::string& analyzer, double k1, double b, const std::string& dense_index,
                       const std::string& token_precision, size_t batch_size, int threads) {
  search::IndexBuildOptions o;
  o.bm25 = bm25;
  o.dense = dense;
  o.tokens = tokens;
  o.encoder = encoder;
  o.analyzer = analyzer;
  o.k1 = k1;
  o.b = b;
  o.dense_index = dense_index;
  o.token_precision = token_precision;
  o.batch_size = batch_size;
  o.threads = threads;
  o.created_by = "verity.build_index (python)";
  auto report = without_gil([&] {
    auto docs = data::load_corpus(data::corpus_file(corpus), data::parse_doc_fields(fields));
    return search::build_index(docs, out_dir, o);
  });
  return to_python(search::detail::index_report_json(out_dir, o, report));
}

}  // namespace

search::PipelineOptions pipeline_options(const std::string& stage1, const std::string& verifier, size_t candidates,
                                         const std::string& fusion, double rrf_k, double dense_weight,
                                         const std::string& combine, double verifier_weight, double penalty_beta,
                                         double penalty_tau, std::optional<double> reject_below) {
  search::PipelineOptions o;
  o.stage1 = stage1;
  o.verifier = verifier;
  o.candidates = candidates;
  o.fusion = fusion;
  o.rrf_k = rrf_k;
  o.dense_weight = dense_weight;
  o.combine = combine;
  o.verifier_weight = verifier_weight;
  o.penalty_beta = penalty_beta;
  o.penalty_tau = penalty_tau;
  o.reject_below = reject_below;
  return o;
}

void bind_search(py::module_& m) {
  const search::IndexBuildOptions build_defaults;
  m.def("build_index", &build_index, py::arg("corpus_dir"), py::arg("out_dir"),
        py::arg("bm25") = build_defaults.bm25, py::arg("dense") = build_defaults.dense,
        py::arg("tokens") = build_defaults.tokens, py::arg("encoder") = build_defaults.encoder,
        py::kw_only(), py::arg("fields") = std::string(data::doc_fields_name(data::LoadOptions{}.fields)), py::arg("analyzer") = build_defaults.analyzer,
        py::arg("k1") = build_defaults.k1, py::arg("b") = build_defaults.b,
        py::arg("dense_index") = build_defaults.dense_index,
        py::arg("token_precision") = build_defaults.token_precision,
        py::arg("batch_size") = build_defaults.batch_size, py::arg("threads") = build_defaults.threads,
        R"(Builds an index directory from a corpus (as `verity index` does).

corpus_dir is a BEIR directory (its corpus.jsonl) or a corpus.jsonl file.
Parts: bm25 (lexical), dense (pooled vectors; needed by stage1="dense" and
"hybrid"), tokens (token vectors; needed by a verifier). out_dir is replaced
atomically. Releases the GIL; Ctrl-C stops it (KeyboardInterrupt) and leaves
no partial index. Returns the dict `verity index --json` prints: index, docs,
parts, token_vectors, seconds, encode_seconds.)");

  py::class_<PyHit>(m, "Hit", "One search result.")
      .def_property_readonly(
          "id", [](const PyHit& h) { return h.hit.id; }, "Document id (the corpus _id).")
      .def_property_readonly(
          "score", [](const PyHit& h) { return h.hit.score; }, "Final ranking score.")
      .def_property_readonly(
          "stage1_score", [](const PyHit& h) { return h.hit.stage1_score; },
          "Stage-1 score (BM25, dense cosine or fused).")
      .def_property_readonly(
          "verifier_score", [](const PyHit& h) { return h.hit.verifier_score; },
          "Stage-2 verifier score; None without a verifier.")
      .def_property_readonly(
          "verdict", [](const PyHit& h) { return verdict_or_none(h.hit.verdict); },
          "'match' or 'near-miss' at the pipeline's reject_below; None without one.")
      .def_property_readonly(
          "title", [](const PyHit& h) { return std::string(h.pipeline->docs().title(h.hit.doc)); },
          "Document title.")
      .def_property_readonly(
          "text", [](const PyHit& h) { return std::string(h.pipeline->docs().text(h.hit.doc)); },
          "Document text.")
      .def_property_readonly(
          "doc", [](const PyHit& h) { return h.hit.doc; }, "Position of the document in the index.")
      .def("__repr__", [](const PyHit& h) {
        std::string s = cat("<verity.Hit id='", h.hit.id, "' score=", h.hit.score);
        if (h.hit.verifier_score) s += cat(" verifier_score=", *h.hit.verifier_score);
        if (!h.hit.verdict.empty()) s += " verdict='" + h.hit.verdict + "'";
        return s + ">";
      });

  py::class_<search::Verification>(m, "Verification", "Stage-2 verdict on one (query, text) pair.")
      .def_property_readonly(
          "probability", [](const search::Verification& v) { return v.score; },
          "The verifier's score: P(same meaning) for calibrated verifiers (the default one); "
          "F0-F2 give their raw similarity.")
      .def_property_readonly(
          "verdict", [](const search::Verification& v) { return verdict_or_none(v.verdict); },
          "'match' (probability >= threshold) or 'near-miss'; None when there is no threshold.")
      .def("__repr__", [](const search::Verification& v) {
        return cat("<verity.Verification probability=", v.score,
                   v.verdict.empty() ? "" : " verdict='" + v.verdict + "'", ">");
      });

  const search::PipelineOptions p;
  py::class_<search::Pipeline, std::shared_ptr<search::Pipeline>>(m, "Pipeline", R"(The two-stage search pipeline over an index directory.

Stage 1 recalls `candidates` documents (bm25 | dense | hybrid | auto); stage 2
scores each on its token similarity map with `verifier` (none | f0 | f1 | f2 |
f3:PATH | f4:PATH | ensemble:PATH | default | auto) and reranks by `combine`.
stage1="dense"/"hybrid" needs an index built with dense=True, a verifier one
built with tokens=True. The defaults, "auto", are the two-stage default where
the index allows it: hybrid with a dense part (else bm25), and the default
verifier on token vectors of the encoder it was trained on (F1 on another
encoder's, none without token vectors); `stage1` and `verifier` name what ran. Formulas: docs/PIPELINE.md. Thread-safe: search may be
called from many Python threads at once (the GIL is released).)")
      .def(py::init([](const std::string& index_dir, const std::string& stage1, const std::string& verifier,
                       size_t candidates, std::optional<std::string> fusion, std::optional<double> rrf_k,
                       std::optional<double> dense_weight, std::optional<std::string> combine,
                       std::optional<double> verifier_weight, std::optional<double> penalty_beta,
                       std::optional<double> penalty_tau, std::optional<double> reject_below,
                       const std::string& encoder, int threads) {
             const search::PipelineOptions d;
             auto o = pipeline_options(stage1, verifier, candidates, fusion.value_or(d.fusion),
                                       rrf_k.value_or(d.rrf_k), dense_weight.value_or(d.dense_weight),
                                       combine.value_or(d.combine), verifier_weight.value_or(d.verifier_weight),
                                       penalty_beta.value_or(d.penalty_beta), penalty_tau.value_or(d.penalty_tau),
                                       reject_below);
             o.encoder = encoder;
             o.threads = threads;
             auto pipeline = without_gil([&] { return std::make_shared<search::Pipeline>(index_dir, o); });
             // As the CLI refuses its flags: an option the pipeline as opened never reads is a mistake.
             const auto& ran = pipeline->options();
             const std::map<std::string, bool> given = {
                 {"fusion", fusion.has_value()},       {"rrf_k", rrf_k.has_value()},
                 {"dense_weight", dense_weight.has_value()}, {"combine", combine.has_value()},
                 {"verifier_weight", verifier_weight.has_value()}, {"penalty_beta", penalty_beta.has_value()},
                 {"penalty_tau", penalty_tau.has_value()}};
             for (const auto& unread : search::unread_options(ran, false))
               for (const char* name : unread.options) {
                 if (auto it = given.find(name); it == given.end() || !it->second) continue;
                 const std::string setting = unread.setting, value = unread.value;
                 if (value.empty())
                   throw ConfigError(cat(name, " applies to a stage 2 only; this pipeline has no verifier"));
                 throw ConfigError(cat(name, " applies to ", setting, "=\"", value, "\" only; ",
                                       setting == "stage1" ? "this pipeline's stage 1 is " + ran.stage1
                                                           : std::string("it is not read here")));
               }
             return pipeline;
           }),
           py::arg("index_dir"), py::arg("stage1") = "auto", py::arg("verifier") = "auto",
           py::arg("candidates") = p.candidates, py::kw_only(), py::arg("fusion") = py::none(),
           py::arg("rrf_k") = py::none(), py::arg("dense_weight") = py::none(),
           py::arg("combine") = py::none(), py::arg("verifier_weight") = py::none(),
           py::arg("penalty_beta") = py::none(), py::arg("penalty_tau") = py::none(),
           py::arg("reject_below") = py::none(), py::arg("encoder") = p.encoder,
           py::arg("threads") = p.threads,
           cat(R"(Opens the index parts the options need.

fusion (hybrid): "weighted" (dense_weight) | "rrf" (rrf_k). combine: "weighted"
(verifier_weight) | "rerank" | "penalty" (penalty_beta, penalty_tau). None
takes the library's default: fusion=")", p.fusion, R"(", dense_weight=)", p.dense_weight,
               ", rrf_k=", p.rrf_k, R"(, combine=")", p.combine, R"(", verifier_weight=)", p.verifier_weight,
               ", penalty_beta=", p.penalty_beta, ", penalty_tau=", p.penalty_tau, R"(.
An option the pipeline as opened does not read (fusion without a hybrid
stage 1, penalty_beta with combine="weighted", ...) raises ConfigError.
reject_below: verdict threshold on the verifier score. encoder: "" = the one
recorded in the index. threads: encoder threads, 0 = runtime default.
A missing part or a bad option raises ConfigError naming it.)").c_str())
      .def(
          "search",
          [](const std::shared_ptr<search::Pipeline>& self, const std::string& query, size_t k) {
            search::check_query(query);
            // Stage 1 passes `candidates`: a larger k would come back short without saying so.
            VERITY_CHECK(k <= self->options().candidates, ConfigError, "k=", k, " is above the pipeline's candidates=",
                         self->options().candidates, " (stage 1 passes only that many); open the Pipeline with candidates=",
                         k, " or more");
            auto hits = without_gil_short([&] { return self->search(query, k); });
            std::vector<PyHit> out;
            out.reserve(hits.size());
            for (auto& h : hits) out.push_back({std::move(h), self});
            return out;
          },
          py::arg("query"), py::arg("k") = 10,
          "Top-k hits for query, best first (list of Hit); k is at most the pipeline's candidates. "
          "Releases the GIL; thread-safe.")
      .def(
          "verify",
          [](const search::Pipeline& self, const std::string& query, std::vector<std::string> texts) {
            return without_gil([&] { return self.verify(query, texts); });
          },
          py::arg("query"), py::arg("texts"),
          "Stage 2 alone: one Verification per text, with this pipeline's encoder and verifier "
          "(verdicts at reject_below).")
      .def_property_readonly(
          "stage1", [](const search::Pipeline& self) { return self.options().stage1; },
          "Stage 1 as it runs (\"auto\" resolved): bm25 | dense | hybrid.")
      .def_property_readonly(
          "verifier", [](const search::Pipeline& self) { return self.options().verifier; },
          "Stage 2's verifier as it runs (\"auto\" resolved); \"none\" without one.")
      .def_property_readonly(
          "threshold", [](const search::Pipeline& self) { return self.verdict_threshold(); },
          "Verdict threshold: reject_below, else the verifier's calibrated one; None without either.")
      .def("describe", &search::Pipeline::describe, "Stage-1 / verifier / combine specs, for provenance.")
      .def("__len__", [](const search::Pipeline& self) { return self.docs().size(); }, "Documents in the index.")
      .def("__repr__", [](const search::Pipeline& self) { return "<verity.Pipeline " + self.describe() + ">"; });

  const search::TextVerifierOptions v;
  py::class_<search::TextVerifier, std::shared_ptr<search::TextVerifier>>(m, "Verifier", R"(Stage-2 verification without an index.

Encodes a query and candidate texts with `encoder` and scores each pair with
`verifier` (default | f0 | f1 | f2 | f3:PATH | f4:PATH | ensemble:PATH).
Verdicts use `threshold`, else the verifier's calibrated default threshold;
with neither (F0-F2, an uncalibrated learned verifier) verdicts are None.
Thread-safe; verify releases the GIL. verity.verify() reuses one per settings.)")
      .def(py::init([](const std::string& verifier, const std::string& encoder, std::optional<double> threshold,
                       int threads) {
             search::TextVerifierOptions o;
             o.verifier = verifier;
             o.encoder = encoder;
             o.threshold = threshold;
             o.threads = threads;
             return without_gil([&] { return std::make_shared<search::TextVerifier>(o); });
           }),
           py::arg("verifier") = v.verifier, py::kw_only(), py::arg("encoder") = v.encoder,
           py::arg("threshold") = py::none(), py::arg("threads") = v.threads)
      .def(
          "verify",
          [](const search::TextVerifier& self, const std::string& query, std::vector<std::string> texts) {
            return without_gil([&] { return self.verify(query, texts); });
          },
          py::arg("query"), py::arg("texts"), "One Verification per text, in order.")
      .def_property_readonly("threshold", &search::TextVerifier::threshold,
                             "The verdict threshold in use, or None.")
      .def("describe", &search::TextVerifier::describe, "Verifier, encoder and threshold specs.")
      .def("__repr__", [](const search::TextVerifier& self) { return "<verity.Verifier " + self.describe() + ">"; });
}

}  // namespace verity::python
