# Sourced by the scripts that drive `verity serve` (load_test.sh, soak.sh). The serve_*
# functions need $verity and $work set; serve_start sets server_pid and port.

# parse_value_options USAGE "NAME..." ARGS...: each "--NAME VALUE" in ARGS sets the shell
# variable NAME (dashes become underscores); anything else exits 2 with USAGE.
parse_value_options() {
  local usage="$1" names=" $2 " name
  shift 2
  while [[ $# -gt 0 ]]; do
    [[ $# -ge 2 ]] || { echo "option $1 needs a value; $usage" >&2; exit 2; }
    name="${1#--}"
    [[ "$1" == --* && "$names" == *" $name "* ]] || { echo "unknown option $1; $usage" >&2; exit 2; }
    printf -v "${name//-/_}" '%s' "$2"
    shift 2
  done
}

# serve_check_inputs DATA: wrk, the verity binary and the SciFact queries are there.
serve_check_inputs() {
  command -v wrk >/dev/null || { echo "wrk not installed (scripts/setup.sh)" >&2; exit 1; }
  [[ -x "$verity" ]] || { echo "no verity binary at $verity (build it, or pass --verity)" >&2; exit 1; }
  [[ -f "$1/queries.jsonl" ]] || { echo "SciFact not found at $1" >&2; exit 1; }
}

# serve_setup NAME DATA: a work directory $work (/tmp/verity_NAME.*), removed at exit
# together with the server and a $sampler_pid still running; without $index, builds a
# BM25+dense+tokens index of SciFact (use-lite) in it and sets $index.
serve_setup() {
  work="$(mktemp -d "/tmp/verity_$1.XXXXXX")"
  server_pid="" sampler_pid=""
  trap serve_cleanup EXIT
  if [[ -z "$index" ]]; then
    index="$work/scifact"
    echo "$(basename "$0"): building BM25+dense+tokens index of SciFact in $index" >&2
    "$verity" index --corpus "$2" --out "$index" --bm25 --dense --tokens --encoder use-lite --quiet
  fi
}

serve_cleanup() {
  [[ -n "$sampler_pid" ]] && kill "$sampler_pid" 2>/dev/null || true
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then kill -TERM "$server_pid"; wait "$server_pid" || true; fi
  rm -rf "$work"
}

# serve_start INDEX [serve flags...]: starts the server on a free loopback port and waits
# until it listens.
serve_start() {
  local index="$1"
  shift
  "$verity" serve --index "$index" --host 127.0.0.1 --port 0 --json "$@" >"$work/serve.json" 2>"$work/serve.log" &
  server_pid=$!
  for _ in $(seq 1 1200); do
    grep -q '}' "$work/serve.json" 2>/dev/null && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$work/serve.log" >&2; echo "server did not start" >&2; exit 1; }
    sleep 0.1
  done
  port="$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["port"])' "$work/serve.json")"
  echo "$(basename "$0"): server pid $server_pid on 127.0.0.1:$port" >&2
}

# serve_stop: SIGTERM, then the exit status in server_rc.
serve_stop() {
  kill -TERM "$server_pid"
  set +e
  wait "$server_pid"
  server_rc=$?
  set -e
  server_pid=""
}
