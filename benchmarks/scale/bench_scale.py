"""Scale benchmark: LapSVM with dense / streamed / Nystroem kernels against n.

Every configuration runs in its own subprocess (peak RSS is the child's
``ru_maxrss``); a configuration the memory guard refuses is recorded as refused
(with the guard's message), never run into the OOM killer.  Times are split into
kernel / graph / solve / transduction as the estimator records them
(``fit_times_``); accuracy is measured on the unlabeled points; the kNN recall of
the graph against exact neighbours on 1,000 random points.  The peers run in the
same way: LabelSpreading (kernel='knn', scikit-learn), graphlearning's Poisson
learning (``poisson``, its 10-NN graph included) and ``SVC()`` on the labels
(``svc``); ``auto`` is ``LapSVM()`` with its defaults.

Usage (see BENCHMARKS.md, "Scale"):
  python benchmarks/scale/bench_scale.py --data moons manifold50 \\
      --n 10000 30000 100000 --methods auto labelspreading poisson svc
  python benchmarks/scale/bench_scale.py --streamed-ratio --n 50000 --d 784
  (one product at C = 1; benchmarks/scale/bench_streamed.py times C = 1 and 10,
  interleaved rounds, and the previous algorithm)

Results: appended to benchmarks/scale/results/scale.md and scale.jsonl.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent.parent / "src"
RESULTS = HERE / "results"

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {src!r}); sys.path.insert(0, {here!r})
import numpy as np
from data import make_manifold, make_moons, label_subset
cfg = json.loads({cfg!r})
ds, n, method = cfg["data"], cfg["n"], cfg["method"]
t0 = time.perf_counter()
if ds == "moons":
    X, yt = make_moons(n, seed=0)
else:
    X, yt = make_manifold(n, int(ds[len("manifold"):]), seed=0)
y = label_subset(yt, cfg["labels"] // 2, seed=cfg.get("label_seed", 0))
out = dict(cfg)
out["t_data"] = time.perf_counter() - t0
unl = y == -1
captured = {{}}
import semisvm.graph._knn as knnmod
_orig = knnmod.knn_search
def _capture(*a, **k):
    res = _orig(*a, **k)
    captured["ind"] = res[0]
    return res
knnmod.knn_search = _capture


def fit_labelspreading(X, y, out):
    '''scikit-learn's LabelSpreading on its 10-NN graph; the labels of all points.'''
    from sklearn.semi_supervised import LabelSpreading
    ls = LabelSpreading(kernel="knn", n_neighbors=10, max_iter=1000).fit(X, y)
    out["times"] = {{}}
    out["operator"] = "knn graph"
    return ls.transduction_


def fit_poisson(X, y, out):
    '''graphlearning's Poisson learning, its 10-NN graph included (the accuracy
    benchmark's peer, benchmarks/accuracy/bench_accuracy.py).'''
    sys.path.insert(0, {accuracy!r})
    from bench_accuracy import GraphLearning
    out["times"] = {{}}
    out["operator"] = "knn graph (graphlearning)"
    return GraphLearning("poisson").fit(X, y).transduction_


def fit_svc(X, y, out):
    '''SVC() on the labeled points alone; its predictions on every point.'''
    from sklearn.svm import SVC
    lab = y != -1
    svc = SVC().fit(X[lab], y[lab])
    out["times"] = {{}}
    out["operator"] = "labels only"
    return np.concatenate(
        [svc.predict(X[s : s + 100_000]) for s in range(0, X.shape[0], 100_000)])


def fit_lapsvm(X, y, out):
    '''LapSVM with the configuration's options (``auto``: all defaults).'''
    from semisvm import LapSVM, SolverOptions
    opts = SolverOptions(kernel_approximation=cfg["op"],
                         graph_method=cfg.get("graph", "auto"),
                         graph_pca=cfg.get("pca") or "auto", n_components=cfg.get("m"),
                         landmarks=cfg.get("landmarks", "uniform"))
    est = LapSVM(random_state=0, options=opts).fit(X, y)
    out["times"] = {{k: float(v) for k, v in est.fit_times_.items()}}
    out["operator"] = est.kernel_operator_
    out["m"] = int(getattr(est, "n_components_", 0) or 0)
    out["graph_method"] = getattr(est, "graph_method_", "from K")
    out["n_iter"] = int(np.max(est.n_iter_))
    return est.transduction_


FIT = {{"labelspreading": fit_labelspreading, "poisson": fit_poisson, "svc": fit_svc,
       "lapsvm": fit_lapsvm}}
t1 = time.perf_counter()
try:
    pred = FIT[method if method in FIT else "lapsvm"](X, y, out)
except MemoryError as exc:
    out["refused"] = str(exc).splitlines()[0][:300]
    print(json.dumps(out)); sys.exit(0)
out["t_total"] = time.perf_counter() - t1
out["accuracy"] = float(np.mean(pred[unl] == yt[unl]))
from sklearn.svm import SVC
svc = SVC().fit(X[~unl], y[~unl])
out["svc_accuracy"] = float(np.mean(np.concatenate(
    [svc.predict(X[s : s + 100_000]) for s in range(0, n, 100_000)])[unl] == yt[unl]))
if "ind" in captured:
    from semisvm.graph._knn import exact_knn, pca_project
    rng = np.random.default_rng(1)
    q = rng.choice(n, size=min(n, 1000), replace=False)
    ex, _ = exact_knn(X, captured["ind"].shape[1], queries=q)
    got = captured["ind"][q]
    out["recall"] = float(np.mean([len(set(a) & set(b)) / len(a) for a, b in zip(got, ex)]))
out["peak_rss_gib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
print(json.dumps(out))
"""

STREAM_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {src!r}); sys.path.insert(0, {here!r})
import numpy as np
from data import make_manifold
from semisvm.kernels import StreamedKernelOperator, median_gamma
n, d = {n}, {d}
X, _ = make_manifold(n, d, seed=0)
op = StreamedKernelOperator(X, gamma=median_gamma(X))
v = np.random.default_rng(0).normal(size=n)
from semisvm.kernels._operators import single_blas_thread
small = StreamedKernelOperator(X[:500], gamma=op.gamma)
small @ v[:500]  # one-off set-up (threadpoolctl) outside the timing
tp, tg = [], []
for rep in range(1):
    t0 = time.perf_counter(); op @ v; tp.append(time.perf_counter() - t0)
    # the bare GEMM of all n x n entries of X X^T in the operator's tile shape,
    # one reused buffer, same threads (as benchmarks/scale/bench_streamed.py)
    t0 = time.perf_counter()
    R, S = op.tile_rows, op.tile_cols
    buf = np.empty((R, S), dtype=np.float32)
    with single_blas_thread():
        for s in range(0, n, R):
            for c in range(0, n, S):
                np.matmul(X[s : s + R], X[c : c + S].T,
                          out=buf[: min(n, s + R) - s, : min(n, c + S) - c])
    tg.append(time.perf_counter() - t0)
t_prod, t_gemm = tp[-1], tg[-1]
print(json.dumps(dict(n=n, d=d, tile_rows=op.tile_rows, t_product=t_prod, t_gemm=t_gemm,
      ratio=t_prod / t_gemm,
      peak_rss_gib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20)))
"""

#: configurations: LapSVM with a kernel operator (``auto``: ``LapSVM()``'s defaults,
#: ``random_state=0``), and the peers (:data:`PEERS`)
METHODS = {
    "dense": dict(op="dense"),
    "streamed": dict(op="streamed"),
    "nystroem": dict(op="nystroem"),
    "nystroem-kmeans": dict(op="nystroem", landmarks="kmeans"),
    "auto": dict(op="auto"),
    "labelspreading": dict(),
    "poisson": dict(),
    "svc": dict(),
}
#: peers, not LapSVM: LabelSpreading(kernel='knn'), graphlearning's Poisson learning
#: (10-NN graph included) and SVC() on the labels
PEERS = ("labelspreading", "poisson", "svc")


def run_child(code: str, timeout: float) -> dict:
    try:
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout:.0f} s"}
    if out.returncode != 0:
        return {"error": f"exit {out.returncode}: {out.stderr.strip()[-300:]}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def slopes(rows: list[dict]) -> dict:
    """Least-squares slope of log(time) against log(n) per (data, method), n >= 30k."""
    groups: dict[tuple, list] = {}
    for r in rows:
        if "t_total" in r and r["n"] >= 30_000:
            groups.setdefault((r["data"], r["name"]), []).append((r["n"], r["t_total"]))
    out = {}
    for key, pts in groups.items():
        if len({p[0] for p in pts}) >= 2:
            x = [math.log(p[0]) for p in pts]
            y = [math.log(p[1]) for p in pts]
            mx, my = sum(x) / len(x), sum(y) / len(y)
            out[key] = sum(
                (a - mx) * (b - my) for a, b in zip(x, y, strict=True)
            ) / sum((a - mx) ** 2 for a in x)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", nargs="+", default=["moons", "manifold50", "manifold784"])
    ap.add_argument("--n", type=int, nargs="+", default=[10_000, 30_000, 100_000])
    ap.add_argument(
        "--methods", nargs="+", default=["dense", "nystroem", "labelspreading"]
    )
    ap.add_argument("--labels", type=int, default=50)
    ap.add_argument(
        "--label-seed", type=int, default=0, help="seed of the labeled points' draw"
    )
    ap.add_argument(
        "--m", type=int, default=None, help="Nystroem landmarks (default: rule)"
    )
    ap.add_argument(
        "--pca",
        type=int,
        default=None,
        help="graph_pca for d > 100 (kNN search on a PCA projection)",
    )
    ap.add_argument("--graph", default="auto")
    ap.add_argument("--dense-max-n", type=int, default=30_000)
    ap.add_argument("--streamed-max-n", type=int, default=10_000)
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--streamed-ratio", action="store_true")
    ap.add_argument("--d", type=int, default=784)
    ap.add_argument("--note", default="")
    ap.add_argument("--no-save", action="store_true", help="do not append to results/")
    ap.add_argument(
        "--check",
        action="store_true",
        help="exit 1 if a configuration failed (CI smoke test)",
    )
    args = ap.parse_args()
    RESULTS.mkdir(exist_ok=True)
    stamp = f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC"
    if args.streamed_ratio:
        for n in args.n:
            r = run_child(
                STREAM_CHILD.format(src=str(SRC), here=str(HERE), n=n, d=args.d),
                args.timeout,
            )
            print(r, flush=True)
            if args.check and "error" in r:
                sys.exit(1)
            if args.no_save:
                continue
            with open(RESULTS / "scale.md", "a") as fh:
                fh.write(
                    f"\n### Streamed product vs its GEMM, {stamp} {args.note}\n\n"
                    f"n = {n}, d = {args.d}: {json.dumps(r)}\n"
                )
        return
    rows = []
    for ds in args.data:
        d = 2 if ds == "moons" else int(ds[len("manifold") :])
        for n in args.n:
            for name in args.methods:
                if name == "dense" and n > args.dense_max_n:
                    continue
                if name == "streamed" and n > args.streamed_max_n:
                    continue
                cfg = dict(
                    data=ds,
                    n=n,
                    method=name,
                    name=name,
                    labels=args.labels,
                    label_seed=args.label_seed,
                    **METHODS[name],
                )
                if name not in PEERS:
                    cfg.update(
                        m=args.m,
                        graph=args.graph,
                        pca=args.pca if (args.pca and d > 100) else None,
                    )
                code = CHILD.format(
                    src=str(SRC),
                    here=str(HERE),
                    accuracy=str(HERE.parent / "accuracy"),
                    cfg=json.dumps(cfg),
                )
                r = run_child(code, args.timeout)
                r = {**cfg, **r}
                print(json.dumps(r), flush=True)
                rows.append(r)
                if not args.no_save:
                    with open(RESULTS / "scale.jsonl", "a") as fh:
                        fh.write(
                            json.dumps({"stamp": stamp, "note": args.note, **r}) + "\n"
                        )
    dense_acc = {
        (r["data"], r["n"]): r["accuracy"]
        for r in rows
        if r["name"] == "dense" and "accuracy" in r
    }
    import os

    lines = [
        f"\n## {stamp} {args.note}\n",
        f"load average at the end: {os.getloadavg()[0]:.2f}; cores: {os.cpu_count()}\n",
        f"labels: {args.labels}; m: {args.m or 'default rule'}; graph: {args.graph}; "
        f"pca for d > 100: {args.pca}\n",
        "| data | n | method | operator | m | graph | recall | kernel s | graph s | "
        "select s | solve s | transd. s | total s | peak RSS GiB | acc. unl. | "
        "SVC acc. | vs dense |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "t_total" not in r:
            why = r.get("refused") or r.get("error")
            lines.append(
                f"| {r['data']} | {r['n']} | {r['name']} | not run: {why} "
                "| | | | | | | | | | | | | |"
            )
            continue
        t = r.get("times", {})
        da = dense_acc.get((r["data"], r["n"]))
        dd = f"{100 * (r['accuracy'] - da):+.2f}" if da is not None else ""
        lines.append(
            f"| {r['data']} | {r['n']} | {r['name']} | {r.get('operator', '')} | "
            f"{r.get('m', '') or ''} | {r.get('graph_method', '')} | "
            f"{r.get('recall', float('nan')):.3f} | {t.get('kernel', float('nan')):.1f} | "
            f"{t.get('graph', float('nan')):.1f} | "
            f"{t.get('selection', float('nan')):.1f} | "
            f"{t.get('solver', float('nan')):.1f} | "
            f"{t.get('transduction', float('nan')):.1f} | {r['t_total']:.1f} | "
            f"{r['peak_rss_gib']:.2f} | {100 * r['accuracy']:.2f} | "
            f"{100 * r.get('svc_accuracy', float('nan')):.2f} | {dd} |"
        )
    sl = slopes(rows)
    if sl:
        lines.append(
            "\nlog-log slope of total time against n (n >= 30,000): "
            + "; ".join(f"{k[0]}/{k[1]}: {v:.2f}" for k, v in sl.items())
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_save:
        with open(RESULTS / "scale.md", "a") as fh:
            fh.write(text)
    if args.check and any("t_total" not in r for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
