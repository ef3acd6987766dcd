"""Command line interface: ``semisvm reproduce | fit | predict``.

Examples
--------
Reproduce the experiments of Melacci & Belkin (2011) on G50C with 2 splits::

    semisvm reproduce --data-dir ../shared/data --datasets g50c --splits 2 --out res

Train a LapSVM on your own file (last CSV column = label, -1 = unlabeled) and
predict on another one::

    semisvm fit --train train.csv --model-out model.pkl --gamma-a 1e-2 --gamma-i 1
    semisvm predict --model model.pkl --data test.csv --out preds.csv
"""

from __future__ import annotations

import argparse
import pickle
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["main", "build_parser"]

_MODEL_FORMAT = "semisvm-cli-model-1"


def _float_or_str(v: str) -> float | str:
    try:
        return float(v)
    except ValueError:
        return v


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``semisvm`` command."""
    from .experiments._reproduce import ALL_CLASSIFIERS, DEFAULT_DATASETS

    parser = argparse.ArgumentParser(
        prog="semisvm",
        description="Semi-supervised kernel classification (LapSVM, LapRLS).",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    r = sub.add_parser(
        "reproduce",
        help="reproduce the experiments of Melacci & Belkin (2011), Section 6",
        description=(
            "Run the protocol of Melacci & Belkin (2011) (12 splits = stratified 4 "
            "folds x 3 repeats; parameters of Tables 8-9) and write Tables 3, 4, 6, 7 "
            "(ours next to the paper's), a per-split CSV and Figures 3-12. MNIST3VS8 "
            "and FACEMIT are not available."
        ),
    )
    r.add_argument("--data-dir", default=None,
                   help="directory with the benchmark files (default: $SEMISVM_DATA, "
                   "else ../shared/data)")
    r.add_argument("--datasets", default=",".join(DEFAULT_DATASETS),
                   help="comma-separated: g50c,coil20b,pcmac,uspstb,coil20,uspst "
                   "(default: all six)")
    r.add_argument("--splits", type=int, default=12, help="number of splits (1-12)")
    r.add_argument("--out", default="reproduce_out", help="output directory")
    r.add_argument("--classifiers", default=",".join(ALL_CLASSIFIERS),
                   help="comma-separated subset of " + ",".join(ALL_CLASSIFIERS))
    r.add_argument("--random-state", type=int, default=0)
    r.add_argument("--graph-weight", choices=("binary", "heat"), default="binary")
    r.add_argument("--no-intrinsic-bias", dest="intrinsic_bias", action="store_false",
                   help="intrinsic term on K alpha only (Eq. 7 as printed) instead of "
                   "K alpha + b (footnote 1, normalized Laplacian)")
    r.add_argument("--no-figures", dest="figures", action="store_false")
    r.add_argument("--blas-threads", type=int, default=1,
                   help="BLAS threads during the run (0 = library default)")
    r.add_argument("--quiet", action="store_true", help="no progress bar")

    f = sub.add_parser("fit", help="train a LapSVM / LapRLS on a data file")
    f.add_argument("--train", required=True,
                   help="csv (last column = label), npz (X, y) or svmlight file")
    f.add_argument("--model-out", default="model.pkl")
    f.add_argument("--unlabeled-label", type=float, default=-1,
                   help="label value that marks an unlabeled row (default -1)")
    f.add_argument("--model", choices=("lapsvm", "laprls"), default="lapsvm")
    f.add_argument("--solver", default=None,
                   help="lapsvm: pcg | newton | dual; laprls: direct | pcg")
    f.add_argument("--gamma-a", type=float, default=1e-6)
    f.add_argument("--gamma-i", type=float, default=1.0)
    f.add_argument("--kernel", default="rbf", choices=("rbf", "poly", "linear"))
    f.add_argument("--gamma", type=_float_or_str, default="median",
                   help="RBF gamma = 1/(2 sigma^2), or 'median' / 'scale'")
    f.add_argument("--sigma", type=float, default=None,
                   help="Gaussian width (sets gamma = 1/(2 sigma^2))")
    f.add_argument("--degree", type=int, default=3)
    f.add_argument("--n-neighbors", type=int, default=10)
    f.add_argument("--graph-weight", choices=("binary", "heat"), default="binary")
    f.add_argument("--laplacian-power", type=int, default=1)
    f.add_argument("--unnormalized-laplacian", action="store_true")
    f.add_argument("--early-stopping", default="stability",
                   choices=("stability", "validation", "mixed", "none"))
    f.add_argument("--max-iter", type=int, default=1000)
    f.add_argument("--tol", type=float, default=1e-6)
    f.add_argument("--random-state", type=int, default=None)

    p = sub.add_parser("predict", help="predict with a model saved by 'semisvm fit'")
    p.add_argument("--model", required=True)
    p.add_argument("--data", required=True,
                   help="csv (a label column is ignored if present: use "
                   "--has-label), npz (X) or svmlight file")
    p.add_argument("--has-label", action="store_true",
                   help="the csv has a last label column (drop it; report accuracy)")
    p.add_argument("--out", default=None, help="csv of predictions (default: stdout)")
    return parser


# ---------------------------------------------------------------- reproduce
def _cmd_reproduce(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from .experiments._reproduce import run_reproduction

    clfs = [c.strip() for c in args.classifiers.split(",") if c.strip()]
    command = "semisvm " + " ".join(shlex.quote(a) for a in argv)
    t0 = time.perf_counter()
    res = run_reproduction(
        args.datasets, data_dir=args.data_dir, n_splits=args.splits, classifiers=clfs,
        out_dir=args.out, random_state=args.random_state,
        graph_weight=args.graph_weight, intrinsic_bias=args.intrinsic_bias,
        figures=args.figures, progress=not args.quiet, command=command,
        blas_threads=args.blas_threads or None,
    )
    for m in res.messages:
        print(m)
    if not res.messages:
        print("MNIST3VS8 and FACEMIT are not available here (no data files): their "
              "rows show the paper's numbers only.")
    out = Path(args.out)
    print(f"Done in {time.perf_counter() - t0:.1f} s. Tables: {out / 'tables.md'}")
    print(f"Per-split results: {out / 'per_split.csv'}; {len(res.files)} files written.")
    return 0


# ---------------------------------------------------------------- fit / predict
def _load_xy(path: str) -> tuple[Any, np.ndarray | None]:
    from .datasets._loaders import load_data_file

    return load_data_file(path)


def _cmd_fit(args: argparse.Namespace) -> int:
    from . import LapRLS, LapSVM

    X, y = _load_xy(args.train)
    if y is None:
        raise ValueError(f"{args.train}: no labels found (need y / a label column).")
    y = np.asarray(y)
    unl = y == args.unlabeled_label
    classes = np.unique(y[~unl])
    if classes.size < 2:
        raise ValueError(
            f"{args.train}: need labeled points of at least two classes; found "
            f"{classes.tolist()} (unlabeled marker {args.unlabeled_label:g})."
        )
    # encode classes as 0..k-1 so that -1 is free to mean "unlabeled"
    y_enc = np.full(y.shape[0], -1, dtype=np.int64)
    y_enc[~unl] = np.searchsorted(classes, y[~unl])
    gamma = args.gamma if args.sigma is None else 1.0 / (2.0 * args.sigma**2)
    common = dict(
        gamma_a=args.gamma_a, gamma_i=args.gamma_i, kernel=args.kernel, gamma=gamma,
        degree=args.degree, n_neighbors=args.n_neighbors,
        graph_weight=args.graph_weight, laplacian_power=args.laplacian_power,
        normalize_laplacian=not args.unnormalized_laplacian, max_iter=args.max_iter,
        tol=args.tol, random_state=args.random_state,
        regularization="paper",  # the CLI's --gamma-a/--gamma-i are the paper's weights
    )
    es = None if args.early_stopping == "none" else args.early_stopping
    if args.model == "lapsvm":
        est = LapSVM(solver=args.solver or "pcg",
                     early_stopping=es if (args.solver or "pcg") == "pcg" else None,
                     **common)
    else:
        est = LapRLS(solver=args.solver or "direct",
                     early_stopping=es if args.solver == "pcg" else None, **common)
    if es in ("validation", "mixed"):
        est.set_params(validation_fraction=0.2)
    est.fit(X, y_enc)
    with open(args.model_out, "wb") as fh:
        pickle.dump({"format": _MODEL_FORMAT, "estimator": est, "classes": classes,
                     "n_features": X.shape[1]}, fh)
    n_lab = int((~unl).sum())
    print(f"Trained {type(est).__name__}(solver={est.solver!r}) on {X.shape[0]} points "
          f"({n_lab} labeled, {X.shape[0] - n_lab} unlabeled, {classes.size} classes) "
          f"in {sum(est.fit_times_.values()):.3f} s; stopped by "
          f"{est.termination_condition_!r} after {est.n_iter_} iteration(s).")
    if unl.any():
        tr = classes[est.transduction_[unl]]
        vals, counts = np.unique(tr, return_counts=True)
        print("Labels given to the unlabeled points: "
              + ", ".join(f"{v:g}: {c}" for v, c in zip(vals, counts, strict=True)))
    print(f"Model written to {args.model_out}")
    return 0


def _cmd_predict(args: argparse.Namespace) -> int:
    mpath = Path(args.model)
    if not mpath.is_file():
        from .datasets._loaders import DataFileNotFoundError

        raise DataFileNotFoundError(
            f"Model file {mpath.name!r} not found in directory "
            f"{str(mpath.parent.resolve())!r}."
        )
    with open(mpath, "rb") as fh:
        bundle = pickle.load(fh)  # noqa: S301 - the user's own model file
    if not isinstance(bundle, dict) or bundle.get("format") != _MODEL_FORMAT:
        raise ValueError(f"{args.model} is not a model written by 'semisvm fit'.")
    est, classes = bundle["estimator"], bundle["classes"]
    X, y = _load_xy(args.data)
    ext = Path(args.data).suffix.lower()
    if ext in (".csv", ".tsv", ".txt") and not args.has_label and y is not None:
        # a csv whose column count equals n_features has no label column
        if X.shape[1] + 1 == bundle["n_features"]:
            X = np.c_[X, y]
            y = None
    if X.shape[1] != bundle["n_features"]:
        raise ValueError(
            f"{args.data} has {X.shape[1]} features; the model expects "
            f"{bundle['n_features']}."
        )
    pred = classes[est.predict(X)]
    scores = np.asarray(est.decision_function(X))
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("prediction,score\n" if scores.ndim == 1 else "prediction\n")
            for k, v in enumerate(pred):
                fh.write(f"{v:g},{scores[k]:.6g}\n" if scores.ndim == 1 else f"{v:g}\n")
        print(f"{pred.size} predictions written to {args.out}")
    else:
        for v in pred:
            print(f"{v:g}")
    if y is not None and (args.has_label or ext not in (".csv", ".tsv", ".txt")):
        y = np.asarray(y)
        known = np.isin(y, classes)
        if known.any():
            acc = float(np.mean(pred[known] == y[known]))
            print(f"Accuracy on the {int(known.sum())} labeled rows: {100 * acc:.2f}%",
                  file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``semisvm`` command.

    Parameters
    ----------
    argv : sequence of str, default=None
        Arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit status: 0 on success, 1 on a data or input error, 2 on bad usage.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    from .datasets._loaders import DataFileNotFoundError

    try:
        if args.command == "reproduce":
            return _cmd_reproduce(args, argv)
        if args.command == "fit":
            return _cmd_fit(args)
        return _cmd_predict(args)
    except DataFileNotFoundError as exc:
        print(f"semisvm {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:
        print(f"semisvm {args.command}: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
