"""Benchmark: how LapSVMPath chooses its default lambda.

Two moons (``make_two_moons``) with label noise: 15 labeled points per class of
which 4 have their label flipped, the rest unlabeled.  For each seed the script
fits ``LapSVMPath()`` with its defaults and reports the transductive error
(against the true labels of all points) at

* ``lambda_`` chosen by the default rule (cross-validation over the labels),
* the end of the path (least regularised: the old default),
* the midpoint rule (``cv=None``),
* the best lambda of the path in hindsight (a 200-point log grid over it; an
  oracle no rule can match), and at lambda^0.

Usage::

    python benchmarks/studies/bench_path_selection.py [--seeds 10] [--n 400] [--no-append]

Appends its table to ``benchmarks/results/path_selection.md``.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import append_results, machine_description, markdown_table  # noqa: E402
from semisvm.datasets import make_two_moons  # noqa: E402
from semisvm.models._path import LapSVMPath  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--flips", type=int, default=4)
    ap.add_argument("--no-append", action="store_true", help="only print the table")
    args = ap.parse_args(argv)
    machine = machine_description()
    rows, errs = [], []
    for seed in range(args.seeds):
        X, y, yt = make_two_moons(
            args.n, noise=0.25, n_labeled_per_class=15, random_state=seed
        )
        rng = np.random.default_rng(seed)
        flip = rng.choice(np.flatnonzero(y != -1), args.flips, replace=False)
        y = y.copy()
        y[flip] = 1 - y[flip]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf = LapSVMPath().fit(X, y)
            mid = LapSVMPath(cv=None).fit(X, y)
        grid = np.geomspace(clf.lambdas_[-1], clf.lambdas_[0], 200)
        E = (clf.predict(X, grid) != yt[:, None]).mean(axis=0)
        e = [
            np.mean(clf.predict(X) != yt),
            float(E[0]),
            np.mean(mid.predict(X) != yt),
            float(E.min()),
            float(E[-1]),
        ]
        errs.append(e)
        rows.append([seed, clf.stop_reason_, clf.lambdas_.size] + [100 * v for v in e])
    med = np.median(np.asarray(errs), axis=0) * 100
    rows.append(["median", "", ""] + list(med))
    header = [
        "seed",
        "stop",
        "breakpoints",
        "default (cv) %",
        "end of path %",
        "midpoint %",
        "best on path (oracle) %",
        "lambda^0 %",
    ]
    table = markdown_table(header, rows)
    body = (
        f"two moons n={args.n}, noise 0.25, 15 labels per class, {args.flips} "
        "flipped; LapSVMPath defaults; transductive error on all points vs the "
        "true labels.\n\n" + table
    )
    print(body)
    if not args.no_append:
        out = append_results(
            "path_selection",
            "LapSVMPath default lambda",
            "python " + " ".join([sys.argv[0]] + (argv or sys.argv[1:])),
            body,
            machine,
        )
        print(f"appended to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
