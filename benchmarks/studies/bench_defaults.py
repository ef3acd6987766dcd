"""Accuracy of the untuned defaults: LapSVM(), LapRLS()
against SVC() on the labels alone and LabelSpreading(kernel="knn").

For every data set and every number of labels per class, ``--draws`` random
label draws (stratified: the same number of labels per class); the error is
measured on the unlabeled training points.  Also counted: fits whose
predictions on the unlabeled points are one constant class.

    python benchmarks/studies/bench_defaults.py            # full run, appends results/defaults.md
    python benchmarks/studies/bench_defaults.py --quick    # small sizes, < 2 min
    python benchmarks/studies/bench_defaults.py --only moons,circles --sizes 20000 --draws 3

Input conventions (as a practitioner would use the estimators): the scikit-learn
tabular sets with features on different scales (breast cancer, wine) are
standardized; everything else is used as stored (digits raw pixels, COIL20 unit-
norm images, PCMAC sparse tf-idf).  Every method sees the same input.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import append_results, data_dir, machine_description, markdown_table  # noqa: E402


def _sets(args):
    from sklearn import datasets as skd
    from sklearn.preprocessing import StandardScaler

    from semisvm.datasets import load_benchmark, make_two_moons

    only = set(args.only.split(",")) if args.only else None

    def want(name):
        return only is None or name.split("@")[0] in only

    for n in args.sizes:
        if want("moons"):
            X, _, y = make_two_moons(n, n_labeled_per_class=None, random_state=0)
            yield f"moons@{n}", X.astype(np.float32) if n > 5000 else X, y, None
        if want("circles"):
            X, y = skd.make_circles(n, noise=0.05, factor=0.5, random_state=0)
            yield f"circles@{n}", X.astype(np.float32) if n > 5000 else X, y, None
    if args.quick:
        return
    if want("digits"):
        d = skd.load_digits()
        yield "digits", d.data, d.target, None
    if want("breast_cancer"):
        d = skd.load_breast_cancer()
        yield "breast_cancer", StandardScaler().fit_transform(d.data), d.target, None
    if want("wine"):
        d = skd.load_wine()
        yield "wine", StandardScaler().fit_transform(d.data), d.target, None
    if want("iris"):
        d = skd.load_iris()
        yield "iris", d.data, d.target, None
    folder = data_dir(args.data)
    for name in ("g50c", "uspst", "pcmac", "coil20"):
        if not want(name):
            continue
        try:
            b = load_benchmark(name, folder)
        except FileNotFoundError as exc:
            print(f"skip {name}: {exc}")
            continue
        splits = getattr(b, "idx_labeled", None)
        yield name, b.X, np.asarray(b.y), splits


def _methods(n, solvers):
    from sklearn.semi_supervised import LabelSpreading
    from sklearn.svm import SVC

    from semisvm import LapRLS, LapSVM

    m = {
        "LapSVM()": ("ssl", LapSVM),
        "SVC() labels": ("sup", SVC),
        "LabelSpreading(knn)": ("ssl", lambda: LabelSpreading(kernel="knn")),
    }
    if n <= 5000:
        m["LapRLS()"] = ("ssl", LapRLS)
        if solvers:
            # the same model solved exactly: PCG without early stopping, and the dual
            m["LapSVM(PCG to tol)"] = (
                "ssl",
                lambda: LapSVM(early_stopping=None, max_iter=20000),
            )
            m["LapSVM(dual)"] = ("ssl", lambda: LapSVM(solver="dual"))
    return m


def run(args):
    rows = []
    for name, X, y, splits in _sets(args):
        classes = np.unique(y)
        n = X.shape[0]
        methods = _methods(n, args.solvers)
        cells = [c for c in args.labels if c > 0]  # --labels 0: paper splits only
        if args.paper_splits and splits is not None:
            cells.append("paper")
            methods["SVC(linear) labels"] = (
                "sup",
                lambda: __import__("sklearn.svm").svm.SVC(kernel="linear"),
            )
        for nl in cells:
            errs = {k: [] for k in methods}
            const = dict.fromkeys(methods, 0)
            secs = {k: [] for k in methods}
            for draw in range(args.draws):
                if nl == "paper":
                    if draw >= len(splits):
                        break
                    lab = np.asarray(splits[draw])
                else:
                    rng = np.random.default_rng(draw)
                    lab = np.concatenate(
                        [
                            rng.choice(np.flatnonzero(y == c), nl, replace=False)
                            for c in classes
                        ]
                    )
                yy = np.full(n, -1)
                yy[lab] = np.searchsorted(classes, y[lab])
                yt = np.searchsorted(classes, y)
                unl = yy == -1
                for k, (kind, make) in methods.items():
                    est = make()
                    t0 = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        if kind == "sup":
                            est.fit(X[lab], yy[lab])
                            pred = est.predict(X[unl])
                        else:
                            est.fit(X, yy)
                            pred = est.transduction_[unl]
                    secs[k].append(time.perf_counter() - t0)
                    errs[k].append(100 * np.mean(pred != yt[unl]))
                    const[k] += int(np.unique(pred).size == 1)
            base = np.mean(errs["SVC() labels"])
            for k in methods:
                if not errs[k]:
                    continue
                e = np.array(errs[k])
                rows.append(
                    [
                        name,
                        nl,
                        k,
                        float(e.mean()),
                        float(e.std()),
                        float(e.mean() - base),
                        const[k],
                        float(np.median(secs[k])),
                    ]
                )
                print(
                    " | ".join(
                        str(v) if not isinstance(v, float) else f"{v:.2f}"
                        for v in rows[-1]
                    ),
                    flush=True,
                )
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--no-save", action="store_true")
    p.add_argument("--data", default=None)
    p.add_argument("--only", default=None, help="comma-separated data set names")
    p.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=None,
        help="sizes of moons/circles (default 200 2000)",
    )
    p.add_argument(
        "--labels",
        type=int,
        nargs="+",
        default=None,
        help="labels per class (default 1 5)",
    )
    p.add_argument("--draws", type=int, default=None, help="label draws (default 10)")
    p.add_argument(
        "--paper-splits",
        action="store_true",
        help="also the authors' labeled/unlabeled splits of the paper sets "
        "(labels/class 'paper'; adds SVC(kernel='linear'))",
    )
    p.add_argument(
        "--solvers",
        action="store_true",
        help="also fit LapSVM with PCG run to tol (no early stopping) and "
        "with solver='dual' (n <= 5000)",
    )
    args = p.parse_args(argv)
    args.sizes = args.sizes or ([200, 1000] if args.quick else [200, 2000])
    args.labels = args.labels or ([1] if args.quick else [1, 5])
    args.draws = args.draws or (2 if args.quick else 10)
    machine = machine_description()
    t0 = time.perf_counter()
    rows = run(args)
    table = markdown_table(
        [
            "data",
            "labels/class",
            "method",
            "error % (unlabeled)",
            "std",
            "minus SVC",
            "constant fits",
            "median s/fit",
        ],
        rows,
    )
    print(table)
    if not args.no_save:
        cmd = "python benchmarks/studies/bench_defaults.py " + " ".join(
            argv or sys.argv[1:]
        )
        body = (
            f"{args.draws} label draws per cell (stratified), error on the "
            f"unlabeled training points; 'minus SVC' is the mean error minus that "
            f"of SVC() trained on the labels alone (negative: better); 'constant "
            f"fits' counts draws whose unlabeled predictions are one class. Total "
            f"{time.perf_counter() - t0:.0f} s.\n\n" + table + "\n"
        )
        print(
            append_results(
                "defaults",
                "Untuned defaults against SVC and LabelSpreading",
                cmd.strip(),
                body,
                machine,
            )
        )


if __name__ == "__main__":
    main()
