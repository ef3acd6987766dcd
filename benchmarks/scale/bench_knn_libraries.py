"""hnswlib vs pynndescent vs exact kNN: build time, recall, import/compile overhead.

Each library runs in a fresh subprocess (pynndescent compiles its numba code in
every new process, which is part of what a user pays).  Recall is measured on
2,000 random query points against exact neighbours (brute force, blocked).

Usage: python benchmarks/scale/bench_knn_libraries.py --n 100000 --d 50 784
Appends a table to benchmarks/scale/results/knn_libraries.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent.parent / "src"

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {src!r}); sys.path.insert(0, {here!r})
t0 = time.perf_counter()
import numpy as np
from data import make_manifold
X, _ = make_manifold({n}, {d}, seed=0)
lib = {lib!r}
t_imp = time.perf_counter()
if lib == "hnswlib":
    import hnswlib
elif lib == "pynndescent":
    import pynndescent
t_imp = time.perf_counter() - t_imp
k = 10
t1 = time.perf_counter()
if lib == "exact":
    from semisvm.graph._knn import exact_knn
    ind, _ = exact_knn(X, k)
else:
    from semisvm.graph._knn import approximate_knn
    ind, _ = approximate_knn(X, k, backend=lib, random_state=0)
t_build = time.perf_counter() - t1
rng = np.random.default_rng(1)
q = rng.choice(X.shape[0], 2000, replace=False)
from semisvm.graph._knn import exact_knn
ex, _ = exact_knn(X, k, queries=q)
rec = np.mean([len(set(a) & set(b)) / k for a, b in zip(ind[q], ex)])
print(json.dumps(dict(lib=lib, n={n}, d={d}, import_s=t_imp, build_s=t_build, recall=float(rec),
    peak_rss_gib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20)))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--d", type=int, nargs="+", default=[50, 784])
    ap.add_argument("--libs", nargs="+", default=["hnswlib", "pynndescent", "exact"])
    args = ap.parse_args()
    rows = []
    for d in args.d:
        for lib in args.libs:
            code = CHILD.format(src=str(SRC), here=str(HERE), n=args.n, d=d, lib=lib)
            out = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True
            )
            if out.returncode != 0:
                print(out.stderr[-2000:])
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(r, flush=True)
            rows.append(r)
    res = HERE / "results" / "knn_libraries.md"
    res.parent.mkdir(exist_ok=True)
    with open(res, "a") as fh:
        fh.write(
            f"\n## {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, k = 10, manifold data\n\n"
        )
        fh.write(
            "| library | n | d | import+compile s | build s | recall@10 | peak RSS GiB |\n"
        )
        fh.write("|---|---|---|---|---|---|---|\n")
        for r in rows:
            fh.write(
                f"| {r['lib']} | {r['n']} | {r['d']} | {r['import_s']:.1f} | "
                f"{r['build_s']:.1f} | {r['recall']:.3f} | {r['peak_rss_gib']:.2f} |\n"
            )
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
