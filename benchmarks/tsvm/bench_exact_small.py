"""Benchmark: exact TSVM certified on small two-moons problems.

Problems (one labeled point per class, strict balance: half of U positive):

* ``defaults-100``: ``ExactTSVM()`` with the defaults of the time the benchmark was
  written (``gamma="scale"`` pinned, the default width now being ``'knn'``,
  ``C = C_star = 1``, ``method="randomized"``, ``time_limit=60``) on
  ``semisvm.datasets.make_two_moons(100, n_labeled_per_class=1, random_state=0)``
  (98 unlabeled points); the same with ``method="branch_and_bound"``.
* ``moons-n``: ``sklearn.datasets.make_moons(n, noise=0.05, random_state=1)``,
  the first point of each class labeled, ``gamma=4``, ``C=10``, ``C_star=1``,
  for n = 100, 200, 400 (the problems of ``benchmarks/results/tsvm.md``), both
  methods; ``--only moons-4002`` runs the paper's scale (4,000 unlabeled
  points; e.g. ``--repeat 1 --time-limit 600 --methods randomized``).

Peers on the same problems, in the same run (methods ``SVC`` and ``LapSVM``):
``SVC()`` on the two labels (scikit-learn's defaults) and ``LapSVM()`` with its
defaults on the labeled and unlabeled points.

Each fit is repeated ``--repeat`` times (default 3); the table gives the median
wall time (and the median CPU time of the process: on a shared machine the
wall time depends on the other jobs, the CPU time much less), whether the run
was certified (a proof: see ``docs/tsvm.rst``), the
relative gap, the objective, the nodes and the error on U (the peers have no
certificate, gap or nodes).  Rows are appended to ``--csv`` (default
``benchmarks/results/tsvm_exact.csv``) with the date, commit and load average.

Usage::

    python benchmarks/tsvm/bench_exact_small.py             # about 2 minutes
    python benchmarks/tsvm/bench_exact_small.py --only defaults-100 --repeat 3
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import make_moons
from sklearn.exceptions import ConvergenceWarning

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import _common as cm  # noqa: E402
from semisvm.datasets import make_two_moons  # noqa: E402
from semisvm.models._tsvm import ExactTSVM  # noqa: E402

CSV = HERE.parent / "results" / "tsvm_exact.csv"
FIELDS = [
    "date",
    "commit",
    "load_1m",
    "problem",
    "method",
    "n",
    "u",
    "repeat",
    "time_s_median",
    "time_s_all",
    "cpu_s_median",
    "certified",
    "gap",
    "objective",
    "lower_bound",
    "nodes",
    "error_U",
    "time_limit",
    "note",
]


def problems(only: str | None):
    """``(name, X, y, y_true, estimator parameters)`` of each benchmark problem."""
    out = []
    X, y, yt = make_two_moons(100, n_labeled_per_class=1, random_state=0)
    # the benchmark's fixed problem: the defaults of the time it was written (the
    # default width is now 'knn', so 'scale' is pinned to keep the problem)
    out.append(("defaults-100", X, y, yt, {"gamma": "scale"}))
    sizes = (100, 200, 400)
    if only and "moons-4002" in only.split(","):
        sizes += (4002,)  # the paper's scale: on request only
    for n in sizes:
        X, yt = make_moons(n, noise=0.05, random_state=1)
        y = np.full(n, -1)
        y[np.flatnonzero(yt == 1)[0]] = 1
        y[np.flatnonzero(yt == 0)[0]] = 0
        out.append((f"moons-{n}", X, y, yt, {"gamma": 4.0, "C": 10.0, "C_star": 1.0}))
    return [p for p in out if not only or p[0] in only.split(",")]


#: the peers of the exact TSVM (no certificate): fitted by :func:`run_peer`
PEERS = ("SVC", "LapSVM")


def run_one(X, y, yt, params, method, time_limit, seed=0):
    """One fit of ``ExactTSVM(method=...)``: wall s, CPU s, the model, error on U."""
    if method in PEERS:
        return run_peer(X, y, yt, method)
    clf = ExactTSVM(method=method, time_limit=time_limit, random_state=seed, **params)
    t0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, y)
    U = y == -1
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return wall, cpu, clf, float(np.mean(clf.transduction_[U] != yt[U]))


def run_peer(X, y, yt, method):
    """One fit of a peer on the same problem: ``SVC()`` on the labeled points or
    ``LapSVM()`` (defaults) on all of them; wall s, CPU s, the model (None) and
    the error on U."""
    from sklearn.svm import SVC

    from semisvm import LapSVM

    U = y == -1
    t0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "SVC":
            pred = SVC().fit(X[~U], y[~U]).predict(X[U])
        else:
            pred = np.asarray(LapSVM().fit(X, y).transduction_)[U]
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return wall, cpu, None, float(np.mean(pred != yt[U]))


def certificate(clf) -> dict:
    """The certificate columns of a row (empty for a peer)."""
    if clf is None:
        return dict(certified="", gap="", objective="", lower_bound="", nodes="")
    return dict(
        certified=bool(clf.is_global_optimum_),
        gap=f"{clf.gap_:.4%}",
        objective=f"{clf.objective_:.6f}",
        lower_bound=f"{clf.lower_bound_:.6f}",
        nodes=clf.n_nodes_,
    )


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", default=None, help="comma-separated problem names")
    p.add_argument(
        "--methods",
        default="randomized,branch_and_bound,SVC,LapSVM",
        help="comma-separated: ExactTSVM's methods and the peers SVC, LapSVM",
    )
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--time-limit", type=float, default=60.0)
    p.add_argument("--note", default="")
    p.add_argument("--no-write", action="store_true")
    p.add_argument("--csv", default=str(CSV), help="rows appended here")
    args = p.parse_args(argv)
    path = Path(args.csv)
    machine = cm.machine_description()
    rows = []
    for name, X, y, yt, params in problems(args.only):
        for method in args.methods.split(","):
            load = os.getloadavg()[0]
            times, cpus, last = [], [], None
            for _ in range(args.repeat):
                dt, cpu, clf, err = run_one(X, y, yt, params, method, args.time_limit)
                times.append(dt)
                cpus.append(cpu)
                last = (clf, err)
            clf, err = last
            row = {
                "date": machine["date"],
                "commit": machine["commit"],
                "load_1m": round(load, 2),
                "problem": name,
                "method": method,
                "n": X.shape[0],
                "u": int(np.count_nonzero(y == -1)),
                "repeat": args.repeat,
                "time_s_median": round(float(np.median(times)), 3),
                "time_s_all": " ".join(f"{t:.2f}" for t in times),
                "cpu_s_median": round(float(np.median(cpus)), 3),
                **certificate(clf),
                "error_U": round(err, 4),
                "time_limit": args.time_limit,
                "note": args.note,
            }
            rows.append(row)
            print(
                cm.records_table(
                    [row],
                    [
                        "problem",
                        "method",
                        "n",
                        "time_s_median",
                        "cpu_s_median",
                        "certified",
                        "gap",
                        "objective",
                        "nodes",
                        "error_U",
                        "load_1m",
                    ],
                ),
                flush=True,
            )
    print()
    print(
        cm.records_table(
            rows,
            [
                "problem",
                "method",
                "n",
                "time_s_median",
                "time_s_all",
                "cpu_s_median",
                "certified",
                "gap",
                "objective",
                "nodes",
                "error_U",
                "load_1m",
            ],
        )
    )
    if args.no_write:
        return
    old, fields = [], list(FIELDS)
    if path.exists():  # earlier rows keep their cells; new columns widen the header
        with path.open(newline="") as fh:
            rd = csv.DictReader(fh)
            old = list(rd)
            fields = list(rd.fieldnames or []) + [
                k for k in FIELDS if k not in (rd.fieldnames or [])
            ]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows(old + rows)


if __name__ == "__main__":
    main()
