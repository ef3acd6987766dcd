"""Record (or compare) the choices of ``LapSVMCV()`` / ``LapRLSCV()`` on small
problems (the cost cuts must not change which candidate wins).

For six small problems (moons, circles, iris, wine, two digits subsets; 5-10
labels per class) the script fits both CV estimators and stores, per problem
and estimator, ``best_params_``, ``selection_`` (z, reason) and the decision
values on the training points in an ``.npz`` file.  With ``--compare REF`` it
reports every changed choice and the largest change of the decision values
against a file written before, and the transductive error of both.

Usage::

    python benchmarks/studies/cv_choices.py --save /tmp/before.npz
    python benchmarks/studies/cv_choices.py --compare /tmp/before.npz
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from typing import Any

import numpy as np


def _labels(y: np.ndarray, per_class: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = np.full(y.shape, -1)
    for c in np.unique(y):
        out[rng.choice(np.flatnonzero(y == c), per_class, replace=False)] = c
    return out


def problems() -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    """``(name, X, y, y_true)`` of the six problems."""
    from sklearn import datasets as skd
    from sklearn.preprocessing import StandardScaler

    from semisvm.datasets import make_two_moons

    out = []
    X, y, yt = make_two_moons(300, n_labeled_per_class=5, random_state=1)
    out.append(("moons_5", X, y, yt))
    Xc, yc = skd.make_circles(300, noise=0.08, factor=0.5, random_state=0)
    out.append(("circles_8", Xc, _labels(yc, 8, 0), yc))
    Xi, yi = skd.load_iris(return_X_y=True)
    out.append(("iris_5", Xi, _labels(yi, 5, 0), yi))
    Xw, yw = skd.load_wine(return_X_y=True)
    Xw = StandardScaler().fit_transform(Xw)
    out.append(("wine_10", Xw, _labels(yw, 10, 1), yw))
    Xd, yd = skd.load_digits(return_X_y=True)
    m = yd < 4
    out.append(("digits4_5", Xd[m], _labels(yd[m], 5, 2), yd[m]))
    m = np.isin(yd, (3, 5, 8, 9))
    out.append(("digits3589_10", Xd[m], _labels(yd[m], 10, 3), yd[m]))
    # two problems where the graph helps less (the search may leave the prior)
    Xb, yb = skd.load_breast_cancer(return_X_y=True)
    Xb = StandardScaler().fit_transform(Xb)
    out.append(("cancer_20", Xb, _labels(yb, 20, 4), yb))
    Xs, ys = skd.make_classification(
        400, n_features=20, n_informative=6, n_clusters_per_class=3, random_state=5
    )
    out.append(("blobs3_15", Xs, _labels(ys, 15, 5), ys))
    return out


def run() -> dict[str, Any]:
    from semisvm.model_selection import LapRLSCV, LapSVMCV

    res: dict[str, Any] = {}
    for name, X, y, yt in problems():
        for cls in (LapSVMCV, LapRLSCV):
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                m = cls().fit(X, y)
            key = f"{name}/{cls.__name__}"
            res[key] = dict(
                params=json.dumps(m.best_params_, sort_keys=True, default=str),
                z=float(m.selection_["z"]),
                reason=m.selection_["reason"],
                round2=json.dumps(m.cv_results_["params"], sort_keys=True, default=str),
                loss=np.asarray(m.cv_results_["mean_test_loss"], dtype=np.float64),
                dec=np.asarray(m.decision_function(X), dtype=np.float64),
                err=float(np.mean(m.transduction_ != yt)),
                time=time.perf_counter() - t0,
            )
            print(
                f"{key}: {res[key]['params']} err {res[key]['err']:.3f} "
                f"z {res[key]['z']:.3f} {res[key]['time']:.2f} s",
                flush=True,
            )
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--save", default=None)
    ap.add_argument("--compare", default=None)
    args = ap.parse_args(argv)
    res = run()
    if args.save:
        flat = {}
        for key, r in res.items():
            for f, v in r.items():
                flat[f"{key}|{f}"] = np.asarray(v)
        np.savez(args.save, **flat)
    if args.compare:
        ref = np.load(args.compare)
        changed = 0
        for key, r in res.items():
            p0 = str(ref[f"{key}|params"])
            d0 = ref[f"{key}|dec"]
            e0 = float(ref[f"{key}|err"])
            dd = float(np.abs(r["dec"] - d0).max() / max(np.abs(d0).max(), 1e-300))
            same = p0 == r["params"]
            r2 = str(ref[f"{key}|round2"]) == r["round2"]
            l0 = ref[f"{key}|loss"]
            dl = (
                float(np.abs(r["loss"] - l0).max() / max(np.abs(l0).max(), 1e-300))
                if r2
                else float("nan")
            )
            changed += not same
            print(
                f"{key}: {'same' if same else 'CHANGED'} choice, max rel. change of "
                f"the decision values {dd:.2e}, z {float(ref[f'{key}|z']):.3f} -> "
                f"{r['z']:.3f}, error {e0:.3f} -> {r['err']:.3f}, round 2 "
                f"{'same' if r2 else 'CHANGED'} (max rel. change of its criteria "
                f"{dl:.2e})"
                + ("" if same else f"\n    before {p0}\n    after  {r['params']}")
            )
        print(f"{changed} changed choice(s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
