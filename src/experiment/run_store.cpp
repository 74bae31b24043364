#include "experiment/run_store.hpp"

#include <nlohmann/json.hpp>
#include <set>

#include "core/error.hpp"
#include "core/io.hpp"
#include "core/log.hpp"

namespace verity::experiment {
using nlohmann::json;

RunStore::RunStore(std::string out_dir) : dir_(std::move(out_dir) + "/runs") { make_directories(dir_); }

std::string RunStore::record_path(const std::string &key) const {
  VERITY_CHECK(!key.empty() && key.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                     "0123456789._-") == std::string::npos,
               ConfigError, "run key \"", key, "\" must be non-empty and use only [A-Za-z0-9._-]");
  return dir_ + "/" + key + ".json";
}

std::optional<std::string> RunStore::finished(const RunSpec &run) const {
  std::string path = record_path(run.key);
  if (!file_exists(path)) return std::nullopt;
  json rec;
  try {
    rec = json::parse(read_file(path));
  } catch (const json::exception &) {
    log("run record ", path, " is unreadable; running it again");
    return std::nullopt;
  }
  if (!rec.is_object() || !rec.contains("spec") || !rec.contains("result") ||
      rec["spec"] != json::parse(run.spec)) {
    log("run record ", path, " has a different spec; running it again");
    return std::nullopt;
  }
  return rec["result"].dump();
}

void RunStore::record(const RunSpec &run, const std::string &result_json) const {
  json rec = {{"key", run.key}, {"spec", json::parse(run.spec)}, {"result", json::parse(result_json)}};
  write_file_atomic(record_path(run.key), rec.dump(2) + "\n");
}

std::vector<std::string> run_plan(const RunStore &store, const std::vector<RunSpec> &runs,
                                  const std::function<std::string(const RunSpec &)> &execute,
                                  PlanStats *stats) {
  std::set<std::string> keys;
  for (const auto &r : runs) {
    store.record_path(r.key);  // validates the key
    VERITY_CHECK(keys.insert(r.key).second, ConfigError, "run key \"", r.key, "\" appears twice in the plan");
  }
  PlanStats local;
  std::vector<std::string> results;
  for (size_t i = 0; i < runs.size(); ++i) {
    check_interrupt();
    if (auto done = store.finished(runs[i])) {
      log("[", i + 1, "/", runs.size(), "] ", runs[i].key, ": finished earlier, skipped");
      results.push_back(*done);
      ++local.skipped;
      continue;
    }
    log("[", i + 1, "/", runs.size(), "] ", runs[i].key, ": running");
    std::string result = execute(runs[i]);
    store.record(runs[i], result);
    results.push_back(result);
    ++local.executed;
  }
  if (stats) *stats = local;
  return results;
}

}  // namespace verity::experiment
