#pragma once
// Shared by the torch benchmarks (encode_bench, sgemm_ceiling): provenance for
// the JSON they print, timing with CPU-time accounting, and the OpenMP
// environment fix-up. Bench-only; pulls in nlohmann/json.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace verity::bench {

// libgomp reads OMP_* in a constructor that runs before main, so a setenv()
// in main is too late; re-executing the binary once with the variable set is
// the only way to get passive waiting (no ~ms spin after every parallel
// region, which on 2 shared cores steals time from the next region).
inline void reexec_with_passive_omp_wait(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  setenv("OMP_WAIT_POLICY", "passive", 1);
  execv("/proc/self/exe", argv);
  std::perror("execv /proc/self/exe (continuing without OMP_WAIT_POLICY=passive)");
}

inline std::string popen_text(const std::string& cmd) {
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[256];
    while (fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

inline std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

inline std::vector<double> loadavg() {
  std::ifstream in("/proc/loadavg");
  std::vector<double> v(3, -1.0);
  in >> v[0] >> v[1] >> v[2];
  return v;
}

// BLAS shared objects actually mapped into this process (the truth, whatever
// the alternatives system says).
inline std::vector<std::string> loaded_blas_libraries() {
  std::ifstream in("/proc/self/maps");
  std::set<std::string> libs;
  for (std::string line; std::getline(in, line);) {
    auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    std::string path = line.substr(slash);
    if (path.find("blas") != std::string::npos || path.find("mkl") != std::string::npos ||
        path.find("lapack") != std::string::npos)
      libs.insert(path);
  }
  return {libs.begin(), libs.end()};
}

inline nlohmann::json provenance(int argc, char** argv, const char* build_type) {
  std::vector<std::string> args(argv, argv + argc);
  char date[32];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  const char* wait = std::getenv("OMP_WAIT_POLICY");
  return {
      {"argv", args},
      {"git_sha", popen_text(cat("git -C '", VERITY_SOURCE_DIR, "' rev-parse HEAD 2>/dev/null"))},
      {"git_dirty", !popen_text(cat("git -C '", VERITY_SOURCE_DIR,
                                    "' status --porcelain --untracked-files=no 2>/dev/null"))
                         .empty()},
      {"build_type", build_type},
      {"cpu_model", cpu_model()},
      {"nproc", sysconf(_SC_NPROCESSORS_ONLN)},
      {"date", date},
      {"omp_wait_policy", wait ? wait : "(unset)"},
      {"blas_alternative",
       popen_text("update-alternatives --display libblas.so.3-x86_64-linux-gnu 2>/dev/null | "
                  "grep 'link currently points to' | sed 's/.*points to //'")},
      {"blas_loaded", loaded_blas_libraries()},
  };
}

using Clock = std::chrono::steady_clock;

inline double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

struct Timing {
  std::vector<double> seconds;      // wall time per repeat
  std::vector<double> cpu_seconds;  // process CPU time per repeat (all threads)
  double median() const {
    auto s = seconds;
    std::sort(s.begin(), s.end());
    return s[s.size() / 2];
  }
  // ~threads when the run had the cores to itself; lower means it was starved
  // (shared machine) or serialized.
  double cpu_per_wall() const {
    double w = 0, c = 0;
    for (size_t i = 0; i < seconds.size(); ++i) w += seconds[i], c += cpu_seconds[i];
    return w > 0 ? c / w : 0;
  }
  // Work per CPU-second: less sensitive to other processes on a shared
  // machine than work per wall-second (spin-waiting would inflate CPU time,
  // hence OMP_WAIT_POLICY=passive).
  double per_cpu_second(double work_per_run) const {
    double c = 0;
    for (double x : cpu_seconds) c += x;
    return c > 0 ? work_per_run * double(cpu_seconds.size()) / c : 0;
  }
};

// Calls fn() `warmup` times untimed, then `repeat` times timed.
template <typename Fn>
Timing time_runs(int warmup, int repeat, Fn&& fn) {
  for (int i = 0; i < warmup; ++i) fn();
  Timing t;
  for (int i = 0; i < repeat; ++i) {
    double c0 = process_cpu_seconds();
    auto t0 = Clock::now();
    fn();
    t.seconds.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    t.cpu_seconds.push_back(process_cpu_seconds() - c0);
  }
  return t;
}

// The non-empty items of a comma-separated option value.
inline std::vector<std::string> split_commas(const std::string& list) {
  std::vector<std::string> items;
  for (size_t p = 0; p <= list.size();) {
    size_t q = std::min(list.find(',', p), list.size());
    if (q > p) items.push_back(list.substr(p, q - p));
    p = q + 1;
  }
  return items;
}

// Parses "32x128,64x32" into (batch, tokens) pairs; throws ConfigError naming the option.
inline std::vector<std::pair<int64_t, int64_t>> parse_shapes(const std::string& spec,
                                                              const std::string& option) {
  std::vector<std::pair<int64_t, int64_t>> shapes;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    std::string item = spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t x = item.find('x');
    long long b = 0, t = 0;
    char tail = 0;
    VERITY_CHECK(x != std::string::npos &&
                     std::sscanf(item.c_str(), "%lldx%lld%c", &b, &t, &tail) == 2 && b > 0 && t > 0,
                 ConfigError, option, ": '", item, "' is not BATCHxTOKENS (e.g. 32x128)");
    shapes.emplace_back(b, t);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return shapes;
}

}  // namespace verity::bench
