#include "experiment/config.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.hpp"
#include "core/io.hpp"

namespace verity::experiment {
namespace {
using nlohmann::json;

// Reads typed fields of one JSON object; every error names file and field.
// Unknown keys are errors too (a typo must not silently fall back to a
// default).
class Fields {
 public:
  Fields(const json &j, std::string file, std::string prefix, std::string base_dir)
      : j_(j), file_(std::move(file)), prefix_(std::move(prefix)), base_(std::move(base_dir)) {
    VERITY_CHECK(j_.is_object(), ConfigError, file_, ": ", where(""), "expected a JSON object");
  }
  std::string name(const std::string &key) const { return prefix_ + key; }
  [[noreturn]] void fail(const std::string &key, const std::string &what) const {
    throw ConfigError(cat(file_, ": \"", name(key), "\": ", what));
  }
  bool has(const std::string &key) {
    seen_.insert(key);
    return j_.contains(key);
  }
  const json &at(const std::string &key) {
    if (!has(key)) fail(key, "missing (required)");
    return j_.at(key);
  }
  std::string str(const std::string &key, std::string def, bool required = false) {
    if (!has(key)) {
      if (required) fail(key, "missing (required)");
      return def;
    }
    const auto &v = j_.at(key);
    if (!v.is_string() || v.get<std::string>().empty())
      fail(key, cat("expected a non-empty string, got ", v.dump()));
    return v.get<std::string>();
  }
  std::string path(const std::string &key, bool required = true) {
    std::string p = str(key, "", required);
    if (p.empty()) return p;
    std::filesystem::path fp(p);
    return fp.is_absolute() || base_.empty()
               ? p
               : (std::filesystem::path(base_) / fp).lexically_normal().string();
  }
  size_t count(const std::string &key, size_t def, size_t min = 0) {
    if (!has(key)) return def;
    const auto &v = j_.at(key);
    if (!v.is_number_integer() || v.get<int64_t>() < int64_t(min))
      fail(key, cat("expected an integer >= ", min, ", got ", v.dump()));
    return v.get<size_t>();
  }
  double number(const std::string &key, double def, double lo, double hi, bool open_low = false) {
    if (!has(key)) return def;
    const auto &v = j_.at(key);
    if (!v.is_number()) fail(key, cat("expected a number, got ", v.dump()));
    double x = v.get<double>();
    if (x < lo || x > hi || (open_low && x == lo))
      fail(key, cat("expected a number in ", open_low ? "(" : "[", lo, ", ", hi, "], got ", v.dump()));
    return x;
  }
  bool flag(const std::string &key, bool def) {
    if (!has(key)) return def;
    const auto &v = j_.at(key);
    if (!v.is_boolean()) fail(key, cat("expected true or false, got ", v.dump()));
    return v.get<bool>();
  }
  std::vector<std::string> strings(const std::string &key) {
    const auto &v = at(key);
    if (!v.is_array() || v.empty()) fail(key, "expected a non-empty array of strings");
    std::vector<std::string> out;
    for (size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string() || v[i].get<std::string>().empty())
        fail(cat(key, "[", i, "]"), cat("expected a non-empty string, got ", v[i].dump()));
      out.push_back(v[i].get<std::string>());
    }
    return out;
  }
  std::vector<uint64_t> seeds(const std::string &key) {
    if (!has(key)) return {1, 2, 3};
    const auto &v = j_.at(key);
    if (!v.is_array() || v.empty()) fail(key, "expected a non-empty array of integers");
    std::vector<uint64_t> out;
    std::set<uint64_t> seen;
    for (size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_number_unsigned())
        fail(cat(key, "[", i, "]"), cat("expected an integer >= 0, got ", v[i].dump()));
      if (!seen.insert(v[i].get<uint64_t>()).second) fail(cat(key, "[", i, "]"), "repeated seed");
      out.push_back(v[i].get<uint64_t>());
    }
    return out;
  }
  Fields object(const std::string &key) {
    const auto &v = at(key);
    if (!v.is_object()) fail(key, "expected a JSON object");
    return Fields(v, file_, name(key) + ".", base_);
  }
  Fields element(const std::string &key, size_t i) {
    return Fields(j_.at(key)[i], file_, cat(name(key), "[", i, "]."), base_);
  }
  // Call after reading every field.
  void no_unknown_keys() const {
    for (const auto &[k, v] : j_.items())
      if (!seen_.count(k)) fail(k, "unknown field");
  }

 private:
  std::string where(const std::string &key) const {
    return prefix_.empty() && key.empty() ? "" : "\"" + name(key) + "\": ";
  }
  const json &j_;
  std::string file_, prefix_, base_;
  std::set<std::string> seen_;
};

json parse_json(const std::string &text, const std::string &path) {
  try {
    return json::parse(text);
  } catch (const json::parse_error &e) {
    throw ConfigError(cat(path, ": not valid JSON (byte ", e.byte, ")"));
  } catch (const json::exception &e) {  // out_of_range: a number like 1e999
    throw ConfigError(cat(path, ": not valid JSON (", e.what(), ")"));
  }
}

std::string base_dir_of(const std::string &path) {
  auto parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

TrainSettings read_train(Fields f) {
  TrainSettings t;
  t.max_steps = f.count("max_steps", t.max_steps, 1);
  t.batch_size = f.count("batch_size", t.batch_size, 2);
  t.learning_rate = f.number("learning_rate", t.learning_rate, 0, 1, true);
  t.scale = f.number("scale", t.scale, 0, 1000, true);
  t.warmup_ratio = f.number("warmup_ratio", t.warmup_ratio, 0, 1);
  t.max_triples = f.count("max_triples", t.max_triples);
  t.threads = int(f.count("threads", size_t(t.threads), 1));
  if (f.has("learning_rate_by_backbone")) {
    const auto &v = f.at("learning_rate_by_backbone");
    if (!v.is_object()) f.fail("learning_rate_by_backbone", "expected an object {\"backbone\": rate}");
    auto lr = f.object("learning_rate_by_backbone");
    for (const auto &[name, value] : v.items())
      t.learning_rate_by_backbone.emplace_back(name, lr.number(name, 0, 0, 1, true));
  }
  f.no_unknown_keys();
  return t;
}

std::vector<EvalDataset> read_eval(Fields &f, const std::string &key) {
  const auto &v = f.at(key);
  if (!v.is_array() || v.empty()) f.fail(key, "expected a non-empty array of {\"dir\", ...} objects");
  std::vector<EvalDataset> out;
  std::set<std::string> names;
  for (size_t i = 0; i < v.size(); ++i) {
    auto e = f.element(key, i);
    EvalDataset d;
    d.dir = e.path("dir");
    d.name = e.str("name", std::filesystem::path(d.dir).filename().string());
    d.split = e.str("split", d.split);
    d.in_domain = e.flag("in_domain", false);
    d.max_queries = e.count("max_queries", 0);
    d.max_docs = e.count("max_docs", 0);
    e.no_unknown_keys();
    if (!names.insert(d.name).second)
      f.fail(cat(key, "[", i, "].name"), cat("repeated dataset name \"", d.name, "\""));
    out.push_back(d);
  }
  return out;
}

// Reads a config file's top-level object with `read` (Fields f, Config& c),
// then rejects unknown fields ("comment" is allowed anywhere at the top).
template <typename Config, typename Read>
Config parse_config(const std::string &text, const std::string &path, Read read) {
  auto j = parse_json(text, path);
  Fields f(j, path, "", base_dir_of(path));
  Config c;
  c.path = path;
  c.out_dir = f.path("out_dir");
  read(f, c);
  if (f.has("train")) c.train = read_train(f.object("train"));
  c.eval = read_eval(f, "eval");
  f.has("comment");
  f.no_unknown_keys();
  return c;
}

}  // namespace

TradeoffConfig parse_tradeoff_config_text(const std::string &text, const std::string &path) {
  return parse_config<TradeoffConfig>(text, path, [](Fields &f, TradeoffConfig &c) {
    c.backbones = f.strings("backbones");
    c.seeds = f.seeds("seeds");
    c.standard_triples = f.path("standard_triples");
    c.structural_triples = f.path("structural_triples");
    c.structural_ratio = f.number("structural_ratio", c.structural_ratio, 0, 1, true);
    c.nearmiss_test = f.path("nearmiss_test");
    c.nearmiss_max_triples = f.count("nearmiss_max_triples", 0);
  });
}

TransferConfig parse_transfer_config_text(const std::string &text, const std::string &path) {
  return parse_config<TransferConfig>(text, path, [](Fields &f, TransferConfig &c) {
    c.backbone = f.str("backbone", "", true);
    c.seeds = f.seeds("seeds");
    {
      const auto &v = f.at("sources");
      if (!v.is_object() || v.size() < 2)
        f.fail("sources",
               "expected an object {\"name\": \"triples.jsonl\", ...} with "
               "at least two sources");
      auto s = f.object("sources");
      for (const auto &[name, value] : v.items()) c.sources.push_back({name, s.path(name)});
    }
    c.idf_corpus = f.path("idf_corpus");
    c.tau = f.number("tau", c.tau, 0, 100, true);
    c.gamma = f.number("gamma", c.gamma, 0, 1e6, true);
    c.bootstrap = f.count("bootstrap", c.bootstrap);
    c.matched_reps = f.count("matched_reps", c.matched_reps);
  });
}

TradeoffConfig parse_tradeoff_config(const std::string &path) {
  return parse_tradeoff_config_text(read_file(path), path);
}
TransferConfig parse_transfer_config(const std::string &path) {
  return parse_transfer_config_text(read_file(path), path);
}

}  // namespace verity::experiment
