#!/usr/bin/env bash
# Bounded loopback load run of `verity serve` with wrk (Debian package, see setup.sh).
#   1. uses --index, or builds a BM25+dense+tokens index of SciFact (use-lite) into a
#      temp dir (removed at exit);
#   2. starts `verity serve` on 127.0.0.1 on a free port;
#   3. for each request mix (default: bm25 alone, and hybrid stage 1 + F1 verification)
#      and each connection count (default 2, 8, 16) runs wrk for DURATION seconds with
#      POST /search bodies cycling through the SciFact queries;
#   4. stops the server with SIGTERM (it must exit 0) and prints one JSON summary:
#      requests/s, p50/p99 latency, non-2xx responses and socket errors per run,
#      plus /proc/loadavg before and after (the machine may be shared).
#
#   scripts/load_test.sh [--index DIR] [--verity BIN] [--duration S] [--connections "2 8 16"]
#                        [--mixes "bm25:none hybrid:f1"] [--k 10] [--candidates K] [--out JSON]
# Env: BUILD_DIR (default <repo>/build): where the verity binary is looked for.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
invocation="$0 $*"
verity="${BUILD_DIR:-$repo/build}/verity"
data="$repo/../shared/data/beir/scifact"
index="" duration=10 connections="2 8 16" mixes="bm25:none hybrid:f1" k=10 candidates=20 out=""
usage="usage: $0 [--index DIR] [--verity BIN] [--duration S] [--connections \"2 8 16\"] [--mixes \"bm25:none hybrid:f1\"] [--k N] [--candidates K] [--out JSON]"
source "$repo/scripts/serve_helpers.sh"
parse_value_options "$usage" "index verity duration connections mixes k candidates out" "$@"
[[ "$duration" =~ ^[0-9]+$ && "$duration" -ge 1 && "$duration" -le 60 ]] ||
  { echo "--duration must be 1..60 seconds" >&2; exit 2; }
for c in $connections; do
  [[ "$c" =~ ^[0-9]+$ && "$c" -ge 1 && "$c" -le 64 ]] || { echo "--connections: $c not in 1..64" >&2; exit 2; }
done
serve_check_inputs "$data"

serve_setup load "$data"

# Request bodies: the SciFact queries as JSON strings, one a line, read by the Lua script.
python3 - "$data/queries.jsonl" "$work/queries.txt" <<'EOF'
import json, sys
with open(sys.argv[1]) as f, open(sys.argv[2], "w") as out:
    for line in f:
        if line.strip():
            out.write(json.dumps(json.loads(line)["text"]) + "\n")
EOF
cat >"$work/search.lua" <<'EOF'
-- POST /search with the SciFact queries in turn; each connection starts at its own offset.
local queries = {}
for line in io.lines(os.getenv("LOAD_QUERIES")) do queries[#queries + 1] = line end
local extra = os.getenv("LOAD_FIELDS")
local counter = 0
local thread_offset = 0
function setup(thread) thread_offset = thread_offset + 97; thread:set("offset", thread_offset) end
function init(args) counter = offset or 0 end
request = function()
  counter = counter + 1
  local q = queries[(counter % #queries) + 1]
  return wrk.format("POST", "/search", {["Content-Type"] = "application/json"},
                    '{"query": ' .. q .. extra .. '}')
end
function done(summary, latency, requests)
  io.write(string.format("LOADJSON {\"requests\": %d, \"duration_s\": %.3f, \"rps\": %.2f, " ..
    "\"p50_ms\": %.3f, \"p90_ms\": %.3f, \"p99_ms\": %.3f, \"max_ms\": %.3f, \"non_2xx\": %d, " ..
    "\"connect_errors\": %d, \"read_errors\": %d, \"write_errors\": %d, \"timeouts\": %d}\n",
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1e3, latency:percentile(90) / 1e3, latency:percentile(99) / 1e3,
    latency.max / 1e3, summary.errors.status, summary.errors.connect, summary.errors.read,
    summary.errors.write, summary.errors.timeout))
end
EOF

max_conn=0
for c in $connections; do (( c > max_conn )) && max_conn=$c; done
# As many workers as connections, so no request waits for a worker.
serve_start "$index" --threads "$max_conn" --verifier f1 --candidates "$candidates"

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
runs="[]"
for mix in $mixes; do
  stage1="${mix%%:*}" verifier="${mix##*:}"
  fields=", \"k\": $k, \"stage1\": \"$stage1\", \"verifier\": \"$verifier\""
  # Warm-up: opens the pipeline (model load) outside the measured runs.
  curl -sf -X POST "http://127.0.0.1:$port/search" -H 'Content-Type: application/json' \
    -d "{\"query\": \"warm up\"$fields}" >/dev/null
  for c in $connections; do
    threads=$(( c < 4 ? c : 4 ))
    echo "load_test: $stage1+$verifier, $c connections, ${duration}s" >&2
    report="$(LOAD_QUERIES="$work/queries.txt" LOAD_FIELDS="$fields" \
      timeout $(( duration + 30 )) wrk -t"$threads" -c"$c" -d"${duration}s" --timeout 10s --latency \
      -s "$work/search.lua" "http://127.0.0.1:$port/search")"
    echo "$report" | grep -v '^LOADJSON' >&2
    line="$(echo "$report" | sed -n 's/^LOADJSON //p')"
    runs="$(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); r.append(dict(json.loads(sys.argv[2]), stage1=sys.argv[3], verifier=sys.argv[4], connections=int(sys.argv[5]))); print(json.dumps(r))' \
      "$runs" "$line" "$stage1" "$verifier" "$c")"
  done
done
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"
health="$(curl -sf "http://127.0.0.1:$port/health")"

serve_stop

summary="$(python3 - "$runs" "$health" "$server_rc" "$load_before" "$load_after" "$index" "$duration" "$candidates" "$invocation" "$repo" "$verity" <<'EOF'
import json, os, subprocess, sys
runs, health, rc, before, after, index, duration, candidates, argv, repo, verity = sys.argv[1:]
runs = json.loads(runs)
sha = subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
wrk = subprocess.run(["wrk", "-v"], capture_output=True, text=True).stdout.split("\n")[0]
print(json.dumps({
    "benchmark": "verity serve POST /search, wrk on loopback",
    "argv": argv, "git_sha": sha, "verity": verity, "wrk": wrk,
    "index": index, "duration_s_per_run": int(duration), "candidates_K": int(candidates),
    "cpus": os.cpu_count(), "loadavg_before": before, "loadavg_after": after,
    "runs": runs,
    "total_errors": sum(r["non_2xx"] + r["connect_errors"] + r["read_errors"] + r["write_errors"] +
                        r["timeouts"] for r in runs),
    "server_requests_served": json.loads(health)["served"],
    "server_exit_code": int(rc),
}, indent=2))
EOF
)"
echo "$summary"
[[ -n "$out" ]] && echo "$summary" >"$out"
[[ "$server_rc" == 0 ]] || { echo "load_test: server exited $server_rc" >&2; exit 1; }
