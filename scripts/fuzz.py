#!/usr/bin/python3
"""Runs the libFuzzer harnesses of build-asan/fuzz one after another (scripts/fuzz.sh).

Each target runs on its working corpus <build>/fuzz-corpus/<name> (kept between runs)
plus the committed seeds fuzz/seeds/<name>, for SECONDS of wall time, or with --cpu for
SECONDS of its own CPU time (measured from /proc; the run is then stopped with SIGINT,
which libFuzzer handles by printing its final stats). Prints one JSON report and writes
it to --out; exits 1 when any target produced a crash, leak, timeout or OOM artifact.
"""
import argparse
import concurrent.futures
import datetime
import glob
import json
import os
import re
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICK = os.sysconf("SC_CLK_TCK")

# Per-target libFuzzer options: the perturbers parse with Link Grammar, whose cost
# grows fast with sentence length; HTTP bodies run real pipelines.
EXTRA = {
    "perturb": ["-max_len=400"],
    "http_search": ["-max_len=2048"],
    "http_verify": ["-max_len=2048"],
    "http_cache_put": ["-max_len=2048"],
    "http_cache_lookup": ["-max_len=2048"],
    "http_cache_remove": ["-max_len=64"],
    "http_cache_clear": ["-max_len=512"],
    "http_framing": ["-max_len=4096"],
    "tfjs_model": ["-max_len=4096"],
}


def cpu_seconds(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime
    except (OSError, IndexError, ValueError):
        return None


def run_target(binary, name, seconds, cpu_mode, build, nice):
    corpus = os.path.join(build, "fuzz-corpus", name)
    artifacts = os.path.join(build, "fuzz-artifacts", name)
    os.makedirs(corpus, exist_ok=True)
    os.makedirs(artifacts, exist_ok=True)
    before = set(os.listdir(artifacts))
    seeds = os.path.join(ROOT, "fuzz", "seeds", name)
    cmd = ["nice", "-n", str(nice), binary, "-timeout=30", "-rss_limit_mb=4096", "-print_final_stats=1",
           f"-artifact_prefix={artifacts}/", f"-max_total_time={seconds * 20 if cpu_mode else seconds}"]
    cmd += EXTRA.get(name, []) + [corpus] + ([seeds] if os.path.isdir(seeds) else [])
    log_path = os.path.join(build, "fuzz-logs", name + ".log")
    os.makedirs(os.path.dirname(log_path), exist_ok=True)
    start = time.time()
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        cpu, interrupted = 0.0, False
        while proc.poll() is None:
            time.sleep(1)
            c = cpu_seconds(proc.pid)
            # nice execs the fuzzer in place, so the pid is the fuzzer's own
            if c is not None:
                cpu = c
            if cpu_mode and cpu >= seconds and not interrupted:
                proc.send_signal(signal.SIGINT)
                interrupted = True
        rc = proc.returncode
    wall = time.time() - start
    text = open(log_path, errors="replace").read()
    stats = dict(re.findall(r"stat::(\w+):\s+(\d+)", text))
    progress = re.findall(r"#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+) corp: (\d+)", text)
    new_artifacts = sorted(set(os.listdir(artifacts)) - before)
    found = [a for a in new_artifacts if re.match(r"(crash|leak|timeout|oom|slow-unit)-", a)]
    bad = [a for a in found if not a.startswith("slow-unit-")]
    return {
        "target": name,
        "cpu_s": round(cpu, 1),
        "wall_s": round(wall, 1),
        "execs": int(stats.get("number_of_executed_units", progress[-1][0] if progress else 0)),
        "cov": int(progress[-1][1]) if progress else None,
        "ft": int(progress[-1][2]) if progress else None,
        "corpus_files": len(os.listdir(corpus)),
        "peak_rss_mb": int(stats["peak_rss_mb"]) if "peak_rss_mb" in stats else None,
        "exit_code": rc,
        "interrupted_at_budget": interrupted,
        "artifacts": [os.path.join(artifacts, a) for a in found],
        "ok": not bad and (rc == 0 or interrupted),
        "log": log_path,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("seconds", nargs="?", type=int, default=60, help="per target (default 60)")
    ap.add_argument("--cpu", action="store_true", help="SECONDS is CPU time, not wall time")
    ap.add_argument("--only", default="", help="comma-separated target names (default: all)")
    ap.add_argument("--build", default=os.environ.get("ASAN_BUILD_DIR", os.path.join(ROOT, "build-asan")))
    ap.add_argument("--nice", type=int, default=15)
    ap.add_argument("--jobs", type=int, default=1, help="targets run at once (each is one process)")
    ap.add_argument("--out", default="", help="report path (default <build>/fuzz-report.json)")
    a = ap.parse_args()
    binaries = sorted(p for p in glob.glob(os.path.join(a.build, "fuzz", "fuzz_*"))
                      if os.access(p, os.X_OK) and not p.endswith("fuzz_make_seeds"))
    names = {os.path.basename(p)[len("fuzz_"):]: p for p in binaries}
    wanted = [n for n in a.only.split(",") if n] or sorted(names)
    missing = [n for n in wanted if n not in names]
    if missing:
        sys.exit(f"fuzz: no harness for {', '.join(missing)} in {a.build}/fuzz (have: {', '.join(sorted(names))})")
    def one(n):
        print(f"fuzz: {n} for {a.seconds} {'CPU' if a.cpu else 'wall'} seconds", file=sys.stderr, flush=True)
        r = run_target(names[n], n, a.seconds, a.cpu, a.build, a.nice)
        print(f"fuzz: {n}: {'ok' if r['ok'] else 'FAILED'} ({r['execs']} execs, {r['cpu_s']} CPU s, "
              f"cov {r['cov']}){' ' + ' '.join(r['artifacts']) if r['artifacts'] else ''}", file=sys.stderr, flush=True)
        return r

    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        results = list(pool.map(one, wanted))
    lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    model = re.search(r"Model name:\s+(.*)", lscpu)
    report = {
        "command": " ".join(["scripts/fuzz.sh"] + sys.argv[1:]),
        "date": datetime.date.today().isoformat(),
        "git_sha": subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True,
                                  text=True).stdout.strip(),
        "cpu": model.group(1) if model else "",
        "mode": "cpu" if a.cpu else "wall",
        "seconds_per_target": a.seconds,
        "jobs": a.jobs,
        "targets": results,
        "all_ok": all(r["ok"] for r in results),
    }
    out = a.out or os.path.join(a.build, "fuzz-report.json")
    with open(out, "w") as f:
        json.dump(report, f, indent=2)
    print(json.dumps(report, indent=2))
    sys.exit(0 if report["all_ok"] else 1)


if __name__ == "__main__":
    main()
