// verity verify: stage 2 alone on texts given on the command line or in a
// file: P(same meaning) and the verdict for each (query, candidate) pair,
// through the same search::TextVerifier as the server's /verify and the Python
// module's verify(), so a pair scores alike in all three.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>
#include <utility>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "core/split_work.hpp"
#include "search/text_verifier.hpp"

namespace verity::cli {
namespace {

struct VerifyArgs {
  CommonFlags common;
  std::string query, input, output;
  std::vector<std::string> candidates;
  search::TextVerifierOptions options;
  size_t workers = 0;  // --input mode: pairs scored at once (0 = one per core)
};

// One line of an --input file: its object (written back, in its own key order,
// with the score and verdict after its fields) and its two texts.
struct InputPair {
  nlohmann::ordered_json object;
  std::string a, b;
  size_t line = 0;
};

std::vector<InputPair> read_input(const std::string& path) {
  std::vector<InputPair> pairs;
  for_each_line(path, [&](std::string_view line, size_t line_no) {
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
    nlohmann::ordered_json j;
    try {
      j = nlohmann::ordered_json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      throw FormatError(cat(path, ":", line_no, ": invalid JSON: ", e.what()));
    }
    VERITY_CHECK(j.is_object(), FormatError, path, ":", line_no, ": expected an object {\"a\", \"b\"}, got ",
                 j.type_name());
    for (const char* field : {"a", "b"}) {
      auto it = j.find(field);
      VERITY_CHECK(it != j.end(), FormatError, path, ":", line_no, ": missing field '", field, "'");
      VERITY_CHECK(it->is_string(), FormatError, path, ":", line_no, ": field '", field,
                   "' must be a string, got ", it->type_name());
    }
    for (const char* field : {"score", "verdict"})
      VERITY_CHECK(!j.contains(field), FormatError, path, ":", line_no, ": field '", field,
                   "' is what verify writes; remove it from the input");
    InputPair p{j, j["a"].get<std::string>(), j["b"].get<std::string>(), line_no};
    pairs.push_back(std::move(p));
  });
  VERITY_CHECK(!pairs.empty(), FormatError, path, ": no pairs (one {\"a\", \"b\"} object per line)");
  return pairs;
}

// The verdict, null without a threshold; Json is the printed or the written (ordered) kind.
template <class Json = nlohmann::json>
Json verdict_json(const search::Verification& v) {
  return v.verdict.empty() ? Json(nullptr) : Json(v.verdict);
}

nlohmann::json threshold_json(const search::TextVerifier& tv) {
  const auto t = tv.threshold();
  return t ? nlohmann::json(*t) : nlohmann::json(nullptr);
}

void verify_texts(const VerifyArgs& a, const search::TextVerifier& tv) {
  const auto start = std::chrono::steady_clock::now();
  const auto verified = tv.verify(a.query, a.candidates);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (a.common.json) {
    nlohmann::json results = nlohmann::json::array();
    for (size_t i = 0; i < verified.size(); ++i)
      results.push_back(
          {{"candidate", a.candidates[i]}, {"score", verified[i].score}, {"verdict", verdict_json(verified[i])}});
    print_json({{"query", a.query},
                {"pipeline", tv.describe()},
                {"threshold", threshold_json(tv)},
                {"results", std::move(results)},
                {"latency_ms", {{"total", ms}}}});
    return;
  }
  // One line per candidate, in order: verdict ("-" without a threshold), score,
  // candidate (its tabs and line breaks shown as spaces, so each stays one line).
  std::string out;
  for (size_t i = 0; i < verified.size(); ++i) {
    const auto& v = verified[i];
    char score[32];
    std::snprintf(score, sizeof score, "%.4f", v.score);
    std::string shown = a.candidates[i];
    std::replace_if(shown.begin(), shown.end(), [](char c) { return c == '\t' || c == '\n' || c == '\r'; }, ' ');
    out += cat(v.verdict.empty() ? "-" : v.verdict, "\t", score, "\t", shown, "\n");
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
}

void verify_file(const VerifyArgs& a, const search::TextVerifier& tv) {
  const auto pairs = read_input(a.input);
  // A run of lines with the same `a` is one call: its text is encoded once.
  std::vector<std::pair<size_t, size_t>> groups;
  for (size_t begin = 0; begin < pairs.size();) {
    size_t end = begin + 1;
    while (end < pairs.size() && pairs[end].a == pairs[begin].a) ++end;
    groups.emplace_back(begin, end);
    begin = end;
  }
  const size_t workers =
      std::max<size_t>(1, std::min<size_t>(a.workers ? a.workers : std::thread::hardware_concurrency(), groups.size()));
  log("verify: ", pairs.size(), " pairs from ", a.input, " on ", workers, " thread(s) with ", tv.describe());
  Progress progress("verify", pairs.size());
  const auto start = std::chrono::steady_clock::now();
  std::vector<search::Verification> verified(pairs.size());
  for_each_on_threads(groups.size(), workers, [&](size_t g) {
    if (interrupt_requested()) return;
    const auto [begin, end] = groups[g];
    std::vector<std::string> candidates;
    for (size_t i = begin; i < end; ++i) candidates.push_back(pairs[i].b);
    std::vector<search::Verification> got;
    try {
      got = tv.verify(pairs[begin].a, candidates);
    } catch (const ConfigError& e) {
      throw ConfigError(cat(a.input, ":", pairs[begin].line, ": field 'a': ", e.what()));
    }
    std::move(got.begin(), got.end(), verified.begin() + ptrdiff_t(begin));
    progress.add(end - begin);
  });
  check_interrupt();
  progress.finish();

  AtomicFileWriter out(a.output);
  size_t matches = 0, near_misses = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const auto& v = verified[i];
    matches += v.verdict == "match";
    near_misses += v.verdict == "near-miss";
    auto line = pairs[i].object;
    line["score"] = v.score;
    line["verdict"] = verdict_json<nlohmann::ordered_json>(v);
    out.write(line.dump() + "\n");
  }
  out.commit();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  log("verify: wrote ", a.output, ": ", matches, " match, ", near_misses, " near-miss");
  if (a.common.json)
    print_json({{"input", a.input},
                {"output", a.output},
                {"pipeline", tv.describe()},
                {"threshold", threshold_json(tv)},
                {"pairs", pairs.size()},
                {"matches", matches},
                {"near_misses", near_misses},
                {"seconds", seconds}});
}

void run_verify(VerifyArgs& a) {
  apply_common_flags(a.common);
  install_interrupt_handler();
  const bool texts = !a.query.empty() || !a.candidates.empty(), file = !a.input.empty() || !a.output.empty();
  VERITY_CHECK(texts != file, ConfigError,
               texts ? "give either --query with --candidate, or --input with --output, not both"
                     : "nothing to verify: give --query with --candidate (repeatable), or --input PAIRS.jsonl "
                       "with --output SCORED.jsonl");
  if (texts) {
    VERITY_CHECK(!a.query.empty(), ConfigError, "--candidate needs --query");
    VERITY_CHECK(!a.candidates.empty(), ConfigError, "--query needs at least one --candidate");
    search::check_query(a.query);  // before the model loads; verify() checks it again
  } else {
    VERITY_CHECK(!a.input.empty(), ConfigError, "--output needs --input");
    VERITY_CHECK(!a.output.empty(), ConfigError, "--input needs --output (the scored pairs are written there)");
  }
  // Scored side by side, each call encodes on its own thread.
  if (file && a.options.threads == 0) a.options.threads = 1;
  search::TextVerifier tv(a.options);
  if (texts)
    verify_texts(a, tv);
  else
    verify_file(a, tv);
}

void setup_verify(CLI::App& app) {
  auto args = std::make_shared<VerifyArgs>();
  auto* cmd = app.add_subcommand(
      "verify", "Verify texts without an index: P(same meaning) and a match / near-miss verdict per pair");
  cmd->add_option("--query", args->query, "The text each candidate is compared with");
  cmd->add_option("--candidate", args->candidates, "A text to verify against --query (repeatable)");
  cmd->add_option("--input", args->input,
                  "Pairs to verify: JSONL, one {\"a\", \"b\", ...} object per line (other fields are kept)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--output", args->output,
                  "Where --input's pairs are written back with \"score\" and \"verdict\" (atomically)");
  cmd->add_option("--verifier", args->options.verifier,
                  "Verifier spec: default | f0 | f1 | f2 | f5:PATH | f3:PATH | f4:PATH | ensemble:PATH")
      ->capture_default_str();
  cmd->add_option("--encoder", args->options.encoder, "Encoder: use-lite | glove | kind:DIR | DIR")
      ->capture_default_str();
  cmd->add_option("--reject-below", args->options.threshold,
                  "Verdict threshold (default: the verifier's calibrated one; F0-F2 have none, so no verdict)");
  cmd->add_option("--threads", args->workers, "--input mode: pairs scored at once (0 = one per core)")
      ->capture_default_str();
  cmd->add_option("--encoder-threads", args->options.threads,
                  "Torch threads per encode call (0 = runtime default; 1 in --input mode)")
      ->capture_default_str();
  add_common_flags(cmd, args->common);
  cmd->callback([args] { run_verify(*args); });
}

VERITY_REGISTER_COMMAND("verify", setup_verify);
}  // namespace
}  // namespace verity::cli
