"""class_prior: the labels' proportions against 'auto' (the boundary moved into a
clear gap of the unlabeled outputs), on balanced and imbalanced two-class data
with balanced labels (2 and 5 per class).

    python benchmarks/studies/bench_class_prior.py            # 6 draws per cell
    python benchmarks/studies/bench_class_prior.py --quick    # 2 draws, fewer cells
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from _common import append_results, bench_parser, machine_description, markdown_table  # noqa: E402


def families():
    from sklearn.datasets import (
        load_breast_cancer,
        load_digits,
        make_circles,
        make_moons,
    )
    from sklearn.preprocessing import StandardScaler

    from semisvm.datasets import make_g50c

    bc = load_breast_cancer()
    xbc = StandardScaler().fit_transform(bc.data)
    d = load_digits()
    m = d.target < 2
    return {
        "moons 1:1": lambda s: make_moons(500, noise=0.1, random_state=s),
        "circles 1:1": lambda s: make_circles(
            500, noise=0.05, factor=0.5, random_state=s
        ),
        "G50C-like 1:1": lambda s: make_g50c(550, random_state=s)[::2],
        "breast cancer": lambda s: (xbc, bc.target),
        "digits 0/1": lambda s: (d.data[m] / 16, d.target[m]),
        "moons 1:4": lambda s: make_moons((100, 400), noise=0.1, random_state=s),
        "moons 1:9": lambda s: make_moons((50, 450), noise=0.1, random_state=s),
    }


def main(argv=None) -> int:
    from semisvm import LapSVM, SolverOptions

    ap = bench_parser(__doc__, data=False)
    ap.add_argument("--draws", type=int, default=6)
    args = ap.parse_args(argv)
    draws = 2 if args.quick else args.draws
    fams = families()
    if args.quick:
        fams = {k: fams[k] for k in ("moons 1:1", "moons 1:4")}
    rows = []
    for k in (2,) if args.quick else (2, 5):
        for name, gen in fams.items():
            acc = {None: [], "auto": []}
            frac = {None: [], "auto": []}
            truth = []
            for s in range(draws):
                rng = np.random.default_rng(s)
                X, yt = gen(s)
                y = np.full(yt.size, -1)
                idx = np.concatenate(
                    [
                        rng.choice(np.flatnonzero(yt == c), k, replace=False)
                        for c in np.unique(yt)
                    ]
                )
                y[idx] = yt[idx]
                U = y == -1
                truth.append(np.mean(yt[U] == 0))
                for cp in (None, "auto"):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        e = LapSVM(options=SolverOptions(class_prior=cp)).fit(X, y)
                    acc[cp].append(np.mean(e.transduction_[U] == yt[U]))
                    frac[cp].append(np.mean(e.transduction_[U] == 0))
            rows.append(
                [
                    name,
                    k,
                    draws,
                    f"{100 * np.mean(acc[None]):.1f}",
                    f"{100 * np.mean(acc['auto']):.1f}",
                    f"{np.mean(truth):.3f}",
                    f"{np.mean(frac[None]):.3f}",
                    f"{np.mean(frac['auto']):.3f}",
                ]
            )
            print(rows[-1], flush=True)
    body = (
        "### Accuracy on U (%) and fraction of class 0 on U, labels' proportions "
        "(None) vs class_prior='auto'\n\n"
        + markdown_table(
            [
                "data",
                "labels/class",
                "draws",
                "acc None",
                "acc auto",
                "class 0 true",
                "class 0 None",
                "class 0 auto",
            ],
            rows,
        )
    )
    print(body)
    if not args.no_save:
        append_results(
            "class_prior",
            "class_prior: labels' proportions vs 'auto'",
            " ".join(["python", *sys.argv]),
            body,
            machine_description(),
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
