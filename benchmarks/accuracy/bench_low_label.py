"""Few labels, many points: iterations against n, and the stop against the optimum.

For two moons (noise 0.1) and two circles (noise 0.05 and 0.1, ``factor=0.5``) with
one label per class, at n = 2,000, 5,000, 20,000 and 100,000, this fits the
default ``LapSVM()`` and ``LapRLS()`` and reports, per (data, n) and over the
label draws (the same draws as ``bench_accuracy.py``'s ``draw_split``):

* the operator the estimator chose (dense / nystroem), the PCG (or Newton)
  iterations ``n_iter_`` and the stop reason ``termination_condition_``;
* the error on the unlabeled points of the default fit;
* the error of the same model solved without early stopping to ``tol=1e-9``
  (``max_iter=5000``; only where the operator is the dense one, up to
  ``--max-ref`` points, default 5,000): the difference is what the stopping rule costs at this
  label rate;
* ``iters / ln n``: flat when the iterations grow like log n (the target);
* with ``--datasets`` (real sets of ``bench_accuracy.py``, e.g. ``usps_full digits
  g50c``, at their own size, ``--settings`` labels per class), the same for
  those sets, plus the largest fraction of unlabeled points (over the draws)
  whose label differs between the stopped and the unstopped fit: how safe the
  stop is at a low label rate, point by point.

Usage::

    python benchmarks/accuracy/bench_low_label.py                 # ~1 h, 3 draws
    python benchmarks/accuracy/bench_low_label.py --sizes 2000 5000 --draws 2
    python benchmarks/accuracy/bench_low_label.py --datasets usps_full digits \
        --settings 1/class 2/class --draws 5 --max-ref 8000

Appends a table to ``benchmarks/results/low_label.md``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
RESULTS = HERE.parent / "results" / "low_label.md"

FAMILIES = {
    "moons": ("moons-{n}", "moons, noise 0.1"),
    "circles": ("circles-{n}", "circles, noise 0.05"),
    "circles10": ("circles10-{n}", "circles, noise 0.1"),
}


def _reasons(stop) -> str:
    """The distinct stop reasons of the classes, '/'-joined."""
    return stop if isinstance(stop, str) else "/".join(sorted(set(map(str, stop))))


def run_one(est_name: str, X, y, lab, unl, *, reference: bool, max_ref: int) -> dict:
    from semisvm import LapRLS, LapSVM

    cls = {"LapSVM": LapSVM, "LapRLS": LapRLS}[est_name]
    yy = np.full(len(y), -1)
    yy[lab] = y[lab]
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        est = cls(random_state=0).fit(X, yy)
    fit_s = time.perf_counter() - t0
    err = float(np.mean(est.transduction_[unl] != y[unl]))
    row = dict(
        op=getattr(est, "kernel_operator_", "?"),
        iters=int(np.max(est.n_iter_)),
        stop=_reasons(getattr(est, "termination_condition_", "?")),
        err=err,
        fit_s=fit_s,
        err_ref=float("nan"),
        iters_ref=float("nan"),
        differ=float("nan"),
    )
    if (
        reference
        and row["op"] == "dense"
        and len(y) <= max_ref
        and est_name == "LapSVM"
    ):
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            ref = cls(random_state=0, early_stopping=None, tol=1e-9, max_iter=5000).fit(
                X, yy
            )
        row["err_ref"] = float(np.mean(ref.transduction_[unl] != y[unl]))
        row["iters_ref"] = int(np.max(ref.n_iter_))
        row["differ"] = float(np.mean(ref.transduction_[unl] != est.transduction_[unl]))
    return row


def main(argv: list[str] | None = None) -> int:
    from bench_accuracy import data_dir, draw_split, load

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", nargs="*", type=int, default=[2000, 5000, 20000, 100000])
    p.add_argument("--families", nargs="*", default=list(FAMILIES), choices=FAMILIES)
    p.add_argument("--draws", type=int, default=3)
    p.add_argument("--max-ref", type=int, default=5000)
    p.add_argument("--no-save", action="store_true")
    p.add_argument(
        "--datasets", nargs="*", default=[], help="real sets at their own size"
    )
    p.add_argument("--settings", nargs="*", default=["1/class"])
    p.add_argument(
        "--data", default=None, help="default: $SEMISVM_DATA or ../shared/data"
    )
    args = p.parse_args(argv)
    if args.datasets:
        args.families = []

    lines = [
        f"\n## {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, load "
        f"{os.getloadavg()[0]:.1f}, {args.draws} draws, "
        f"{', '.join(args.settings) if args.datasets else '1/class'}\n",
        "| data | n | estimator | operator | iters (median) | iters / ln n | stop "
        "| err % (mean) | err % unstopped | iters unstopped | fit s (median) "
        "| labels differing (max) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)
    cells = [
        (fam, FAMILIES[fam][0].format(n=n), n, "1/class")
        for fam in args.families
        for n in args.sizes
    ] + [(ds, ds, None, st) for ds in args.datasets for st in args.settings]
    ddir = data_dir(args.data)
    for fam, name, n, setting in cells:
        X, y, test = load(name, ddir)
        real = n is None  # a real set at its own size: fitted on its training part
        if real:
            fam = f"{name} {setting}"
        for est_name in ("LapSVM", "LapRLS"):
            rows = []
            for d in range(args.draws):
                lab, unl, _ = draw_split(y, test, setting, d, name)
                Xd, yd = X, y
                if real:
                    tr = np.r_[lab, unl]
                    Xd, yd = X[tr], y[tr]
                    lab, unl = np.arange(len(lab)), np.arange(len(lab), len(tr))
                    n = len(tr)
                rows.append(
                    run_one(
                        est_name, Xd, yd, lab, unl, reference=True, max_ref=args.max_ref
                    )
                )
            it = float(np.median([r["iters"] for r in rows]))
            stops = sorted({r["stop"] for r in rows})
            ref = [r["err_ref"] for r in rows if not math.isnan(r["err_ref"])]
            itr = [r["iters_ref"] for r in rows if not math.isnan(r["iters_ref"])]
            line = (
                f"| {fam} | {n} | {est_name} | {rows[0]['op']} | {it:.0f} | "
                f"{it / math.log(n):.1f} | {'/'.join(stops)} | "
                f"{100 * np.mean([r['err'] for r in rows]):.1f} | "
                f"{100 * np.mean(ref):.1f} | {np.median(itr):.0f} | "
                if ref
                else f"| {fam} | {n} | {est_name} | {rows[0]['op']} | {it:.0f} | "
                f"{it / math.log(n):.1f} | {'/'.join(stops)} | "
                f"{100 * np.mean([r['err'] for r in rows]):.1f} | - | - | "
            )
            dif = [r["differ"] for r in rows if not math.isnan(r["differ"])]
            line += f"{np.median([r['fit_s'] for r in rows]):.1f} | "
            line += f"{100 * max(dif):.2f}% |" if dif else "- |"
            lines.append(line)
            print(line, flush=True)
    if not args.no_save:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        with RESULTS.open("a") as fh:
            fh.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
