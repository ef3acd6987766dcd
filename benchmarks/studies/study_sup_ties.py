"""Which supervised weight to fit (issue 27): near-ties of the LOO criterion.

When the ``"auto"`` rule leaves the graph-trusting defaults for a supervised
model (lambda_I = 0), several gamma_a of :data:`~semisvm.models._autoreg.GRID_A`
can score the same criterion to floating point (10 labels fitted alike by every
gamma_a up to 1e-4, or every LOO margin above 1).  This A/B fits ``LapSVM()`` and
``LapRLS()`` on the draws of ``bench_accuracy.py`` with such ties going to the
largest gamma_a (arm ``new``, ``SUPERVISED_TIES_TO_LARGEST = True``) and to the
first (``old``), and appends one row per fit to ``--csv``: data set, setting,
draw, estimator, arm, errors on U and on the test points, the chosen
(gamma_a, gamma_i).

Usage::

    python benchmarks/studies/study_sup_ties.py --only wine breast_cancer \\
        --settings 5/class 10/class --draws 5 --csv sup_ties.csv
    python benchmarks/studies/study_sup_ties.py --summarize --csv sup_ties.csv
"""

from __future__ import annotations

import argparse
import csv
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1] / "accuracy"))
from study_mid_power import draws, study_main  # noqa: E402

COLUMNS = ["dataset", "setting", "draw", "estimator", "arm", "err_unlabeled"]
COLUMNS += ["err_test", "gamma_a", "gamma_i"]


def run(args: argparse.Namespace) -> None:
    from semisvm import LapRLS, LapSVM
    from semisvm.models import _autoreg

    with open(args.csv, "a", newline="") as fh:
        w = csv.writer(fh)
        for name, s, d, X, y, tr, ytr, pos, unl, test in draws(args):
            for cls in (LapSVM, LapRLS):
                for arm in ("new", "old"):
                    _autoreg.SUPERVISED_TIES_TO_LARGEST = arm == "new"
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        e = cls(random_state=0).fit(X[tr], ytr)
                    eu = float(np.mean(e.transduction_[pos] != y[unl]))
                    et = float("nan")
                    if len(test):
                        et = float(np.mean(e.predict(X[test]) != y[test]))
                    sel = e.regularization_selection_
                    w.writerow(
                        [name, s, d, cls.__name__, arm, eu, et]
                        + [sel.get("gamma_a"), sel.get("gamma_i")]
                    )
                    fh.flush()


def summarize(path: str) -> str:
    df = pd.read_csv(path, header=None, names=COLUMNS)
    t = df.pivot_table(
        index=["dataset", "setting", "estimator"],
        columns="arm",
        values="err_unlabeled",
        aggfunc="mean",
    )
    t = 100 * t
    t["new - old"] = t["new"] - t["old"]
    moved = df.pivot_table(
        index=["dataset", "setting", "draw", "estimator"],
        columns="arm",
        values="gamma_a",
        aggfunc="first",
    )
    n_moved = int((moved["new"] != moved["old"]).sum())
    return (
        t.round(2).to_string()
        + f"\n\nfits: {len(moved)}; chosen gamma_a differs in {n_moved}; mean new - old"
        f" {t['new - old'].mean():+.3f}; worst {t['new - old'].max():+.2f}"
    )


def main(argv: list[str] | None = None) -> int:
    return study_main(
        argv,
        __doc__,
        run,
        summarize,
        only=["wine", "breast_cancer"],
        settings=["5/class", "10/class"],
        csv_name="study_sup_ties.csv",
    )


if __name__ == "__main__":
    raise SystemExit(main())
