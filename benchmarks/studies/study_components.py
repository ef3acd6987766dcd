"""The "auto" early stop on graphs with components without labels.

``early_stopping="auto"`` runs the stability rule only when every connected
component of the graph holds a labeled point (:mod:`semisvm.models._components`).
This study fits ``LapSVM()`` on the draws of ``bench_accuracy.py`` and, on every
draw where some component holds no label, also the previous behaviour
(``early_stopping="stability"``) and SVC on the labels; one row per draw:
data set, setting, draw, components, components without a label, the error on U
and fit time of ``LapSVM()``, its termination, then (changed draws only) the
error and time of the stability rule and SVC's error.

Usage::

    python benchmarks/studies/study_components.py --only clusters_cut-2000 \\
        --settings 2/class 5/class --draws 10 --csv components.csv
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


def main() -> None:
    from sklearn.svm import SVC

    from semisvm import LapSVM

    args = draw_parser(__doc__.splitlines()[0]).parse_args()
    with open(args.csv, "a", newline="") as fh:
        w = csv.writer(fh)
        for name, s, d, X, y, tr, ytr, pos, unl, _ in draws(args):
            Xtr = X[tr]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = time.perf_counter()
                e = LapSVM(random_state=0).fit(Xtr, ytr)
                t = time.perf_counter() - t
                gc = e.graph_components_ or {}
                row = [
                    name,
                    s,
                    d,
                    gc.get("n_components", -1),
                    gc.get("n_unlabeled", -1),
                    float(np.mean(e.transduction_[pos] != y[unl])),
                    round(t, 4),
                    e.termination_condition_,
                ]
                if gc.get("n_unlabeled", 0) > 0:
                    t = time.perf_counter()
                    o = LapSVM(random_state=0, early_stopping="stability")
                    o.fit(Xtr, ytr)
                    t = time.perf_counter() - t
                    lab = ytr != -1
                    sv = SVC().fit(Xtr[lab], ytr[lab])
                    row += [
                        float(np.mean(o.transduction_[pos] != y[unl])),
                        round(t, 4),
                        float(np.mean(sv.predict(X[unl]) != y[unl])),
                    ]
            w.writerow(row)
            fh.flush()


if __name__ == "__main__":
    main()
