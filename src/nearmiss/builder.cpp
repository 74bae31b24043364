#include "nearmiss/builder.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <unordered_set>

#include "core/crc32c.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "data/beir.hpp"
#include "data/triples.hpp"
#include "nearmiss/spatial_converse.hpp"
#include "nearmiss/text_utils.hpp"
#include "perturb/perturber.hpp"

namespace verity::nearmiss {
namespace fs = std::filesystem;
namespace {

// Generator specs, recorded in the manifest.
constexpr const char* kNegativeSpecs[] = {"negation", "role_swap", "spatial", "numeric"};
constexpr const char* kConverseSpec = "spatial_converse:v1";

struct InputFile {
  std::string path;
  uint64_t fnv1a64 = 0;
};

struct SourceStats {
  size_t inputs = 0;        // sentences (or stories) read
  size_t sampled = 0;       // after the input cap
  size_t targeted = 0;      // further sentences tried with role_swap/numeric only
  size_t triples = 0;       // candidate triples generated
  std::map<std::string, size_t> skipped;  // reason -> count
  std::map<std::string, size_t> positive_kind;
};

struct Context {
  const BuildOptions& options;
  std::vector<GroupedTriple> candidates;
  std::map<std::string, SourceStats> stats;
  std::vector<InputFile> inputs;
  std::unique_ptr<perturb::Perturber> passive = perturb::make_perturber("passive");
  std::unique_ptr<perturb::Perturber> synonym = perturb::make_perturber("synonym");
  std::vector<std::pair<std::string, std::unique_ptr<perturb::Perturber>>> negatives;

  explicit Context(const BuildOptions& o) : options(o) {
    for (const char* spec : kNegativeSpecs) negatives.emplace_back(spec, perturb::make_perturber(spec));
  }
};

uint64_t hash_file(Context& ctx, const std::string& path) {
  std::string bytes = read_file(path);
  uint64_t h = fnv1a64(bytes.data(), bytes.size());
  ctx.inputs.push_back({path, h});
  return h;
}

// Seeded sample of at most `cap` items (0 = all), in seeded order.
template <typename T, typename KeyFn>
std::vector<T> sample(std::vector<T> items, size_t cap, uint64_t seed, KeyFn key) {
  std::vector<std::pair<uint64_t, size_t>> order;
  for (size_t i = 0; i < items.size(); ++i) order.emplace_back(seeded_hash(seed, key(items[i])), i);
  std::sort(order.begin(), order.end());
  if (cap != 0 && order.size() > cap) order.resize(cap);
  std::vector<T> out;
  out.reserve(order.size());
  for (auto [_, i] : order) out.push_back(std::move(items[i]));
  return out;
}

perturb::Rng rng_for(uint64_t seed, std::string_view sentence) {
  return perturb::Rng(seeded_hash(seed ^ 0x726e67ULL, normalize_sentence(sentence)));
}

bool distinct(const std::string& a, const std::string& b) {
  return normalize_sentence(a) != normalize_sentence(b);
}

void add_triple(Context& ctx, std::string query, std::string positive, std::string negative,
                const std::string& type, const std::string& source, const std::string& group) {
  data::Triple t;
  t.query = std::move(query);
  t.positive = std::move(positive);
  t.negative = std::move(negative);
  t.type = type;
  t.source = source;
  ctx.candidates.push_back({std::move(t), group});
  ++ctx.stats[source].triples;
}

// The meaning-preserving rewrite of `sentence`: passive, else synonym.
std::optional<std::string> make_positive(Context& ctx, const std::string& sentence, perturb::Rng& rng,
                                         SourceStats& st) {
  for (auto* gen : {ctx.passive.get(), ctx.synonym.get()}) {
    auto p = gen->apply(sentence, rng);
    if (p && distinct(p->text, sentence)) {
      ++st.positive_kind[gen->spec()];
      return p->text;
    }
  }
  return std::nullopt;
}

// A prose sentence (SciFact claim, text corpus): one positive, then one
// triple per negative generator that applies.
void generate_from_sentence(Context& ctx, const std::string& sentence, const std::string& source,
                            Progress& progress) {
  check_interrupt();
  progress.add();
  auto& st = ctx.stats[source];
  auto rng = rng_for(ctx.options.seed, sentence);
  auto positive = make_positive(ctx, sentence, rng, st);
  if (!positive) {
    ++st.skipped["no_positive"];
    return;
  }
  const std::string group = source + ":" + normalize_sentence(sentence);
  for (auto& [type, gen] : ctx.negatives) {
    auto n = gen->apply(sentence, rng);
    if (!n) {
      ++st.skipped[type + ":" + perturb::Perturber::skip_reason()];
      continue;
    }
    if (!distinct(n->text, sentence) || !distinct(n->text, *positive)) {
      ++st.skipped[type + ":same_text"];
      continue;
    }
    add_triple(ctx, sentence, *positive, n->text, type, source, group);
  }
}

// Targeted pass (BuildOptions::max_targeted): only the role_swap and numeric
// negatives are tried; the positive is made only when one of them applies.
void generate_targeted(Context& ctx, const std::string& sentence, const std::string& source,
                       Progress& progress) {
  check_interrupt();
  progress.add();
  auto& st = ctx.stats[source];
  auto rng = rng_for(ctx.options.seed, sentence);
  std::vector<std::pair<std::string, std::string>> negatives;  // type, text
  for (auto& [type, gen] : ctx.negatives) {
    if (type != "role_swap" && type != "numeric") continue;
    auto n = gen->apply(sentence, rng);
    if (!n) {
      ++st.skipped["targeted:" + type + ":" + perturb::Perturber::skip_reason()];
      continue;
    }
    if (!distinct(n->text, sentence)) {
      ++st.skipped["targeted:" + type + ":same_text"];
      continue;
    }
    negatives.emplace_back(type, n->text);
  }
  if (negatives.empty()) return;
  auto positive = make_positive(ctx, sentence, rng, st);
  if (!positive) {
    ++st.skipped["targeted:no_positive"];
    return;
  }
  const std::string group = source + ":" + normalize_sentence(sentence);
  for (auto& [type, text] : negatives) {
    if (!distinct(text, *positive)) {
      ++st.skipped["targeted:" + type + ":same_text"];
      continue;
    }
    add_triple(ctx, sentence, *positive, text, type, source, group);
  }
}

void read_scifact(Context& ctx, Progress* progress, std::vector<std::string>* out) {
  const std::string path = ctx.options.data_root + "/beir/scifact/queries.jsonl";
  hash_file(ctx, path);
  std::vector<std::string> claims;
  for (auto& q : data::load_queries(path)) claims.push_back(q.text);
  auto& st = ctx.stats["scifact"];
  st.inputs = claims.size();
  std::vector<std::string> kept;
  for (auto& c : claims) {
    std::string why;
    if (usable_prose_sentence(c, 3, ctx.options.max_words, &why)) kept.push_back(std::move(c));
    else ++st.skipped["filter:" + why];
  }
  *out = sample(std::move(kept), ctx.options.max_scifact, ctx.options.seed, [](auto& s) { return s; });
  st.sampled = out->size();
  (void)progress;
}

struct CannotPair {
  std::string sentence, negated;
};

// CANNOT TSVs: header "sentence<TAB>negated" (pairs), or
// "premise<TAB>hypothesis<TAB>label" where label 1 = negation (others skipped).
std::vector<CannotPair> read_cannot(Context& ctx) {
  const std::string dir = ctx.options.data_root + "/nearmiss/cannot";
  VERITY_CHECK(is_directory(dir), ConfigError, "CANNOT data not found: ", dir);
  std::vector<std::string> files;
  for (auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".tsv") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  auto& st = ctx.stats["cannot"];
  std::vector<CannotPair> pairs;
  std::unordered_set<std::string> seen;
  for (const auto& path : files) {
    hash_file(ctx, path);
    bool labelled = false;
    for_each_line(path, [&](std::string_view line, size_t line_no) {
      std::vector<std::string_view> cols;
      for (size_t b = 0;;) {
        size_t e = line.find('\t', b);
        cols.push_back(line.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b));
        if (e == std::string_view::npos) break;
        b = e + 1;
      }
      if (line_no == 1) {
        if (cols.size() == 3 && cols[0] == "premise" && cols[2] == "label") labelled = true;
        else
          VERITY_CHECK(cols.size() == 2 && cols[0] == "sentence" && cols[1] == "negated", FormatError,
                       path, ":1: expected header \"sentence<TAB>negated\" or \"premise<TAB>hypothesis<TAB>label\"");
        return;
      }
      if (cols.size() != (labelled ? 3u : 2u)) {
        ++st.skipped["bad_columns"];
        return;
      }
      if (labelled && cols[2] != "1") {
        ++st.skipped["not_negation_label"];
        return;
      }
      ++st.inputs;
      CannotPair p{std::string(cols[0]), std::string(cols[1])};
      std::string why;
      if (!usable_prose_sentence(p.sentence, 3, ctx.options.max_words, &why) ||
          !usable_prose_sentence(p.negated, 3, ctx.options.max_words, &why)) {
        ++st.skipped["filter:" + why];
        return;
      }
      if (!distinct(p.sentence, p.negated)) {
        ++st.skipped["same_text"];
        return;
      }
      if (!seen.insert(normalize_sentence(p.sentence) + '\t' + normalize_sentence(p.negated)).second) {
        ++st.skipped["duplicate"];
        return;
      }
      pairs.push_back(std::move(p));
    });
  }
  pairs = sample(std::move(pairs), ctx.options.max_cannot, ctx.options.seed,
                 [](const CannotPair& p) { return p.sentence + '\t' + p.negated; });
  st.sampled = pairs.size();
  return pairs;
}

// Sentences of every .txt file in a text corpus directory (sorted names;
// moby-dick's data.txt repeats the chapters and is left out).
// The first max_text sentences of the seeded order are the main sample,
// the next max_targeted go to *targeted (the targeted pass).
std::vector<std::string> read_text_corpus(Context& ctx, const std::string& name,
                                          std::vector<std::string>* targeted) {
  const std::string dir = ctx.options.data_root + "/text/" + name;
  VERITY_CHECK(is_directory(dir), ConfigError, "text corpus not found: ", dir);
  std::vector<std::string> files;
  for (auto& e : fs::directory_iterator(dir)) {
    auto fname = e.path().filename().string();
    if (e.path().extension() != ".txt" || fname == "data.txt" || fname == "contents.txt") continue;
    files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  auto& st = ctx.stats[name];
  std::vector<std::string> kept;
  std::unordered_set<std::string> seen;
  for (const auto& path : files) {
    hash_file(ctx, path);
    for (auto& s : split_sentences(read_file(path))) {
      ++st.inputs;
      std::string why;
      if (!usable_prose_sentence(s, ctx.options.min_words, ctx.options.max_words, &why)) {
        ++st.skipped["filter:" + why];
        continue;
      }
      if (!seen.insert(normalize_sentence(s)).second) {
        ++st.skipped["duplicate"];
        continue;
      }
      kept.push_back(std::move(s));
    }
  }
  kept = sample(std::move(kept), 0, ctx.options.seed, [](auto& s) { return s; });
  const size_t main = ctx.options.max_text == 0 ? kept.size() : std::min(kept.size(), ctx.options.max_text);
  const size_t extra = std::min(kept.size() - main, ctx.options.max_targeted);
  targeted->assign(std::make_move_iterator(kept.begin() + long(main)),
                   std::make_move_iterator(kept.begin() + long(main + extra)));
  kept.resize(main);
  st.sampled = kept.size();
  st.targeted = targeted->size();
  return kept;
}

// StepGame: every story sentence with a converse (positive) and a spatial
// perturbation (negative) gives one triple; a story is one split group.
void generate_stepgame(Context& ctx) {
  const std::string dir = ctx.options.data_root + "/nearmiss/stepgame";
  VERITY_CHECK(is_directory(dir), ConfigError, "StepGame data not found: ", dir);
  std::vector<std::string> files;
  for (auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  struct Story {
    std::string key;
    std::vector<std::string> sentences;
  };
  std::vector<Story> stories;
  for (const auto& path : files) {
    hash_file(ctx, path);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(read_file(path));
    } catch (const nlohmann::json::exception& e) {
      throw FormatError(cat(path, ": invalid JSON: ", e.what()));
    }
    VERITY_CHECK(j.is_object(), FormatError, path, ": expected an object of stories");
    const std::string stem = fs::path(path).stem().string();
    for (auto& [id, story] : j.items()) {
      VERITY_CHECK(story.is_object() && story.contains("story") && story["story"].is_array(), FormatError,
                   path, ": story \"", id, "\": expected an object with an array field \"story\"");
      Story s{"stepgame:" + stem + ":" + id, {}};
      for (auto& sentence : story["story"]) {
        VERITY_CHECK(sentence.is_string(), FormatError, path, ": story \"", id,
                     "\": field \"story\" must hold strings");
        s.sentences.push_back(sentence.get<std::string>());
      }
      stories.push_back(std::move(s));
    }
  }
  auto& st = ctx.stats["stepgame"];
  st.inputs = stories.size();
  stories = sample(std::move(stories), ctx.options.max_stepgame, ctx.options.seed,
                   [](const Story& s) { return s.key; });
  st.sampled = stories.size();
  auto spatial = perturb::make_perturber("spatial");
  std::unordered_set<std::string> seen_queries;
  for (const auto& story : stories) {
    check_interrupt();
    for (const auto& sentence : story.sentences) {
      std::string why;
      auto converse = spatial_converse(sentence, &why);
      if (!converse) {
        ++st.skipped["converse:" + why];
        continue;
      }
      auto rng = rng_for(ctx.options.seed, sentence);
      auto negative = spatial->apply(sentence, rng);
      if (!negative) {
        ++st.skipped["spatial:" + perturb::Perturber::skip_reason()];
        continue;
      }
      if (!distinct(negative->text, *converse) || !distinct(*converse, sentence)) {
        ++st.skipped["same_text"];
        continue;
      }
      if (!seen_queries.insert(normalize_sentence(sentence)).second) {
        ++st.skipped["duplicate"];
        continue;
      }
      add_triple(ctx, sentence, *converse, negative->text, "spatial", "stepgame", story.key);
    }
  }
}

bool wants(const BuildOptions& o, const std::string& source) {
  return std::find(o.sources.begin(), o.sources.end(), source) != o.sources.end();
}

}  // namespace

std::vector<std::string> nearmiss_sources() { return {"scifact", "cannot", "stepgame", "sotu", "moby-dick"}; }

BuildResult build_nearmiss(const BuildOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  VERITY_CHECK(!options.out_dir.empty(), ConfigError, "nearmiss-build: an output directory is required");
  VERITY_CHECK(is_directory(options.data_root), ConfigError, "nearmiss-build: data root '",
               options.data_root, "' is not a directory");
  const auto valid = nearmiss_sources();
  for (const auto& s : options.sources)
    VERITY_CHECK(std::find(valid.begin(), valid.end(), s) != valid.end(), ConfigError,
                 "nearmiss-build: unknown source '", s, "' (valid: scifact, cannot, stepgame, sotu, moby-dick)");
  VERITY_CHECK(options.min_words >= 1 && options.min_words <= options.max_words, ConfigError,
               "nearmiss-build: need 1 <= min_words <= max_words (got ", options.min_words, ", ",
               options.max_words, ")");
  Context ctx(options);

  // Read (cheap) first so the progress bar knows the parse work ahead.
  std::vector<std::string> scifact, sotu, moby, sotu_targeted, moby_targeted;
  std::vector<CannotPair> cannot;
  if (wants(options, "scifact")) read_scifact(ctx, nullptr, &scifact);
  if (wants(options, "cannot")) cannot = read_cannot(ctx);
  if (wants(options, "sotu")) sotu = read_text_corpus(ctx, "sotu", &sotu_targeted);
  if (wants(options, "moby-dick")) moby = read_text_corpus(ctx, "moby-dick", &moby_targeted);
  if (wants(options, "stepgame")) generate_stepgame(ctx);
  const size_t work = scifact.size() + cannot.size() + sotu.size() + moby.size() + sotu_targeted.size() +
                      moby_targeted.size();
  log("nearmiss-build: parsing ", work, " sentences (scifact ", scifact.size(), ", cannot ", cannot.size(),
      ", sotu ", sotu.size(), ", moby-dick ", moby.size(), "; targeted role_swap/numeric: sotu ",
      sotu_targeted.size(), ", moby-dick ", moby_targeted.size(), "); stepgame triples ",
      ctx.stats["stepgame"].triples);
  {
    Progress progress("near-miss triples", work);
    for (const auto& s : scifact) generate_from_sentence(ctx, s, "scifact", progress);
    for (const auto& pair : cannot) {
      check_interrupt();
      progress.add();
      auto& st = ctx.stats["cannot"];
      auto rng = rng_for(options.seed, pair.sentence);
      auto positive = make_positive(ctx, pair.sentence, rng, st);
      if (!positive) {
        ++st.skipped["no_positive"];
        continue;
      }
      if (!distinct(*positive, pair.negated)) {
        ++st.skipped["same_text"];
        continue;
      }
      add_triple(ctx, pair.sentence, *positive, pair.negated, "negation", "cannot",
                 "cannot:" + normalize_sentence(pair.sentence));
    }
    for (const auto& s : sotu) generate_from_sentence(ctx, s, "sotu", progress);
    for (const auto& s : moby) generate_from_sentence(ctx, s, "moby-dick", progress);
    for (const auto& s : sotu_targeted) generate_targeted(ctx, s, "sotu", progress);
    for (const auto& s : moby_targeted) generate_targeted(ctx, s, "moby-dick", progress);
    progress.finish();
  }
  size_t dropped_excluded = 0;
  nlohmann::json excluded_files = nlohmann::json::array();
  if (!options.exclude.empty()) {
    std::unordered_set<std::string> reserved;
    for (const auto& path : options.exclude) {
      auto file = data::read_triples(path);
      for (const auto& t : file.triples)
        for (const std::string* text : {&t.query, &t.positive, &t.negative}) reserved.insert(normalize_sentence(*text));
      excluded_files.push_back({{"path", path}, {"fnv1a64", hex64(file.content_hash)}, {"triples", file.triples.size()}});
    }
    std::erase_if(ctx.candidates, [&](const GroupedTriple& g) {
      const auto& t = g.triple;
      const bool hit = std::ranges::any_of(std::array{&t.query, &t.positive, &t.negative},
                                           [&](const std::string* text) { return reserved.contains(normalize_sentence(*text)); });
      dropped_excluded += hit;
      return hit;
    });
    log("nearmiss-build: dropped ", dropped_excluded, " candidates that share a sentence with --exclude files");
  }
  const size_t candidates = ctx.candidates.size();
  auto assignment = assign_splits(std::move(ctx.candidates), options.ratios, options.seed);

  // Caps per type and split: dev/test scaled by their ratio to train.
  std::array<size_t, 3> caps{options.max_per_type, 0, 0};
  std::array<size_t, 3> dropped_by_cap{};
  for (size_t s : {kDev, kTest}) {
    double ratio = s == kDev ? options.ratios.dev : options.ratios.test;
    caps[s] = options.max_per_type == 0 || options.ratios.train <= 0
                  ? options.max_per_type
                  : std::max<size_t>(1, static_cast<size_t>(std::llround(
                                            static_cast<double>(options.max_per_type) * ratio /
                                            options.ratios.train)));
  }
  for (size_t s = 0; s < 3; ++s)
    dropped_by_cap[s] = cap_per_type(assignment.splits[s], caps[s], options.seed + s);
  for (size_t s = 0; s < 3; ++s)
    for (const auto& t : assignment.splits[s])
      VERITY_CHECK(distinct(t.query, t.positive), Error, "nearmiss-build: positive equals the query: \"",
                   t.query, "\"");
  check_disjoint(assignment.splits);
  check_interrupt();

  // Manifest.
  nlohmann::json counts = nlohmann::json::object();
  BuildResult result;
  for (size_t s = 0; s < 3; ++s) {
    std::map<std::string, std::map<std::string, size_t>> by;
    for (const auto& t : assignment.splits[s]) ++by[t.type][t.source];
    counts[kSplitNames[s]] = {{"total", assignment.splits[s].size()}, {"by_type_source", by}};
    result.counts[s] = assignment.splits[s].size();
  }
  nlohmann::json sources = nlohmann::json::object();
  for (const auto& [name, st] : ctx.stats)
    sources[name] = {{"inputs", st.inputs},     {"sampled", st.sampled}, {"targeted", st.targeted},
                     {"triples", st.triples},   {"skipped", st.skipped},
                     {"positive_kind", st.positive_kind}};
  nlohmann::json inputs = nlohmann::json::array();
  for (const auto& f : ctx.inputs) {
    inputs.push_back({{"path", f.path}, {"fnv1a64", hex64(f.fnv1a64)}});
  }
  nlohmann::json manifest = {
      {"format", "verity-nearmiss-triples"},
      {"version", 1},
      {"command", options.command_line},
      {"seed", options.seed},
      {"data_root", options.data_root},
      {"ratios", {{"train", options.ratios.train}, {"dev", options.ratios.dev}, {"test", options.ratios.test}}},
      {"max_per_type", {{"train", caps[0]}, {"dev", caps[1]}, {"test", caps[2]}}},
      {"input_caps",
       {{"scifact", options.max_scifact}, {"cannot", options.max_cannot}, {"text", options.max_text},
        {"stepgame", options.max_stepgame}, {"targeted", options.max_targeted}, {"min_words", options.min_words}, {"max_words", options.max_words}}},
      {"generators",
       {{"positive", {"passive", "synonym", kConverseSpec}}, {"negative", {"negation", "role_swap", "spatial", "numeric"}},
        {"negative_cannot", "cannot:negated"}}},
      {"candidates", candidates},
      {"exclude", excluded_files},
      {"dropped_excluded", dropped_excluded},
      {"dropped_cross_split", assignment.dropped_cross_split},
      {"dropped_cross_split_by_source", assignment.dropped_cross_split_by_source},
      {"dropped_by_cap", {{"train", dropped_by_cap[0]}, {"dev", dropped_by_cap[1]}, {"test", dropped_by_cap[2]}}},
      {"counts", counts},
      {"sources", sources},
      {"inputs", inputs},
      {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()}};

  make_directories(options.out_dir);
  for (size_t s = 0; s < 3; ++s)
    data::write_triples(options.out_dir + "/" + kSplitNames[s] + ".jsonl", assignment.splits[s]);
  result.manifest_json = manifest.dump(2) + "\n";
  write_file_atomic(options.out_dir + "/manifest.json", result.manifest_json);
  return result;
}

}  // namespace verity::nearmiss
