#!/usr/bin/env python3
"""Probe: does a learned head over the two pooled USE-lite vectors add to F5?

F5 sees the pooled vectors only as their cosine. This trains a small MLP on
[|u - v|, u * v, cosine] of the six shared pair sets' train parts, then, on dev
only, compares per-source AUC of cosine, the head, F5 and a logistic stack of
F5's logit with the head's (5-fold cross-validated on dev, balanced per group).
The near-miss dev triples, as pairs, are a seventh group: the stack must not
serve more of them. Test parts are never read. Commands (docs/RESULTS.md):

  /usr/bin/python3 scripts/pooled_head_probe.py prepare data/pairs data/nearmiss/dev.jsonl out/probe
  build/verity encode --model use-lite --input out/probe/texts.jsonl --output out/probe/emb.jsonl
  build/verity pairs-eval $(for f in out/probe/dev_*.jsonl; do echo --data $f; done) \\
    --verifier default --scores-out out/probe/scores.jsonl --json > out/probe/pairs-eval.json
  /usr/bin/python3 scripts/pooled_head_probe.py probe data/pairs out/probe > out/probe/report.json

Needs numpy and torch (Debian's python3-numpy, python3-torch: /usr/bin/python3).
"""
import json
import os
import random
import sys

SOURCES = ["paws", "qqp", "sick", "mrpc", "apt", "stsb"]
TRAIN_CAP, DEV_CAP = 20000, 3000
# The head's hidden width (0: linear); VERITY_PROBE_HEAD_WIDTH overrides it.
HEAD_WIDTH = int(os.environ.get("VERITY_PROBE_HEAD_WIDTH", "128"))


def read_jsonl(path):
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as e:
                    sys.exit(f"{path}:{n}: {e}")
    return rows


def sample(rows, part):
    rows = list(rows)
    random.Random(1 if part == "train" else 2).shuffle(rows)
    return rows[: TRAIN_CAP if part == "train" else DEV_CAP]


def group_rows(pairs_dir, out_dir, group, part):
    if group == "nearmiss":
        return read_jsonl(os.path.join(out_dir, "dev_nearmiss.jsonl"))
    return sample(read_jsonl(os.path.join(pairs_dir, group, part + ".jsonl")), part)


def prepare(pairs_dir, nearmiss_triples, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    texts = set()

    def write(name, rows):
        with open(os.path.join(out_dir, name + ".tmp"), "w") as f:
            for r in rows:
                f.write(json.dumps({"a": r["a"], "b": r["b"], "label": r["label"]}) + "\n")
        os.replace(os.path.join(out_dir, name + ".tmp"), os.path.join(out_dir, name))

    for s in SOURCES:
        for part in ("train", "dev"):
            rows = sample(read_jsonl(os.path.join(pairs_dir, s, part + ".jsonl")), part)
            texts.update(t for r in rows for t in (r["a"], r["b"]))
            if part == "dev":
                write(f"dev_{s}.jsonl", rows)
    nm = []
    for t in read_jsonl(nearmiss_triples):
        nm += [{"a": t["query"], "b": t["positive"], "label": 1}, {"a": t["query"], "b": t["negative"], "label": 0}]
    write("dev_nearmiss.jsonl", nm)
    texts.update(t for r in nm for t in (r["a"], r["b"]))
    with open(os.path.join(out_dir, "texts.jsonl.tmp"), "w") as f:
        for t in sorted(texts):
            f.write(json.dumps({"text": t}) + "\n")
    os.replace(os.path.join(out_dir, "texts.jsonl.tmp"), os.path.join(out_dir, "texts.jsonl"))
    print(f"prepare: {len(texts)} texts, {len(nm)} near-miss dev pairs in {out_dir}", file=sys.stderr)


def probe(pairs_dir, out_dir):
    import numpy as np
    import torch

    torch.set_num_threads(1)
    emb = {}
    for r in read_jsonl(os.path.join(out_dir, "emb.jsonl")):
        v = np.asarray(r["pooled"], dtype=np.float32)
        emb[r["text"]] = v / (np.linalg.norm(v) + 1e-9)

    def arrays(rows):
        u = np.stack([emb[r["a"]] for r in rows])
        v = np.stack([emb[r["b"]] for r in rows])
        x = np.concatenate([np.abs(u - v), u * v, (u * v).sum(1, keepdims=True)], 1)
        return torch.tensor(x), np.array([r["label"] for r in rows], dtype=np.float32), (u * v).sum(1)

    def auc(s, y):
        order = np.argsort(s, kind="stable")
        ranks = np.empty(len(s))
        ranks[order] = np.arange(1, len(s) + 1)
        _, inv, cnt = np.unique(s, return_inverse=True, return_counts=True)
        ranks = (np.bincount(inv, weights=ranks) / cnt)[inv]  # ties share their mean rank
        p = y.sum()
        return float((ranks[y == 1].sum() - p * (p + 1) / 2) / (p * (len(y) - p)))

    train = {s: arrays(group_rows(pairs_dir, out_dir, s, "train")) for s in SOURCES}
    groups = SOURCES + ["nearmiss"]
    dev = {g: arrays(group_rows(pairs_dir, out_dir, g, "dev")) for g in groups}
    width = train[SOURCES[0]][0].shape[1]

    def train_head(seed, epochs=20, batch=256):
        torch.manual_seed(seed)
        rng = np.random.default_rng(seed)
        if HEAD_WIDTH == 0:  # a linear head: a per-dimension weighting of the pooled comparison
            head = torch.nn.Linear(width, 1)
        else:
            head = torch.nn.Sequential(torch.nn.Linear(width, HEAD_WIDTH), torch.nn.ReLU(), torch.nn.Dropout(0.1),
                                       torch.nn.Linear(HEAD_WIDTH, 1))
        opt = torch.optim.AdamW(head.parameters(), lr=1e-3, weight_decay=1e-4)
        per_source = max(min(len(train[s][1]) for s in SOURCES), 3000)
        for epoch in range(epochs):
            xs, ys = [], []
            for s in SOURCES:  # balanced per source, with replacement for the small ones
                x, y, _ = train[s]
                pick = rng.choice(len(y), per_source, replace=len(y) < per_source)
                xs.append(x[pick])
                ys.append(torch.tensor(y[pick]))
            x, y = torch.cat(xs), torch.cat(ys)
            perm = torch.tensor(rng.permutation(len(y)))
            head.train()
            for b in range(0, len(y), batch):
                idx = perm[b : b + batch]
                loss = torch.nn.functional.binary_cross_entropy_with_logits(head(x[idx]).squeeze(1), y[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
            print(f"probe: head seed {seed} epoch {epoch + 1}/{epochs}", file=sys.stderr)
        return head.eval()

    heads = [train_head(seed) for seed in range(3)]
    f5 = {}
    for r in read_jsonl(os.path.join(out_dir, "scores.jsonl")):
        name = os.path.basename(r["file"])
        f5[(name[len("dev_"):] if name.startswith("dev_") else name, r["line"])] = (r["score"], r["label"])

    def logit(p):
        p = min(max(p, 1e-6), 1 - 1e-6)
        return float(np.log(p / (1 - p)))

    rows = {"group": [], "f5": [], "head": [], "cosine": [], "label": []}
    for g in groups:
        x, y, cos = dev[g]
        with torch.no_grad():
            h = np.mean([hd(x).squeeze(1).numpy() for hd in heads], 0)
        for i in range(len(y)):
            score, label = f5[(g, i + 1)]
            if label != y[i]:
                sys.exit(f"probe: scores.jsonl line {i + 1} of {g} has label {label}, the dev file {y[i]}")
            for k, v in (("group", g), ("f5", logit(score)), ("head", h[i]), ("cosine", cos[i]), ("label", y[i])):
                rows[k].append(v)
    G = np.array(rows["group"])
    Y = np.array(rows["label"], dtype=np.float64)
    weight = np.array([1.0 / (G == g).sum() for g in G])
    folds = np.random.default_rng(0).integers(0, 5, len(Y))

    def fit(X, Y, w):
        Xt = torch.tensor(np.c_[X, np.ones(len(X))], dtype=torch.float64)
        beta = torch.zeros(Xt.shape[1], dtype=torch.float64, requires_grad=True)
        opt = torch.optim.LBFGS([beta], max_iter=200)

        def closure():
            opt.zero_grad()
            losses = torch.nn.functional.binary_cross_entropy_with_logits(Xt @ beta, torch.tensor(Y), reduction="none")
            loss = (torch.tensor(w) * losses).sum() / w.sum()
            loss.backward()
            return loss

        opt.step(closure)
        return beta.detach().numpy()

    report = {"train_pairs": {s: len(train[s][1]) for s in SOURCES}, "dev_pairs": {g: len(dev[g][1]) for g in groups},
              "scorers": {}}
    # One-sided: the head may only lower P (where it says "different"), never lift a near-miss.
    rows["head_no"] = [min(h, 0.0) for h in rows["head"]]
    for name, cols in (("cosine", ["cosine"]), ("head", ["head"]), ("f5", ["f5"]), ("f5+cosine", ["f5", "cosine"]),
                       ("f5+head", ["f5", "head"]), ("f5+min(head,0)", ["f5", "head_no"])):
        X = np.stack([np.array(rows[c], dtype=np.float64) for c in cols], 1)
        pred = np.zeros(len(Y))
        for k in range(5):
            tr, te = folds != k, folds == k
            beta = fit(X[tr], Y[tr], weight[tr])
            pred[te] = np.c_[X[te], np.ones(te.sum())] @ beta
        aucs = {g: round(auc(pred[G == g], Y[G == g]), 3) for g in groups}
        # Verdicts at P >= 0.5 of the cross-validated stack: near-miss negatives served.
        neg = (G == "nearmiss") & (Y == 0)
        accuracy = {g: round(float(((pred[G == g] >= 0) == (Y[G == g] == 1)).mean()), 3) for g in groups}
        report["scorers"][name] = {
            "auc": aucs, "macro_auc_pair_sets": round(float(np.mean([aucs[s] for s in SOURCES])), 3),
            "accuracy_at_half": accuracy, "nearmiss_negatives_served": round(float((pred[neg] >= 0).mean()), 3),
            "stack_weights": dict(zip(cols + ["bias"], np.round(fit(X, Y, weight), 3).tolist()))}
        print(f"probe: {name}: {aucs}", file=sys.stderr)
    # Conjunctive: P = sigmoid(a z + b) * sigmoid(c h + d), "same" only when F5 and the head both say
    # so, so a head that cannot see structure never lifts a near-miss over F5's own probability.
    def fit_and(Z, H, Y, w):
        t = lambda x: torch.tensor(x, dtype=torch.float64)
        beta = torch.tensor([1.0, 0.0, 1.0, 2.0], dtype=torch.float64, requires_grad=True)
        opt = torch.optim.LBFGS([beta], max_iter=300)

        def closure():
            opt.zero_grad()
            log_p = torch.nn.functional.logsigmoid(beta[0] * t(Z) + beta[1]) + torch.nn.functional.logsigmoid(
                beta[2] * t(H) + beta[3])
            log_q = torch.log(-torch.expm1(log_p.clamp(max=-1e-9)))
            loss = -(t(w) * (t(Y) * log_p + (1 - t(Y)) * log_q)).sum() / w.sum()
            loss.backward()
            return loss

        opt.step(closure)
        return beta.detach().numpy()

    def and_log_p(beta, Z, H):
        ls = lambda x: -np.logaddexp(0, -x)
        return ls(beta[0] * Z + beta[1]) + ls(beta[2] * H + beta[3])

    Z, H = np.array(rows["f5"], dtype=np.float64), np.array(rows["head"], dtype=np.float64)
    pred = np.zeros(len(Y))
    for k in range(5):
        tr, te = folds != k, folds == k
        pred[te] = and_log_p(fit_and(Z[tr], H[tr], Y[tr], weight[tr]), Z[te], H[te])
    aucs = {g: round(auc(pred[G == g], Y[G == g]), 3) for g in groups}
    half = np.log(0.5)
    neg = (G == "nearmiss") & (Y == 0)
    report["scorers"]["f5 AND head"] = {
        "auc": aucs, "macro_auc_pair_sets": round(float(np.mean([aucs[s] for s in SOURCES])), 3),
        "accuracy_at_half": {g: round(float(((pred[G == g] >= half) == (Y[G == g] == 1)).mean()), 3) for g in groups},
        "nearmiss_negatives_served": round(float((pred[neg] >= half).mean()), 3),
        "and_weights": np.round(fit_and(Z, H, Y, weight), 3).tolist()}
    print(f"probe: f5 AND head: {aucs}", file=sys.stderr)
    json.dump(report, sys.stdout, indent=2, sort_keys=True)
    print()


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "prepare":
        prepare(*sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == "probe":
        probe(*sys.argv[2:])
    else:
        sys.exit(__doc__)
