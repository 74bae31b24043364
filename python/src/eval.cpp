// verity.evaluate: `verity eval` on one BEIR dataset, returning its --json dict.
#include <pybind11/stl.h>

#include "common.hpp"
#include "data/beir.hpp"
#include "eval/detail/eval_json.hpp"
#include "eval/retrieval_eval.hpp"
#include "eval/trec_run.hpp"

namespace verity::python {
namespace {

py::object evaluate(const std::string& dataset_dir, const std::string& retriever, const std::string& split,
                    size_t k, const std::string& verifier, size_t candidates, const std::string& fusion,
                    double rrf_k, double dense_weight, const std::string& combine, double verifier_weight,
                    double penalty_beta, double penalty_tau, std::optional<double> reject_below,
                    const std::string& encoder, const std::string& dense_index,
                    const std::string& token_precision, size_t batch_size, const std::string& fields,
                    const std::string& analyzer, double k1, double b, const std::string& metrics,
                    bool ignore_identical_ids, int threads, const std::string& cache_dir, bool use_cache,
                    const std::string& run) {
  eval::RetrievalEvalOptions o;
  o.pipeline = pipeline_options(retriever, verifier, candidates, fusion, rrf_k, dense_weight, combine,
                                verifier_weight, penalty_beta, penalty_tau, reject_below);
  o.k = k;
  o.encoder = encoder;
  o.dense_index = dense_index;
  o.token_precision = token_precision;
  o.batch_size = batch_size;
  o.analyzer = analyzer;
  o.k1 = k1;
  o.b = b;
  o.metrics.metrics = eval::parse_metrics(metrics);
  o.metrics.ignore_identical_ids = ignore_identical_ids;
  o.threads = threads;
  o.cache_dir = cache_dir;
  o.use_cache = use_cache;
  data::LoadOptions load;
  load.fields = data::parse_doc_fields(fields);
  auto result = without_gil([&] {
    auto ds = data::load_beir(dataset_dir, split, load);
    log(ds.name, ": ", ds.report.summary());
    auto r = eval::evaluate_retrieval(ds, o);
    if (!run.empty()) eval::write_trec_run(run, r.run, "verity-" + retriever);
    return r;
  });
  return to_python(eval::detail::report_json(std::span(&result, 1), o, split));
}

}  // namespace

void bind_eval(py::module_& m) {
  const eval::RetrievalEvalOptions d;
  const auto& p = d.pipeline;
  std::string default_metrics;
  for (const auto& metric : d.metrics.metrics) default_metrics += (default_metrics.empty() ? "" : ",") + metric.name();
  const std::string default_fields(data::doc_fields_name(data::LoadOptions{}.fields));
  m.def("evaluate", &evaluate, py::arg("dataset_dir"), py::arg("retriever") = p.stage1,
        py::arg("split") = "test", py::arg("k") = d.k, py::kw_only(), py::arg("verifier") = p.verifier,
        py::arg("candidates") = p.candidates, py::arg("fusion") = p.fusion, py::arg("rrf_k") = p.rrf_k,
        py::arg("dense_weight") = p.dense_weight, py::arg("combine") = p.combine,
        py::arg("verifier_weight") = p.verifier_weight, py::arg("penalty_beta") = p.penalty_beta,
        py::arg("penalty_tau") = p.penalty_tau, py::arg("reject_below") = py::none(),
        py::arg("encoder") = d.encoder, py::arg("dense_index") = d.dense_index,
        py::arg("token_precision") = d.token_precision, py::arg("batch_size") = d.batch_size,
        py::arg("fields") = default_fields, py::arg("analyzer") = d.analyzer, py::arg("k1") = d.k1,
        py::arg("b") = d.b, py::arg("metrics") = default_metrics,
        py::arg("ignore_identical_ids") = d.metrics.ignore_identical_ids, py::arg("threads") = d.threads,
        py::arg("cache_dir") = d.cache_dir, py::arg("use_cache") = d.use_cache, py::arg("run") = "",
        R"(Evaluates retrieval on a BEIR dataset directory, as `verity eval` does.

Returns the dict `verity eval --json` prints: every metric (ndcg@10, acc@1,
recall@100, mrr@10, map@100 by default), queries and skip counts, docs, qps,
index and search seconds, per-query latency percentiles (threads=1), pipeline,
index_dir, dataset, retriever, verifier, split, k. The index is built on first
use and cached (cache_dir, default $VERITY_CACHE_DIR or ~/.cache/verity;
use_cache=False builds a temporary one). run: write a TREC run file there.
Releases the GIL; Ctrl-C stops it (KeyboardInterrupt).)");
}

}  // namespace verity::python
