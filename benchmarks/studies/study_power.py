"""Graph size and Laplacian power against the data's intrinsic dimension.

Fits the graph-trusting model (``LapSVM(gamma_a=1e-6, gamma_i=1)``) with each
``(n_neighbors, laplacian_power)`` variant on the draws of ``bench_accuracy.py``
and prints the mean error on U per cell and variant, next to the Levina-Bickel
intrinsic dimension of the training points (``semisvm.graph.intrinsic_dimension``,
what ``laplacian_power="auto"`` reads).  Rows are appended to ``--csv``.

Besides the data sets of ``bench_accuracy.py`` it knows three synthetic families
that the rule was not set on: ``gauss<d>`` (two Gaussian classes in d
dimensions, means +-2/sqrt(d)), ``mc<d>`` (scikit-learn's make_classification,
d informative of 2d features, two clusters per class) and ``blobs<d>`` (four
isotropic blobs in d dimensions).

Usage::

    python benchmarks/studies/study_power.py --only g50c digits gauss100 \\
        --settings 1/class 5/class --draws 3 --variants 10:1 10:3 50:5 --csv p.csv
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
import bench_accuracy as ba  # noqa: E402


def load(name: str, ddir: Path):
    from sklearn import datasets as skd

    if name.startswith("gauss"):
        d = int(name[5:])
        rng = np.random.default_rng(5)
        y = rng.integers(2, size=1000)
        X = rng.normal(size=(1000, d))
        X += np.where(y == 1, 1.0, -1.0)[:, None] * (2.0 / np.sqrt(d))
        return X, y, None
    if name.startswith("mc"):
        d = int(name[2:])
        X, y = skd.make_classification(
            1500,
            n_features=2 * d,
            n_informative=d,
            n_redundant=0,
            n_clusters_per_class=2,
            class_sep=1.5,
            random_state=3,
        )
        return X, y, None
    if name.startswith("blobs"):
        X, y = skd.make_blobs(
            1500, n_features=int(name[5:]), centers=4, cluster_std=3.0, random_state=4
        )
        return X, y, None
    return ba.load(name, ddir)


def run(args: argparse.Namespace) -> None:
    from semisvm import LapSVM
    from semisvm.graph import intrinsic_dimension

    variants = [tuple(int(v) for v in s.split(":")) for s in args.variants]
    with open(args.csv, "a", newline="") as fh:
        w = csv.writer(fh)
        for name in args.only:
            X, y, tm = load(name, ba.data_dir(args.data))
            for s in args.settings:
                for d in range(args.draws):
                    lab, unl, _ = ba.draw_split(y, tm, s, d, name)
                    tr = np.sort(np.r_[lab, unl])
                    ytr = np.where(np.isin(tr, lab), y[tr], -1)
                    pos = np.searchsorted(tr, unl)
                    dim = intrinsic_dimension(X[tr])
                    for k, p in variants:
                        t0 = time.perf_counter()
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            est = LapSVM(
                                gamma_a=1e-6,
                                gamma_i=1.0,
                                n_neighbors=k,
                                laplacian_power=p,
                            ).fit(X[tr], ytr)
                        err = float(np.mean(est.transduction_[pos] != y[unl]))
                        t = time.perf_counter() - t0
                        w.writerow([name, s, d, round(dim, 3), k, p, err, round(t, 3)])
                        fh.flush()


def summarize(path: str) -> str:
    cols = ["dataset", "setting", "draw", "dim", "k", "p", "err", "time"]
    df = pd.read_csv(path, header=None, names=cols)
    t = df.pivot_table(
        index=["dataset", "setting"], columns=["k", "p"], values="err", aggfunc="mean"
    )
    dims = df.groupby(["dataset", "setting"]).dim.mean()
    header = ["data set", "setting", "dim"] + [f"k={k} p={p}" for k, p in t.columns]
    rows = [
        [ds, st, f"{dims[(ds, st)]:.1f}"]
        + ["-" if np.isnan(v) else f"{100 * v:.1f}" for v in t.loc[(ds, st)]]
        for ds, st in t.index
    ]
    return ba.markdown_table(header, rows, fmt=str)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="+", default=["g50c", "digits"])
    ap.add_argument("--settings", nargs="+", default=["1/class", "5/class"])
    ap.add_argument("--draws", type=int, default=3)
    ap.add_argument("--variants", nargs="+", default=["10:1", "10:2", "10:3"])
    ap.add_argument(
        "--data", default=None, help="default: $SEMISVM_DATA or ../shared/data"
    )
    ap.add_argument("--csv", default="study_power.csv")
    ap.add_argument("--summarize", action="store_true", help="only print the table")
    args = ap.parse_args(argv)
    if not args.summarize:
        run(args)
    print(summarize(args.csv))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
