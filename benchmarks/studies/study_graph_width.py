"""The graph's width below five labels per class: A/B of the rule.

With at most ten labels in some class ``LapSVM()`` and ``LapRLS()`` refit on
a narrow heat graph (when the narrow graph's Poisson partition cuts less than
the default model's transduction) and keep it when its transduction's ratio cut
on the heat kNN graph is below half the default graph's
(:mod:`semisvm.models._graphwidth`).  This A/B fits both estimators on the
draws of ``bench_accuracy.py`` with the rule (arm ``rule``) and without it
(``off``: the default graph, as before) and appends one row per fit to
``--csv``: data set, setting, draw, estimator, arm, errors on U and on the
test points, the fit time, the graph chosen and the ratio of the two cuts
(``--arms rule`` runs the rule only, to compare with an earlier file's ``off``).

Usage::

    python benchmarks/studies/study_graph_width.py --only moons-200 iris \\
        --settings 1/class 2/class --draws 10 --csv graph_width.csv
    python benchmarks/studies/study_graph_width.py --summarize --csv graph_width.csv
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1] / "accuracy"))
from study_mid_power import draws, study_main  # noqa: E402

COLUMNS = ["dataset", "setting", "draw", "estimator", "arm", "err_unlabeled"]
COLUMNS += ["err_test", "fit_time", "chosen", "ratio"]


def run(args: argparse.Namespace) -> None:
    from semisvm import LapRLS, LapSVM, SolverOptions

    with open(args.csv, "a", newline="") as fh:
        w = csv.writer(fh)
        for name, s, d, X, y, tr, ytr, pos, unl, test in draws(args):
            for cls in [c for c in (LapSVM, LapRLS) if c.__name__ in args.estimators]:
                for arm in args.arms:
                    rule = "auto" if arm == "rule" else None
                    e = cls(random_state=0, options=SolverOptions(graph_width=rule))
                    t0 = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        e.fit(X[tr], ytr)
                    t = time.perf_counter() - t0
                    eu = float(np.mean(e.transduction_[pos] != y[unl]))
                    et = float("nan")
                    if len(test):
                        et = float(np.mean(e.predict(X[test]) != y[test]))
                    sel = e.graph_selection_ or {}
                    w.writerow(
                        [name, s, d, cls.__name__, arm, eu, et, t]
                        + [sel.get("chosen", "-"), sel.get("ratio", float("nan"))]
                    )
                    fh.flush()


def summarize(path: str) -> str:
    df = pd.read_csv(path, header=None, names=COLUMNS)
    if set(df.arm) != {"rule", "off"}:  # one arm (--arms): its errors only
        g = df.groupby(["dataset", "setting", "estimator", "arm"])
        return (100 * g.err_unlabeled.mean()).round(2).to_string()
    t = 100 * df.pivot_table(
        index=["dataset", "setting", "estimator"],
        columns="arm",
        values="err_unlabeled",
        aggfunc="mean",
    )
    t["rule - off"] = t["rule"] - t["off"]
    rule = df[df.arm == "rule"]
    t["narrow"] = rule.groupby(["dataset", "setting", "estimator"]).chosen.apply(
        lambda c: int((c == "narrow").sum())
    )
    t["draws"] = rule.groupby(["dataset", "setting", "estimator"]).size()
    cost = df.pivot_table(
        index=["dataset", "setting", "draw", "estimator"],
        columns="arm",
        values="fit_time",
    )
    ratio = (cost["rule"] / cost["off"]).median()
    d = t["rule - off"]
    return (
        t.round(2).to_string()
        + f"\n\n(cell, estimator) pairs: {len(t)}; better by > 0.5: {int((d < -0.5).sum())};"
        f" worse by > 0.5: {int((d > 0.5).sum())}; worst {d.max():+.2f}; mean"
        f" {d.mean():+.3f}; narrow graph kept in {int(t['narrow'].sum())} of"
        f" {int(t['draws'].sum())} fits; fit time rule / off: median {ratio:.2f}x"
    )


def main(argv: list[str] | None = None) -> int:
    return study_main(
        argv,
        __doc__,
        run,
        summarize,
        only=["moons-200", "iris"],
        settings=["1/class", "2/class"],
        csv_name="study_graph_width.csv",
        extra=(
            (("--estimators",), dict(nargs="+", default=["LapSVM", "LapRLS"])),
            (("--arms",), dict(nargs="+", default=["rule", "off"])),
        ),
    )


if __name__ == "__main__":
    raise SystemExit(main())
