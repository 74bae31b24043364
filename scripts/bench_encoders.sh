#!/usr/bin/env bash
# Encoder speed, end to end: builds the benchmark targets, makes a random
# MiniLM-L6-shaped BERT (+ its ONNX export) in a temp dir, then measures
#   1. the sgemm ceiling through libtorch's BLAS  (verity_bench_sgemm)
#   2. libtorch USE-lite and BERT                  (verity_bench_encode)
#   3. ONNX Runtime on the same BERT graph         (tools/reference/bench_onnx.mjs),
#      with its default spin-waiting threads and again without
# one after another (never concurrently), and writes a JSON summary with the
# three raw reports, sentences/s, GFLOP/s as a fraction of the ceiling and
# the ONNX Runtime / libtorch ratios to OUT_JSON (and prints it).
#
#   scripts/bench_encoders.sh OUT_JSON [--threads 2] [--repeat 5] [--warmup 2]
#                             [--shapes 32x128,64x32]
# Env: BUILD_DIR (default <repo>/build), PYTHON (default /usr/bin/python3, the
# Debian one that has torch).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$repo/build}"
python="${PYTHON:-/usr/bin/python3}"
usage="usage: $0 OUT_JSON [--threads N] [--repeat N] [--warmup N] [--shapes BxT,...]"

[[ $# -ge 1 && $1 != -* ]] || { echo "$usage" >&2; exit 2; }
out="$1"; shift
threads=2 repeat=5 warmup=2 shapes=32x128,64x32
while [[ $# -gt 0 ]]; do
  [[ $# -ge 2 ]] || { echo "option $1 needs a value; $usage" >&2; exit 2; }
  case "$1" in
    --threads) threads="$2" ;;
    --repeat) repeat="$2" ;;
    --warmup) warmup="$2" ;;
    --shapes) shapes="$2" ;;
    *) echo "unknown option '$1'; $usage" >&2; exit 2 ;;
  esac
  shift 2
done

ort_pkg="$repo/tools/reference/node_modules/onnxruntime-node"
[[ -f "$ort_pkg/package.json" ]] || {
  echo "$ort_pkg missing: cd tools/reference && npm install --ignore-scripts onnxruntime-node" >&2; exit 1; }
[[ -f "$build/build.ninja" || -f "$build/Makefile" ]] || cmake -S "$repo" -B "$build" -G Ninja
cmake --build "$build" --target verity_bench_encode verity_bench_sgemm

tmp="$(mktemp -d "${TMPDIR:-/tmp}/verity_bench_encoders.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

echo "== making the MiniLM-shaped model in $tmp/minilm" >&2
"$python" "$repo/tools/reference/make_minilm_shaped.py" "$tmp/minilm" >&2
common=(--threads "$threads" --repeat "$repeat" --warmup "$warmup")

echo "== sgemm ceiling" >&2
"$build/bench/verity_bench_sgemm" "${common[@]}" > "$tmp/sgemm.json"
echo "== libtorch encoders" >&2
"$build/bench/verity_bench_encode" "${common[@]}" --shapes "$shapes" --bert "$tmp/minilm" > "$tmp/libtorch.json"
echo "== onnxruntime" >&2
node "$repo/tools/reference/bench_onnx.mjs" "$tmp/minilm" "${common[@]}" \
  --shapes "$shapes" > "$tmp/onnxruntime.json"
echo "== onnxruntime without spin-waiting (as libtorch runs: OMP_WAIT_POLICY=passive)" >&2
node "$repo/tools/reference/bench_onnx.mjs" "$tmp/minilm" "${common[@]}" \
  --shapes "$shapes" --opt-levels all --allow-spinning 0 > "$tmp/onnxruntime_nospin.json"

"$python" - "$tmp" "$out.tmp" "$0 $*" <<'EOF'
import json, os, sys
tmp, out, command = sys.argv[1], sys.argv[2], sys.argv[3]
load = lambda name: json.load(open(os.path.join(tmp, name)))
sgemm, torch_run, ort_run = load("sgemm.json"), load("libtorch.json"), load("onnxruntime.json")
ort_nospin = load("onnxruntime_nospin.json")
ceiling = sgemm["ceiling_gflops_per_s"]
rows = []
for section in ("bert", "use_lite"):
    for m in torch_run.get(section, {}).get("measurements", []):
        rows.append(dict(m))
rows += [dict(m) for m in ort_run["measurements"] + ort_nospin["measurements"]]
for r in rows:
    r["fraction_of_sgemm_ceiling"] = r["gflops_per_s"] / ceiling
    r.pop("seconds_all", None)
ratios = []
for m in ort_run["measurements"] + ort_nospin["measurements"]:
    for t in torch_run.get("bert", {}).get("measurements", []):
        if t["what"] == "forward" and (t["batch"], t["tokens"]) == (m["batch"], m["tokens"]):
            ratios.append({"batch": m["batch"], "tokens": m["tokens"],
                           "onnxruntime_graph_optimization": m["graph_optimization"],
                           "onnxruntime_allow_spinning": m["allow_spinning"],
                           "onnxruntime_over_libtorch_forward": m["sentences_per_s"] / t["sentences_per_s"],
                           "per_cpu_second": m["gflops_per_cpu_s"] / t["gflops_per_cpu_s"]})
summary = {
    "command": command,
    "git_sha": torch_run["git_sha"], "git_dirty": torch_run["git_dirty"],
    "build_type": torch_run["build_type"], "cpu_model": torch_run["cpu_model"],
    "nproc": torch_run["nproc"], "date": torch_run["date"],
    "blas_alternative": torch_run["blas_alternative"], "blas_loaded": torch_run["blas_loaded"],
    "threads": torch_run["threads"],
    "loadavg": {"sgemm": [sgemm["loadavg_start"], sgemm["loadavg_end"]],
                "libtorch": [torch_run["loadavg_start"], torch_run["loadavg_end"]],
                "onnxruntime": [ort_run["loadavg_start"], ort_run["loadavg_end"]],
                "onnxruntime_nospin": [ort_nospin["loadavg_start"], ort_nospin["loadavg_end"]]},
    "sgemm_ceiling_gflops_per_s": ceiling,
    "sgemm_ceiling_gflops_per_cpu_s": sgemm["ceiling_gflops_per_cpu_s"],
    "table": rows,
    "onnxruntime_over_libtorch": ratios,
    "raw": {"sgemm": sgemm, "libtorch": torch_run, "onnxruntime": ort_run,
            "onnxruntime_nospin": ort_nospin},
}
with open(out, "w") as f:
    json.dump(summary, f, indent=2)
    f.write("\n")
    f.flush()
    os.fsync(f.fileno())
EOF
mv "$out.tmp" "$out"
"$python" - "$out" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"sgemm ceiling {s['sgemm_ceiling_gflops_per_s']:.1f} GFLOP/s "
      f"({s['sgemm_ceiling_gflops_per_cpu_s']:.1f} per CPU-second), BLAS {s['blas_alternative']}")
for r in s["table"]:
    ort = f"{r['graph_optimization']}/spin={r['allow_spinning']}" if "allow_spinning" in r else ""
    name = f"{r['model']:13s} {r['runtime']:11s} {r['what']:7s} {ort:12s}"
    print(f"{name} {r['batch']:3d}x{r['tokens']:<4d} {r['sentences_per_s']:8.1f} sent/s "
          f"{r['gflops_per_s']:7.1f} GFLOP/s ({100 * r['fraction_of_sgemm_ceiling']:.0f}% of ceiling) "
          f"cpu/wall {r['cpu_per_wall']:.2f}, {r['gflops_per_cpu_s']:.1f} GFLOP per CPU-s")
for r in s["onnxruntime_over_libtorch"]:
    print(f"onnxruntime({r['onnxruntime_graph_optimization']}, spin={r['onnxruntime_allow_spinning']}) / "
          f"libtorch forward at {r['batch']}x{r['tokens']}: {r['onnxruntime_over_libtorch_forward']:.2f} "
          f"(per CPU-second {r['per_cpu_second']:.2f})")
print(f"loadavg: {s['loadavg']}")
EOF
echo "summary written to $out" >&2
