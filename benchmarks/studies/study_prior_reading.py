"""One label per class: the mass or the count reading of the labels' proportions.

With a single label in a class (two classes, ``class_prior='auto'``), the
model's graph chooses how the labels' proportions are imposed on the
unlabeled outputs: by output mass (the class-mass balance of every earlier
version) or by count, whichever partition has the lower ratio cut
(:func:`semisvm.models._adaptive.prior_reading`).  This A/B fits ``LapSVM()`` and
``LapRLS()`` on the draws of ``bench_accuracy.py`` with the choice off (arm
``mass``, ``prior_reading="mass"``: the previous behaviour) and on (arm
``cut``), and appends one row per fit to ``--csv``: data set, setting, draw, estimator,
arm, the errors on U and on the test points, the fit time, and whether the
count reading was kept (the arm's balance offsets differ from ``mass``'s).
Arm ``binary`` compares the two readings' ratio cuts on the model's
kNN edges with unit weights (``--arms mass cut binary``).

Usage::

    python benchmarks/studies/study_prior_reading.py --only circles10-2000 \\
        --settings 1/class --draws 10 --csv prior_reading.csv
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

#: ``mass``: the previous behaviour; ``cut``: the readings compared by the
#: ratio cut of the model's own graph (the default); ``binary``: by the ratio
#: cut of the same edges with unit weights
ARMS = ("mass", "cut", "binary")


def binary_laplacian(laplacian):
    """The Laplacian of the graph with ``laplacian``'s edges at unit weight."""
    import scipy.sparse as sp

    L = sp.csr_array(getattr(laplacian, "base", laplacian))
    A = (L != 0).astype(np.float64)
    A.setdiag(0)
    A.eliminate_zeros()
    return sp.diags_array(np.asarray(A.sum(axis=1)).ravel()) - A


def main() -> None:
    from semisvm import LapRLS, LapSVM, SolverOptions
    from semisvm.models import _adaptive

    ap = draw_parser(__doc__.splitlines()[0])
    ap.add_argument("--arms", nargs="+", default=["mass", "cut"], choices=ARMS)
    args = ap.parse_args()
    original = _adaptive.prior_reading

    def on_unit_weights(F, unlabeled, prior, mass_offset, laplacian):
        return original(F, unlabeled, prior, mass_offset, binary_laplacian(laplacian))

    with open(args.csv, "a", newline="") as fh:
        w = csv.writer(fh)
        for name, s, d, X, y, tr, ytr, pos, unl, test in draws(args):
            for cls in (LapSVM, LapRLS):
                offsets = {}
                for arm in args.arms:
                    _adaptive.prior_reading = (
                        on_unit_weights if arm == "binary" else original
                    )
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        t = time.perf_counter()
                        opts = SolverOptions(
                            prior_reading="mass" if arm == "mass" else "auto"
                        )
                        e = cls(random_state=0, options=opts).fit(X[tr], ytr)
                        t = time.perf_counter() - t
                    offsets[arm] = np.asarray(e.class_balance_offset_)
                    eu = float(np.mean(e.transduction_[pos] != y[unl]))
                    et = (
                        float(np.mean(e.predict(X[test]) != y[test]))
                        if len(test)
                        else float("nan")
                    )
                    changed = (
                        arm != "mass"
                        and "mass" in offsets
                        and not np.array_equal(offsets["mass"], offsets[arm])
                    )
                    w.writerow(
                        [name, s, d, cls.__name__, arm, eu, et, round(t, 4), changed]
                    )
                    fh.flush()
        _adaptive.prior_reading = original


if __name__ == "__main__":
    main()
