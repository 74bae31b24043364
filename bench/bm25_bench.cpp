// BM25 benchmark on a BEIR dataset (default: SciFact test split):
// index build time, single- and multi-threaded query throughput at k, peak
// RSS, nDCG@10, and the same for Xapian's BM25Weight fed the identical
// analyzed terms. Prints one JSON object on stdout; progress goes to stderr.
//
//   verity_bench_bm25 [dataset_dir] [--k 100] [--repeat 10] [--threads 2]
//                     [--analyzer english] [--no-xapian]
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#ifdef VERITY_HAVE_XAPIAN
#include <xapian.h>
#endif

#include "core/error.hpp"
#include "core/log.hpp"
#include "data/beir.hpp"
#include "eval/metrics.hpp"
#include "index/bm25.hpp"
#include "text/analyzer.hpp"

using namespace verity;
using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

namespace {

struct Args {
  std::string dataset = std::string(VERITY_SHARED_DATA) + "/beir/scifact";
  size_t k = 100;
  int repeat = 10;
  int threads = 2;
  std::string analyzer = "english";
  bool xapian = true;
};

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    auto value = [&]() -> std::string {
      VERITY_CHECK(i + 1 < argc, ConfigError, "option ", s, " needs a value");
      return argv[++i];
    };
    if (s == "--k") a.k = std::stoul(value());
    else if (s == "--repeat") a.repeat = std::max(1, std::stoi(value()));
    else if (s == "--threads") a.threads = std::max(1, std::stoi(value()));
    else if (s == "--analyzer") a.analyzer = value();
    else if (s == "--no-xapian") a.xapian = false;
    else if (!s.empty() && s[0] == '-')
      throw ConfigError(cat("unknown option '", s,
                            "' (valid: --k, --repeat, --threads, --analyzer, --no-xapian)"));
    else a.dataset = s;
  }
  return a;
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

std::string git_sha() {
  std::string cmd = cat("git -C '", VERITY_SOURCE_DIR, "' rev-parse HEAD 2>/dev/null");
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[128];
    while (fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out.empty() ? "unknown" : out;
}

// Runs fn() `repeat` times and returns the median queries/s.
template <typename Fn>
double median_qps(size_t queries, int repeat, Fn&& fn) {
  fn();  // warm-up: page cache, thread_local buffers
  std::vector<double> qps;
  for (int r = 0; r < repeat; ++r) {
    auto t0 = Clock::now();
    fn();
    qps.push_back(double(queries) / seconds_since(t0));
  }
  std::sort(qps.begin(), qps.end());
  return qps[qps.size() / 2];
}

double ndcg10(const eval::Run& run, const data::Qrels& qrels) {
  eval::EvalOptions opt;
  opt.metrics = {{eval::Metric::kNdcg, 10}};
  return eval::evaluate(run, qrels, opt).mean.at("ndcg@10");
}

#ifdef VERITY_HAVE_XAPIAN
// Xapian with the same analyzed tokens: one term per token (wdf = tf, so
// Xapian's document length equals ours), BM25Weight with the same k1/b and
// no length clamping or extra query-side terms.
json bench_xapian(const Args& a, const std::vector<std::vector<std::string>>& doc_terms,
                  const std::vector<std::vector<std::string>>& query_terms,
                  const std::vector<std::string>& doc_ids, const data::BeirDataset& ds,
                  const index::Bm25Params& params) {
  auto dir = std::filesystem::temp_directory_path() / ("verity_bench_xapian_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  size_t skipped_long_terms = 0;
  auto t0 = Clock::now();
  {
    Xapian::WritableDatabase db(dir.string(), Xapian::DB_CREATE_OR_OVERWRITE);
    for (const auto& terms : doc_terms) {
      Xapian::Document doc;
      for (const auto& t : terms) {
        if (t.size() > 240) {  // Xapian's term length limit
          ++skipped_long_terms;
          continue;
        }
        doc.add_term(t);
      }
      db.add_document(doc);  // docids 1..N in corpus order
    }
    db.commit();
  }
  double build_s = seconds_since(t0);

  auto make_query = [](const std::vector<std::string>& terms) {
    return Xapian::Query(Xapian::Query::OP_OR, terms.begin(), terms.end());
  };
  Xapian::BM25Weight weight(params.k1, 0.0, 1.0, params.b, 0.0);
  auto run_range = [&](size_t begin, size_t end, std::vector<std::vector<Xapian::docid>>* out) {
    Xapian::Database db(dir.string());
    Xapian::Enquire enquire(db);
    enquire.set_weighting_scheme(weight);
    enquire.set_docid_order(Xapian::Enquire::ASCENDING);
    for (size_t q = begin; q < end; ++q) {
      enquire.set_query(make_query(query_terms[q]));
      Xapian::MSet mset = enquire.get_mset(0, Xapian::doccount(a.k));
      if (out) {
        (*out)[q].clear();
        for (auto it = mset.begin(); it != mset.end(); ++it) (*out)[q].push_back(*it);
      }
    }
  };
  const size_t nq = query_terms.size();
  std::vector<std::vector<Xapian::docid>> results(nq);
  run_range(0, nq, &results);
  double qps1 = median_qps(nq, a.repeat, [&] { run_range(0, nq, nullptr); });
  double qpsn = median_qps(nq, a.repeat, [&] {
    std::vector<std::thread> pool;
    for (int t = 0; t < a.threads; ++t)
      pool.emplace_back(run_range, nq * size_t(t) / size_t(a.threads),
                        nq * size_t(t + 1) / size_t(a.threads), nullptr);
    for (auto& th : pool) th.join();
  });

  eval::Run run;
  for (size_t q = 0; q < nq; ++q) {
    auto& ranked = run[ds.queries[q].id];
    for (size_t r = 0; r < results[q].size(); ++r)
      ranked.push_back({doc_ids[results[q][r] - 1], double(results[q].size() - r)});
  }
  uintmax_t bytes = 0;
  for (auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file()) bytes += e.file_size();
  std::filesystem::remove_all(dir);
  return {{"version", Xapian::version_string()},
          {"backend", "glass (on disk, page cache warm)"},
          {"weighting", "BM25Weight(k1, k2=0, k3=1, b, min_normlen=0)"},
          {"build_seconds", build_s},
          {"index_bytes", bytes},
          {"skipped_long_terms", skipped_long_terms},
          {"qps_1_thread", qps1},
          {cat("qps_", a.threads, "_threads"), qpsn},
          {"ndcg@10", ndcg10(run, ds.qrels)}};
}
#endif

int run(int argc, char** argv) {
  Args a = parse_args(argc, argv);
  json out;
  out["argv"] = std::vector<std::string>(argv, argv + argc);
  out["git_sha"] = git_sha();
  out["build_type"] = VERITY_BUILD_TYPE;
  out["hardware"] = {{"nproc", std::thread::hardware_concurrency()}, {"cpu", cpu_model()}};

  auto ds = data::load_beir(a.dataset, "test");
  std::vector<std::string> ids, texts, queries;
  for (size_t i = 0; i < ds.corpus.size(); ++i) {
    ids.push_back(ds.corpus.docs[i].id);
    texts.push_back(ds.corpus.indexed_text(i));
  }
  for (const auto& q : ds.queries) queries.push_back(q.text);
  out["dataset"] = {{"dir", a.dataset}, {"docs", ids.size()}, {"queries", queries.size()},
                    {"split", "test"}};
  const auto analyzer = text::Analyzer::from_spec(a.analyzer);
  const index::Bm25Params params;
  out["config"] = {{"analyzer", analyzer.spec()}, {"k1", params.k1}, {"b", params.b},
                   {"k", a.k}, {"repeat", a.repeat}, {"threads", a.threads}};
  double rss_before_index = peak_rss_mb();

  json build;
  for (int threads : {1, a.threads}) {
    auto t0 = Clock::now();
    auto idx = index::Bm25Index::build(ids, texts, analyzer, params, threads);
    build[cat("seconds_", threads, "_thread", threads > 1 ? "s" : "")] = seconds_since(t0);
  }
  auto idx = index::Bm25Index::build(ids, texts, analyzer, params, a.threads);
  build["terms"] = idx.num_terms();
  build["postings"] = idx.num_postings();
  build["avgdl"] = idx.avgdl();

  auto path = (std::filesystem::temp_directory_path() / ("verity_bench_" + std::to_string(getpid()) + ".vbm")).string();
  auto t_save = Clock::now();
  idx.save(path);
  build["save_seconds"] = seconds_since(t_save);
  build["file_bytes"] = std::filesystem::file_size(path);
  auto t_load = Clock::now();
  auto loaded = index::Bm25Index::load(path);  // searched below: the mmap'd form
  build["load_seconds"] = seconds_since(t_load);
  std::filesystem::remove(path);  // the mapping stays valid

  // Analysis alone, and search on pre-analyzed terms, to split the cost.
  std::vector<std::vector<std::string>> query_terms;
  auto t_an = Clock::now();
  for (const auto& q : queries) query_terms.push_back(loaded.query_terms(q));
  double analyze_s = seconds_since(t_an);

  const size_t nq = queries.size();
  std::vector<std::vector<index::Hit>> hits(nq);
  double qps1 = median_qps(nq, a.repeat, [&] {
    for (size_t q = 0; q < nq; ++q) hits[q] = loaded.search(queries[q], a.k);
  });
  double qps_terms = median_qps(nq, a.repeat, [&] {
    for (size_t q = 0; q < nq; ++q) hits[q] = loaded.search_terms(query_terms[q], a.k, params);
  });
  double qpsn = median_qps(nq, a.repeat, [&] { loaded.search_batch(queries, a.k, a.threads); });
  auto batch = loaded.search_batch(queries, a.k, a.threads);
  size_t batch_mismatches = 0;
  for (size_t q = 0; q < nq; ++q) {
    auto single = loaded.search(queries[q], a.k);
    bool same = single.size() == batch[q].size();
    for (size_t r = 0; same && r < single.size(); ++r)
      same = single[r].doc == batch[q][r].doc && single[r].score == batch[q][r].score;
    batch_mismatches += !same;
  }

  eval::Run run;
  for (size_t q = 0; q < nq; ++q) {
    auto& ranked = run[ds.queries[q].id];
    for (const auto& h : batch[q]) ranked.push_back({std::string(loaded.doc_id(h.doc)), h.score});
  }
  out["verity"] = {{"build", build},
                   {"query_analysis_seconds_total", analyze_s},
                   {"qps_1_thread", qps1},
                   {"qps_1_thread_preanalyzed", qps_terms},
                   {cat("qps_", a.threads, "_threads"), qpsn},
                   {"batch_vs_single_mismatches", batch_mismatches},
                   {"ndcg@10", ndcg10(run, ds.qrels)},
                   {"peak_rss_mb_before_index", rss_before_index},
                   {"peak_rss_mb", peak_rss_mb()}};

#ifdef VERITY_HAVE_XAPIAN
  if (a.xapian) {
    std::vector<std::vector<std::string>> doc_terms;
    for (const auto& t : texts) doc_terms.push_back(analyzer.analyze(t));
    auto x = bench_xapian(a, doc_terms, query_terms, ids, ds, params);
    x["peak_rss_mb_process"] = peak_rss_mb();
    out["xapian"] = x;
    out["verity_over_xapian_qps_1_thread"] = qps1 / x["qps_1_thread"].get<double>();
    out["verity_preanalyzed_over_xapian_qps_1_thread"] = qps_terms / x["qps_1_thread"].get<double>();
  }
#else
  out["xapian"] = "not built (xapian-core not found by pkg-config)";
#endif
  std::cout << out.dump(2) << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const ConfigError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
