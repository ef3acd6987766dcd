"""Solver time of dual, Newton and early-stopped PCG LapSVM as n grows.

Binary USPS (digits 0-4 against 5-9) from the full 9298-image set, n training
points (50 labeled, the rest unlabeled), USPST(B)'s setup of Melacci & Belkin
(2011, Tables 8-9): sigma = 9.4 on pixels in [-1, 1] (4.7 on the [0, 1] pixels of
usps_full), nn = 10, p = 2, normalized Laplacian, gamma_A = 1e-6 and gamma_I =
1e-2 (dual, Newton) or 1 (PCG).  Gram matrix and Laplacian precomputed (not
timed), one BLAS thread.

Usage::

    python reproduce/scaling.py --data-dir ../shared/data --sizes 1000,2000,4000,8000 \
        --out reproduce/melacci2011/scaling.md
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from semisvm.datasets._loaders import load_usps_full
from semisvm.datasets._splits import Split
from semisvm.experiments._paper_tables import REG_PARAMS
from semisvm.experiments._reproduce import prepare_split, run_classifier


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--sizes", default="1000,2000,4000,8000")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    data = load_usps_full(args.data_dir)
    y = (data.y >= 5).astype(int)
    rng = np.random.RandomState(0)
    lines = [
        "| n | kernel + graph (s) | Dual (s) | Newton (s) | PCG stability (s) "
        "| PCG iters | PCG/Newton | PCG/Dual | err U dual / Newton / PCG (%) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for n in (int(s) for s in args.sizes.split(",")):
        idx = rng.permutation(y.size)[:n]
        lab = np.r_[idx[y[idx] == 0][:1], idx[y[idx] == 1][:1]]
        lab = np.r_[lab, rng.choice(np.setdiff1d(idx, lab), 48, replace=False)]
        unl = np.setdiff1d(idx, lab)
        split = Split(np.sort(lab), unl, np.empty(0, int), np.empty(0, int))
        # the setting of the recorded scaling.md: binary weights, fitted bias
        prep = prepare_split(data.X, y, split, sigma=4.7, n_neighbors=10, power=2,
                             graph_weight="binary")
        rec = {}
        for clf in ("dual", "newton", "pcg_stability"):
            ga, gi = REG_PARAMS["uspst_b"][clf]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rec[clf] = run_classifier(prep, clf, ga, gi, fit_intercept=True)
        d, nw, p = rec["dual"], rec["newton"], rec["pcg_stability"]
        pre = prep.times["kernel"] + prep.times["graph"]
        line = (
            f"| {n} | {pre:.2f} | {d['time']:.2f} | {nw['time']:.2f} | {p['time']:.2f} "
            f"| {p['n_iter']:.0f} | {p['time'] / nw['time']:.3f} "
            f"| {p['time'] / d['time']:.3f} | {d['err_U']:.2f} / {nw['err_U']:.2f} / "
            f"{p['err_U']:.2f} |"
        )
        lines.append(line)
        print(line, flush=True)
        del prep
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    with threadpool_limits(limits=1, user_api="blas"):
        main()
