"""Ten classes against one on the Nyström operator's m-space solver.

The estimators' ``kernel_approximation="nystroem"`` solves each one-vs-rest column
by Newton in the (r+1)-dimensional feature space (:mod:`semisvm.solvers._lowrank`),
after forming the shared :math:`M = \\tilde\\Phi^T L \\tilde\\Phi` once.  This script
times that solve for 1 and 10 classes, with the Newton systems solved from one
shared factorisation (Woodbury, the current code) and, for comparison, one
Cholesky factorisation per class and Newton step (the code before), interleaved
medians in one run; and the whole ``LapSVM`` fit (10 classes vs 1) on the same
features.

Usage::

    python benchmarks/scale/bench_lowrank_classes.py [--r 1000 2000] [--l 100 500]

Appends its table to ``benchmarks/scale/results/pcg_columns.md``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import machine_description, markdown_table  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "scale" / "results" / "pcg_columns.md"


def problem(n: int, r: int, l: int, C: int, seed: int = 0):
    """Features of a 10-cluster mixture, a kNN Laplacian, l labels, C columns."""
    from semisvm.graph import graph_laplacian, knn_graph
    from semisvm.kernels import NystroemFactor
    from semisvm.solvers._lowrank import intrinsic_gram

    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(10, 20)) * 3
    cls = rng.integers(0, 10, size=n)
    X = (centres[cls] + rng.normal(size=(n, 20))).astype(np.float32)
    F = NystroemFactor(r, gamma=1.0 / 40, random_state=0).fit(X)
    Phi = F.features_.astype(np.float64)
    L = graph_laplacian(knn_graph(X, 10), normalized=True)
    M = intrinsic_gram(Phi, L, intrinsic_bias=True)
    lab = rng.choice(n, l, replace=False)
    Y = np.zeros((n, C))
    for c in range(C):
        Y[lab, c] = np.where(cls[lab] % C == c, 1.0, -1.0)
    return Phi, L, M, Y


def solve(Phi, L, M, Y, shared: bool):
    from semisvm.solvers import _lowrank

    orig = _lowrank._ErrorSetSolver.__init__

    def direct(self, R, P):
        self.R, self.P, self.W = R, P, None

    if not shared:
        _lowrank._ErrorSetSolver.__init__ = direct
    try:
        t0 = time.perf_counter()
        res = _lowrank.lapsvm_lowrank(
            Phi, Y, L=L, M=M, gamma_a=1e-4, gamma_i=1.0, intrinsic_bias=True
        )
        return time.perf_counter() - t0, res
    finally:
        _lowrank._ErrorSetSolver.__init__ = orig


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=20000)
    p.add_argument("--r", type=int, nargs="+", default=[1000, 2000])
    p.add_argument("--l", type=int, nargs="+", default=[100, 500])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--no-append", action="store_true")
    args = p.parse_args()
    machine = machine_description()
    load0 = os.getloadavg()[0]
    rows = []
    for r in args.r:
        for l in args.l:
            probs = {C: problem(args.n, r, l, C) for C in (1, 10)}
            times: dict = {}
            iters: dict = {}
            for _ in range(args.repeat):
                for C in (1, 10):
                    for shared in (False, True):
                        t, res = solve(*probs[C], shared)
                        times.setdefault((C, shared), []).append(t)
                        iters[(C, shared)] = int(np.sum(res.n_iter))
            med = {k: float(np.median(v)) for k, v in times.items()}
            # the two ways give the same model
            _, a = solve(*probs[10], False)
            _, b = solve(*probs[10], True)
            diff = float(np.abs(a.alpha - b.alpha).max() / np.abs(a.alpha).max())
            rows.append(
                [
                    r,
                    l,
                    f"{med[(1, False)]:.3f}",
                    f"{med[(10, False)]:.3f}",
                    f"{med[(10, False)] / med[(1, False)]:.2f}",
                    f"{med[(1, True)]:.3f}",
                    f"{med[(10, True)]:.3f}",
                    f"{med[(10, True)] / med[(1, True)]:.2f}",
                    f"{iters[(1, True)]} / {iters[(10, True)]}",
                    f"{diff:.1e}",
                ]
            )
            print(rows[-1], flush=True)
    head = [
        "r",
        "labels",
        "per-step Cholesky, 1 class s",
        "10 classes s",
        "ratio",
        "shared factorisation, 1 class s",
        "10 classes s",
        "ratio",
        "Newton steps 1 / 10 classes",
        "max |alpha diff| / max |alpha|",
    ]
    body = (
        "### Nyström m-space solve: 10 classes against 1 "
        "(`bench_lowrank_classes.py`)\n\n"
        f"n = {args.n}, 10-cluster mixture (d = 20), M formed before the timing "
        "(shared by every class), gamma_A = 1e-4, gamma_I = 1, intrinsic bias; "
        f"median of {args.repeat} interleaved rounds; load average (1 min) at "
        f"start {load0:.2f}.\n\n" + markdown_table(head, rows)
    )
    print(body)
    if not args.no_append:
        cmd = "python benchmarks/scale/bench_lowrank_classes.py " + " ".join(
            sys.argv[1:]
        )
        with open(RESULTS, "a") as fh:
            fh.write(f"\n## Run {machine['date']}\n\nCommand: `{cmd}`\n\n")
            fh.write(f"- commit {machine['commit']}; BLAS {machine['blas']}\n\n")
            fh.write(body.rstrip() + "\n")
        print(f"appended to {RESULTS}")


if __name__ == "__main__":
    main()
