"""The second Laplacian power between intrinsic dimension 5 and 16.

``laplacian_power="auto"`` gives p = 2 when 5 <= d < 16 and every class has at
least 5 labels (:func:`semisvm.graph.auto_laplacian_power`).  This A/B fits
``LapSVM()`` and ``LapRLS()`` on the draws of ``bench_accuracy.py`` twice: with
``"auto"`` and with the power of the earlier rule (3 from d >= 16, else 1), and
appends one row per fit to ``--csv``: data set, setting, draw, estimator, arm
(``auto`` or ``old``), the power used, the errors on U and on the test points,
the fit time and the (gamma_a, gamma_i) the auto rule chose.

Usage::

    python benchmarks/studies/study_mid_power.py --only pcmac xor_noise-1000 \\
        --settings 5/class 10/class --draws 5 --csv mid_power.csv
    python benchmarks/studies/study_mid_power.py --summarize --csv mid_power.csv
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

COLUMNS = [
    "dataset",
    "setting",
    "draw",
    "estimator",
    "arm",
    "power",
    "err_unlabeled",
    "err_test",
    "fit_time",
    "gamma_a",
    "gamma_i",
]


def _load(name: str, ddir: Path):
    if any(name.startswith(p) for p, _ in ba.HELDOUT_FAMILIES):
        return ba._load_heldout(name, ddir)
    return ba.load(name, ddir)


def draw_parser(description: str) -> argparse.ArgumentParser:
    """The arguments :func:`draws` reads (``--only``, ``--settings``,
    ``--first-draw``, ``--draws``, ``--data``) and ``--csv``, all but the first
    two and the CSV with defaults, as the A/B study scripts take them."""
    ap = argparse.ArgumentParser(description=description)
    add_draw_arguments(ap)
    ap.add_argument("--csv", required=True)
    return ap


def add_draw_arguments(ap: argparse.ArgumentParser) -> None:
    """The arguments :func:`draws` reads, on a parser or a subcommand's."""
    ap.add_argument("--only", nargs="+", required=True)
    ap.add_argument("--settings", nargs="+", required=True)
    ap.add_argument("--first-draw", type=int, default=0)
    ap.add_argument("--draws", type=int, default=10)
    ap.add_argument("--data", default=None)


def draws(args: argparse.Namespace):
    """Per draw of ``bench_accuracy.py`` (``--only``, ``--settings``,
    ``--first-draw``, ``--draws``): ``(name, setting, draw, X, y, tr, ytr, pos,
    unl, test)`` -- the training rows ``tr`` in order, their targets with -1 for
    the unlabeled ones, and the positions ``pos`` of the unlabeled rows in ``tr``."""
    ddir = ba.data_dir(args.data)
    for name in args.only:
        X, y, tm = _load(name, ddir)
        for s in args.settings:
            for d in range(args.first_draw, args.first_draw + args.draws):
                lab, unl, test = ba.draw_split(y, tm, s, d, name)
                tr = np.sort(np.r_[lab, unl])
                ytr = np.where(np.isin(tr, lab), y[tr], -1)
                yield name, s, d, X, y, tr, ytr, np.searchsorted(tr, unl), unl, test


def run(args: argparse.Namespace) -> None:
    from semisvm import LapRLS, LapSVM

    with open(args.csv, "a", newline="") as fh:
        w = csv.writer(fh)
        for name, s, d, X, y, tr, ytr, pos, unl, test in draws(args):
            for cls in (LapSVM, LapRLS):
                dim = float("nan")
                for arm in ("auto", "old"):
                    p = "auto" if arm == "auto" else (3 if dim >= 16 else 1)
                    t0 = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        e = cls(random_state=0, laplacian_power=p)
                        e.fit(X[tr], ytr)
                    t = time.perf_counter() - t0
                    if arm == "auto":
                        dim = e.intrinsic_dimension_
                    eu = float(np.mean(e.transduction_[pos] != y[unl]))
                    et = (
                        float(np.mean(e.predict(X[test]) != y[test]))
                        if len(test)
                        else float("nan")
                    )
                    sel = e.regularization_selection_
                    w.writerow(
                        [
                            name,
                            s,
                            d,
                            cls.__name__,
                            arm,
                            e.laplacian_power_,
                            eu,
                            et,
                            round(t, 3),
                            sel.get("gamma_a"),
                            sel.get("gamma_i"),
                        ]
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
    p = df[df.arm == "auto"].groupby(["dataset", "setting", "estimator"]).power.max()
    header = ["data set", "setting", "estimator", "power", "old", "auto", "auto - old"]
    rows = [
        [
            ds,
            st,
            est,
            str(p[(ds, st, est)]),
            f"{100 * t.loc[(ds, st, est), 'old']:.2f}",
            f"{100 * t.loc[(ds, st, est), 'auto']:.2f}",
            f"{100 * (t.loc[(ds, st, est), 'auto'] - t.loc[(ds, st, est), 'old']):+.2f}",
        ]
        for ds, st, est in t.index
    ]
    return ba.markdown_table(header, rows, fmt=str)


def study_main(
    argv: list[str] | None,
    doc: str,
    run,
    summarize,
    *,
    only: list[str],
    settings: list[str],
    csv_name: str,
    draws: int = 5,
    extra: tuple = (),
) -> int:
    """The command line of the A/B studies on the draws of ``bench_accuracy.py``:
    ``--only``, ``--settings``, ``--draws``, ``--first-draw``, ``--data``, the
    ``extra`` arguments (``(flags, keywords)`` pairs), ``--csv`` and
    ``--summarize``; runs ``run(args)`` unless summarizing, then prints
    ``summarize(csv)``."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--only", nargs="+", default=only)
    ap.add_argument("--settings", nargs="+", default=settings)
    ap.add_argument("--draws", type=int, default=draws)
    ap.add_argument(
        "--first-draw", type=int, default=0, help="draws first..first+draws-1"
    )
    ap.add_argument(
        "--data", default=None, help="default: $SEMISVM_DATA or ../shared/data"
    )
    for flags, keywords in extra:
        ap.add_argument(*flags, **keywords)
    ap.add_argument("--csv", default=csv_name)
    ap.add_argument("--summarize", action="store_true", help="only print the table")
    args = ap.parse_args(argv)
    if not args.summarize:
        run(args)
    print(summarize(args.csv))
    return 0


def main(argv: list[str] | None = None) -> int:
    return study_main(
        argv,
        __doc__,
        run,
        summarize,
        only=["pcmac", "xor_noise-1000"],
        settings=["5/class", "10/class"],
        csv_name="study_mid_power.csv",
    )


if __name__ == "__main__":
    raise SystemExit(main())
