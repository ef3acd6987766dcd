"""A/B of one module constant of the package on the draws of ``bench_accuracy.py``.

Fits ``LapSVM()`` and ``LapRLS()`` once per value of ``--constant`` (``module:NAME``,
e.g. ``semisvm.models._graphwidth:NARROW_HEATS``; ``--values`` as Python literals,
the first the baseline) and appends one row per fit to ``--csv``: data set,
setting, draw, estimator, value, the errors on U and on the test points, the fit
time, and the graph-width rule's choice (``graph_selection_``: the chosen graph
and the narrow width in mean edges; empty where the rule did not run).

Usage::

    python benchmarks/studies/study_constant.py --only circles10-2000 \\
        --settings 1/class --draws 10 --csv ladder.csv \\
        --constant semisvm.models._graphwidth:NARROW_HEATS --values "(0.5,)" "(0.5, 0.35)"
"""

from __future__ import annotations

import ast
import csv
import importlib
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1] / "accuracy"))
from study_mid_power import draw_parser, draws  # noqa: E402


def main() -> None:
    from semisvm import LapRLS, LapSVM

    ap = draw_parser(__doc__.splitlines()[0])
    ap.add_argument("--constant", required=True, help="module:NAME")
    ap.add_argument("--values", nargs="+", required=True, help="Python literals")
    args = ap.parse_args()
    module_name, attr = args.constant.split(":")
    module = importlib.import_module(module_name)
    original = getattr(module, attr)
    values = [ast.literal_eval(v) for v in args.values]
    with open(args.csv, "a", newline="") as fh:
        w = csv.writer(fh)
        for name, s, d, X, y, tr, ytr, pos, unl, test in draws(args):
            for cls in (LapSVM, LapRLS):
                for text, value in zip(args.values, values, strict=True):
                    setattr(module, attr, value)
                    try:
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            t = time.perf_counter()
                            e = cls(random_state=0).fit(X[tr], ytr)
                            t = time.perf_counter() - t
                    finally:
                        setattr(module, attr, original)
                    eu = float(np.mean(e.transduction_[pos] != y[unl]))
                    et = (
                        float(np.mean(e.predict(X[test]) != y[test]))
                        if len(test)
                        else float("nan")
                    )
                    gs = e.graph_selection_ or {}
                    w.writerow(
                        [
                            name,
                            s,
                            d,
                            cls.__name__,
                            text,
                            eu,
                            et,
                            round(t, 4),
                            gs.get("chosen", ""),
                            gs.get("narrow_heat", ""),
                        ]
                    )
                    fh.flush()


if __name__ == "__main__":
    main()
