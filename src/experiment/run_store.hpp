#pragma once
// Resumable experiment runs. Each finished run is recorded as one file
// <out_dir>/runs/<key>.json = {"key", "spec", "result"} written atomically, so
// an interrupted experiment leaves only whole records; a rerun skips every run
// whose record exists with the same spec (a changed spec is run again).
// Specs and results are JSON texts (the library keeps json out of headers).
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace verity::experiment {

struct RunSpec {
  std::string key;   // unique within the experiment: [A-Za-z0-9._-]+
  std::string spec;  // JSON text describing everything that determines the result
};

class RunStore {
 public:
  explicit RunStore(std::string out_dir);  // creates <out_dir>/runs
  std::string record_path(const std::string &key) const;
  // The recorded result when a record with this key and an equal spec exists.
  std::optional<std::string> finished(const RunSpec &run) const;
  void record(const RunSpec &run, const std::string &result_json) const;

 private:
  std::string dir_;
};

struct PlanStats {
  size_t executed = 0, skipped = 0;
};

// Runs every spec not finished yet, in order, recording each result as soon
// as it is done; returns every run's result (recorded or new) in spec order.
// Logs "[i/N] key" (or "skip") on stderr; checks for SIGINT between runs.
std::vector<std::string> run_plan(const RunStore &store, const std::vector<RunSpec> &runs,
                                  const std::function<std::string(const RunSpec &)> &execute,
                                  PlanStats *stats = nullptr);

}  // namespace verity::experiment
