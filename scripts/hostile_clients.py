#!/usr/bin/python3
"""Hostile-client check of verity serve on loopback (a slowloris).

Starts `verity serve` on a BM25 index of tests/fixtures/tiny_beir (built into a temp
dir), keeps SLOW connections open that each send one header byte per second and never
finish (each reconnects as soon as the server cuts it off), and meanwhile probes
GET /health on a fresh connection every 0.25 s. Passes when every probe answers 200
within LIMIT seconds. Prints one JSON report.

  scripts/hostile_clients.py [--slow 64] [--duration 30] [--limit 1.0] [--verity BIN]
                             [--server-args "..."] [--out REPORT.json]
"""
import argparse
import datetime
import json
import os
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def slow_client(port, stop, stats, lock):
    """One slowloris: a request line, then a header that grows by one byte a second."""
    while not stop.is_set():
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
        except OSError:
            with lock:
                stats["connect_failures"] += 1
            time.sleep(0.5)
            continue
        with lock:
            stats["connections"] += 1
            stats["open"] += 1
        try:
            s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            s.settimeout(1.0)
            while not stop.is_set():
                try:
                    if s.recv(4096) == b"":  # closed by the server (after its 408)
                        with lock:
                            stats["cut_off_by_server"] += 1
                        break
                    with lock:
                        stats["answers_read"] += 1
                except socket.timeout:
                    pass
                s.sendall(b"a")
        except OSError:
            with lock:
                stats["cut_off_by_server"] += 1
        finally:
            with lock:
                stats["open"] -= 1
            s.close()


def probe(port, timeout):
    t0 = time.time()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.settimeout(timeout)
            s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else -1
    except (OSError, ValueError, IndexError):
        status = -1
    return status, time.time() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--slow", type=int, default=64, help="slow connections kept open")
    ap.add_argument("--duration", type=float, default=30, help="seconds")
    ap.add_argument("--limit", type=float, default=1.0, help="seconds a /health answer may take")
    ap.add_argument("--verity", default=os.path.join(os.environ.get("BUILD_DIR", os.path.join(ROOT, "build")),
                                                      "verity"))
    ap.add_argument("--server-args", default="", help="extra verity serve flags")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="verity_hostile.")
    server = None
    try:
        index = os.path.join(work, "index")
        subprocess.run([a.verity, "index", "--corpus", os.path.join(ROOT, "tests/fixtures/tiny_beir"), "--out", index,
                        "--quiet"], check=True)
        server = subprocess.Popen([a.verity, "serve", "--index", index, "--port", "0", "--json", "--quiet"] +
                                  shlex.split(a.server_args), stdout=subprocess.PIPE, text=True)
        started = ""
        while True:  # one JSON object, possibly over several lines
            line = server.stdout.readline()
            if not line:
                sys.exit("hostile_clients: the server exited before listening")
            started += line
            try:
                port = json.loads(started)["port"]
                break
            except json.JSONDecodeError:
                continue
        stop, lock = threading.Event(), threading.Lock()
        stats = {"connections": 0, "open": 0, "cut_off_by_server": 0, "connect_failures": 0, "answers_read": 0}
        threads = [threading.Thread(target=slow_client, args=(port, stop, stats, lock), daemon=True)
                   for _ in range(a.slow)]
        for t in threads:
            t.start()
        time.sleep(1.0)  # let them connect and start trickling
        probes, open_samples = [], []
        end = time.time() + a.duration
        while time.time() < end:
            status, seconds = probe(port, timeout=max(2 * a.limit, 2.0))
            probes.append({"status": status, "s": seconds})
            with lock:
                open_samples.append(stats["open"])
            time.sleep(0.25)
        stop.set()
        for t in threads:
            t.join(timeout=5)
        server.terminate()
        rc = server.wait(timeout=30)
        server = None
        lat = sorted(p["s"] for p in probes)
        bad = [p for p in probes if p["status"] != 200 or p["s"] > a.limit]
        report = {
            "check": "GET /health while slow clients trickle headers (slowloris)",
            "command": " ".join(["scripts/hostile_clients.py"] + sys.argv[1:]),
            "date": datetime.date.today().isoformat(),
            "verity": os.path.relpath(a.verity, ROOT),  # relative: reports are committed
            "slow_clients": a.slow, "duration_s": a.duration, "limit_s": a.limit,
            "slow_connections_made": stats["connections"],
            "slow_connections_cut_off_by_server": stats["cut_off_by_server"],
            "slow_connections_open_min": min(open_samples) if open_samples else 0,
            "slow_connections_open_median": statistics.median(open_samples) if open_samples else 0,
            "probes": len(probes),
            "probe_failures": len(bad),
            "health_latency_s": {"p50": round(lat[len(lat) // 2], 4), "p99": round(lat[int(len(lat) * 0.99)], 4),
                                 "max": round(lat[-1], 4)} if lat else None,
            "server_exit_code": rc,
            "loadavg": open("/proc/loadavg").read().split()[:3],
        }
        report["pass"] = not bad and rc == 0 and bool(probes)
        text = json.dumps(report, indent=2)
        print(text)
        if a.out:
            open(a.out, "w").write(text + "\n")
        sys.exit(0 if report["pass"] else 1)
    finally:
        if server is not None:
            server.kill()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
