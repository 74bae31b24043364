#!/usr/bin/env bash
# Bounded soak run of `verity serve` on loopback: mixed POST /search (BM25 alone;
# hybrid stage 1 + F1), POST /verify, POST /cache/put and POST /cache/lookup requests
# from wrk (the cache capped at 500 entries, so LRU eviction runs), with the connection count
# stepping through PHASES (default 2 4 8 16 32 32 16 8 4 2), for DURATION seconds in
# all (default 600). Before the measured run, WARMUP seconds at the largest connection
# count touch every worker; the server's RSS is sampled every 5 s from then on.
# Prints one JSON report: per phase requests/s, p50/p99 latency, status classes, socket
# errors; 5xx total; RSS at the start of the measured run, at the end and its peak;
# the server's exit code on SIGTERM. Fails unless: zero 5xx, zero socket errors, the
# server alive until SIGTERM and exiting 0, RSS growth under 10%.
#
#   scripts/soak.sh [--index DIR] [--verity BIN] [--duration S] [--phases "2 4 8"] [--warmup S] [--out JSON]
# Without --index, builds a BM25+dense+tokens index of SciFact (use-lite) in a temp dir.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
invocation="$0 $*"
verity="${BUILD_DIR:-$repo/build}/verity"
data="$repo/../shared/data/beir/scifact"
index="" duration=600 phases="2 4 8 16 32 32 16 8 4 2" warmup=30 out=""
usage="usage: $0 [--index DIR] [--verity BIN] [--duration S] [--phases \"2 4 8\"] [--warmup S] [--out JSON]"
source "$repo/scripts/serve_helpers.sh"
parse_value_options "$usage" "index verity duration phases warmup out" "$@"
[[ "$duration" =~ ^[0-9]+$ && "$duration" -ge 10 ]] || { echo "--duration must be >= 10 seconds" >&2; exit 2; }
nphases=0 max_conn=0
for c in $phases; do
  [[ "$c" =~ ^[0-9]+$ && "$c" -ge 1 && "$c" -le 256 ]] || { echo "--phases: $c not in 1..256" >&2; exit 2; }
  nphases=$((nphases + 1)); (( c > max_conn )) && max_conn=$c
done
phase_s=$((duration / nphases))
serve_check_inputs "$data"

serve_setup soak "$data"

# Request bodies, one JSON object a line: the SciFact queries as /search (two pipelines)
# and as /verify against eight candidate texts (other queries).
/usr/bin/python3 - "$data/queries.jsonl" "$work" <<'EOF'
import json, sys
queries = [json.loads(l)["text"] for l in open(sys.argv[1]) if l.strip()]
with open(sys.argv[2] + "/search_bm25.txt", "w") as bm25, open(sys.argv[2] + "/search_hybrid.txt", "w") as hyb, \
        open(sys.argv[2] + "/verify.txt", "w") as ver, open(sys.argv[2] + "/cache_put.txt", "w") as put, \
        open(sys.argv[2] + "/cache_lookup.txt", "w") as look:
    for i, q in enumerate(queries):
        bm25.write(json.dumps({"query": q, "k": 10, "stage1": "bm25", "verifier": "none"}) + "\n")
        hyb.write(json.dumps({"query": q, "k": 10, "stage1": "hybrid", "verifier": "f1"}) + "\n")
        cands = [queries[(i + 7 * j + 1) % len(queries)] for j in range(8)]
        ver.write(json.dumps({"query": q, "candidates": cands, "verifier": "f1"}) + "\n")
        put.write(json.dumps({"prompt": q, "response": f"answer {i}", "ttl_s": 300}) + "\n")
        # lower-cased: not the exact text, so lookups go through the verifier
        look.write(json.dumps({"prompt": q.lower()}) + "\n")
EOF
cat >"$work/soak.lua" <<'EOF'
-- Mixed requests; each response's status class is counted per thread.
local dir = os.getenv("SOAK_DIR")
local function lines(name)
  local t = {}
  for l in io.lines(dir .. "/" .. name) do t[#t + 1] = l end
  return t
end
-- {path, bodies, weight}
local requests = {
  {"/search", lines("search_bm25.txt"), 2},
  {"/search", lines("search_hybrid.txt"), 1},
  {"/verify", lines("verify.txt"), 1},
  {"/cache/put", lines("cache_put.txt"), 1},
  {"/cache/lookup", lines("cache_lookup.txt"), 2},
}
local deck = {}
for i, r in ipairs(requests) do for _ = 1, r[3] do deck[#deck + 1] = i end end
local threads = {}
function setup(thread) thread:set("id", #threads + 1); threads[#threads + 1] = thread end
function init(args)
  counter = (id or 1) * 7919
  s2xx, s3xx, s4xx, s5xx = 0, 0, 0, 0
end
request = function()
  counter = counter + 1
  local r = requests[deck[(counter % #deck) + 1]]
  local body = r[2][math.floor(counter / #deck) % #r[2] + 1]
  return wrk.format("POST", r[1], {["Content-Type"] = "application/json"}, body)
end
response = function(status, headers, body)
  if status >= 500 then s5xx = s5xx + 1 elseif status >= 400 then s4xx = s4xx + 1
  elseif status >= 300 then s3xx = s3xx + 1 else s2xx = s2xx + 1 end
end
function done(summary, latency, requests_)
  local c = {0, 0, 0, 0}
  for _, t in ipairs(threads) do
    c[1] = c[1] + t:get("s2xx"); c[2] = c[2] + t:get("s3xx"); c[3] = c[3] + t:get("s4xx"); c[4] = c[4] + t:get("s5xx")
  end
  io.write(string.format("SOAKJSON {\"requests\": %d, \"duration_s\": %.3f, \"rps\": %.2f, " ..
    "\"p50_ms\": %.3f, \"p99_ms\": %.3f, \"max_ms\": %.3f, \"status_2xx\": %d, \"status_3xx\": %d, " ..
    "\"status_4xx\": %d, \"status_5xx\": %d, \"connect_errors\": %d, \"read_errors\": %d, " ..
    "\"write_errors\": %d, \"timeouts\": %d}\n",
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1e3, latency:percentile(99) / 1e3, latency.max / 1e3, c[1], c[2], c[3], c[4],
    summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.timeout))
end
EOF

serve_start "$index" --verifier f1 --cache "$work/cache.sqlite" --cache-max-entries 500

run_wrk() {  # connections seconds -> SOAKJSON line
  local c="$1" s="$2" threads=$(( $1 < 4 ? $1 : 4 ))
  SOAK_DIR="$work" timeout $(( s + 60 )) wrk -t"$threads" -c"$c" -d"${s}s" --timeout 10s --latency \
    -s "$work/soak.lua" "http://127.0.0.1:$port" | sed -n 's/^SOAKJSON //p'
}
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$server_pid/status"; }

echo "soak: warm-up, $max_conn connections, ${warmup}s" >&2
warm="$(run_wrk "$max_conn" "$warmup")"
rss_start="$(rss_kb)"
( while kill -0 "$server_pid" 2>/dev/null; do echo "$(date +%s) $(rss_kb)"; sleep 5; done ) >"$work/rss.txt" &
sampler_pid=$!
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
: >"$work/phases.jsonl"
for c in $phases; do
  echo "soak: $c connections, ${phase_s}s" >&2
  line="$(run_wrk "$c" "$phase_s")"
  kill -0 "$server_pid" 2>/dev/null || { echo "soak: the server died" >&2; cat "$work/serve.log" >&2; exit 1; }
  echo "{\"connections\": $c, \"wrk\": $line}" >>"$work/phases.jsonl"
done
rss_end="$(rss_kb)"
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"
health="$(curl -sf "http://127.0.0.1:$port/health")"
kill "$sampler_pid" 2>/dev/null || true
sampler_pid=""
serve_stop

/usr/bin/python3 - "$work" "$rss_start" "$rss_end" "$server_rc" "$health" "$warm" "$invocation" "$repo" \
  "$index" "$load_before" "$load_after" "$out" <<'EOF'
import datetime, json, os, subprocess, sys
work, rss_start, rss_end, rc, health, warm, argv, repo, index, before, after, out = sys.argv[1:]
phases = [json.loads(l) for l in open(work + "/phases.jsonl")]
rss = [int(l.split()[1]) for l in open(work + "/rss.txt") if len(l.split()) == 2]
rss_start, rss_end = int(rss_start), int(rss_end)
total = lambda k: sum(p["wrk"][k] for p in phases)
errors = sum(total(k) for k in ("connect_errors", "read_errors", "write_errors", "timeouts"))
growth = (rss_end - rss_start) / rss_start
report = {
    "benchmark": "verity serve soak: mixed /search (bm25, hybrid+f1), /verify (8 candidates, f1), /cache/put and "
                 "/cache/lookup (at most 500 entries), wrk on loopback",
    "argv": argv, "date": datetime.date.today().isoformat(),
    "git_sha": subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip(),
    "index": index, "cpus": os.cpu_count(), "loadavg_before": before, "loadavg_after": after,
    "warmup": json.loads(warm), "phases": phases,
    "requests": total("requests"), "status_5xx": total("status_5xx"), "status_4xx": total("status_4xx"),
    "socket_errors": errors,
    "rss_kb": {"start": rss_start, "end": rss_end, "peak": max(rss + [rss_end]), "growth_pct": round(100 * growth, 2)},
    "server_requests_served": json.loads(health)["served"], "server_exit_code": int(rc),
}
report["pass"] = (report["status_5xx"] == 0 and errors == 0 and int(rc) == 0 and growth < 0.10)
text = json.dumps(report, indent=2)
print(text)
if out:
    open(out, "w").write(text + "\n")
sys.exit(0 if report["pass"] else 1)
EOF
