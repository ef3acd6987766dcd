"""LapRLS's default solver: PCG with the "auto" early stop against the exact solve.

``LapRLS()`` fits on PCG with ``early_stopping="auto"``, as ``LapSVM()``; its
earlier default was ``solver="auto"`` (the direct solve up to 10,000 points, no
early stop).  This A/B fits both on the draws of ``bench_accuracy.py`` and
appends one row per fit to ``--csv``: data set, setting, draw, arm (``direct``:
``LapRLS(solver="auto", early_stopping=None)``, the old default; ``pcg_es``:
``LapRLS()``), the errors on U and on the test points, the fit time and the
largest iteration count.

Usage::

    python benchmarks/studies/study_laprls_stop.py --only spirals-1000 \\
        --settings 1/class 5/class --draws 10 --csv laprls_stop.csv
"""

from __future__ import annotations

import csv
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1] / "accuracy"))
from study_mid_power import draw_parser, draws  # noqa: E402

ARMS = {"direct": {"solver": "auto", "early_stopping": None}, "pcg_es": {}}


def main() -> None:
    from semisvm import LapRLS

    args = draw_parser(__doc__.splitlines()[0]).parse_args()
    with open(args.csv, "a", newline="") as fh:
        w = csv.writer(fh)
        for name, s, d, X, y, tr, ytr, pos, unl, test in draws(args):
            for arm, kw in ARMS.items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t = time.perf_counter()
                    e = LapRLS(random_state=0, **kw).fit(X[tr], ytr)
                    t = time.perf_counter() - t
                eu = float(np.mean(e.transduction_[pos] != y[unl]))
                et = (
                    float(np.mean(e.predict(X[test]) != y[test]))
                    if len(test)
                    else float("nan")
                )
                w.writerow(
                    [name, s, d, arm, eu, et, round(t, 4), int(np.max(e.n_iter_))]
                )
                fh.flush()


if __name__ == "__main__":
    main()
