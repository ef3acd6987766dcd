"""Benchmark: LapSVM regularization path vs the dual solved on a 50-point grid.

USPS digit pairs 2 vs 3, 5 vs 6 and 8 vs 9 (``usps_full.npz``), 2-32 labeled
points (balanced), as in Section 4.2 and Table 1 of

    G. Wang, T. Chen, D.-Y. Yeung and F. H. Lochovsky, "Solution path for
    semi-supervised classification with manifold regularization", ICDM 2006.

For every pair and labeled-set size the script

* computes the whole path with :func:`semisvm.solvers._path.lapsvm_path`
  (timed, including its one n x n LU factorisation),
* solves the LapSVM dual with LIBSVM (``SVC(kernel="precomputed")``, default
  tol) at 50 lambdas log-spaced over the same range (timed, including one
  factorisation of ``rho I + L K`` shared by the 50 solves),
* reports the best test accuracy along the whole path (exact: the error is a
  step function of lambda) and on the grid, next to the paper's Table 1.

Setup (the paper's where it is stated): per digit 600/1100 of the images for
training, the rest for testing; pixels rescaled to [-1, 1]; kNN graph with k = 6,
binary weights, L = D - W; rho = 1e-3.  The paper's Gaussian width
(``exp(-||x - z||^2 / sigma)``, sigma = 0.1) is for its 2-D data: on 256 pixels it
makes K the identity, so the median-distance rule is used instead
(``gamma = 1 / (2 median ||x - z||^2)``).

Usage::

    python benchmarks/bench_path.py [--quick] [--data-dir DIR] [--runs R]

Appends its table to ``benchmarks/results/path.md``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as cm  # noqa: E402 - benchmarks/_common.py (shared table helper)

REPO = Path(__file__).resolve().parents[1]
DATA_FILE = "usps_full.npz"

#: Wang et al. (ICDM 2006), Table 1: mean (std) best accuracy along the path, %.
PAPER_TABLE1 = {
    (2, 3): {2: (58.4, 15.6), 4: (79.1, 12.6), 8: (95.7, 3.4), 16: (97.9, 0.6),
             32: (98.4, 0.4)},
    (5, 6): {2: (61.7, 15.5), 4: (83.9, 10.8), 8: (95.3, 3.6), 16: (98.6, 1.0),
             32: (99.0, 0.3)},
    (8, 9): {2: (63.4, 16.7), 4: (73.8, 13.5), 8: (88.5, 7.9), 16: (95.7, 3.4),
             32: (97.1, 0.3)},
}  # fmt: skip


def find_data(data_dir: str | None) -> Path:
    """Locate ``usps_full.npz``; a clear error names the file and where it looked."""
    if data_dir is not None:
        tried = [Path(data_dir)]
    elif os.environ.get("SEMISVM_DATA"):
        tried = [Path(os.environ["SEMISVM_DATA"])]
    else:
        tried = [(REPO / ".." / "shared" / "data").resolve()]
    for d in tried:
        if (d / DATA_FILE).is_file():
            return d / DATA_FILE
    where = ", ".join(str(d) for d in tried)
    raise SystemExit(
        f"error: data file {DATA_FILE!r} not found; looked in: {where}. "
        "Pass --data-dir or set SEMISVM_DATA to the folder that holds it."
    )


def split_pair(X, y, a, b, rng, train_frac=600 / 1100):
    tr, te = [], []
    for d in (a, b):
        idx = rng.permutation(np.flatnonzero(y == d))
        k = int(round(train_frac * idx.size))
        tr.append(idx[:k])
        te.append(idx[k:])
    tr, te = np.concatenate(tr), np.concatenate(te)
    Xs = 2.0 * X.astype(np.float64) - 1.0  # [0, 1] -> [-1, 1]
    ys = np.where(y == b, 1.0, -1.0)
    return Xs[tr], ys[tr], Xs[te], ys[te]


def grid_duals(M, KP_test, y_l, lams):
    """LIBSVM on G = M / lambda at each lambda; test decision values (m, k)."""
    from sklearn.svm import SVC

    F = np.empty((KP_test.shape[0], lams.size))
    t0 = time.perf_counter()
    for j, lam in enumerate(lams):
        svc = SVC(kernel="precomputed", C=1.0).fit(M / lam, y_l)
        beta = np.zeros(y_l.size)
        beta[svc.support_] = np.abs(svc.dual_coef_[0])
        F[:, j] = KP_test @ beta / lam + svc.intercept_[0]
    return F, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--data-dir",
        default=None,
        help="folder with usps_full.npz (default: $SEMISVM_DATA, "
        "then ../shared/data relative to the repo root)",
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="2 runs per setting (finishes in well under a minute)",
    )
    ap.add_argument(
        "--runs",
        type=int,
        default=None,
        help="labeled sets drawn per setting (default 10, quick 2)",
    )
    ap.add_argument("--labels", type=int, nargs="+", default=[2, 4, 8, 16, 32])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rho", type=float, default=1e-3)
    ap.add_argument(
        "--results", default=str(REPO / "benchmarks" / "results" / "path.md")
    )
    ap.add_argument("--no-append", action="store_true", help="only print the table")
    args = ap.parse_args(argv)  # fmt: skip
    runs = args.runs or (2 if args.quick else 10)

    path_file = find_data(args.data_dir)

    import scipy
    import sklearn
    from sklearn.svm import SVC  # noqa: F401  (import cost outside the timings)
    from threadpoolctl import threadpool_info

    from semisvm.graph import graph_laplacian, knn_graph
    from semisvm.kernels import kernel_matrix, median_gamma
    from semisvm.models._path import path_error_pieces
    from semisvm.solvers._path import (
        PathWarning,
        _solve_path,
        lapsvm_path,
        translating_matrix,
    )

    data = np.load(path_file)
    X_all, y_all = data["X"], data["y"].astype(int)
    rng = np.random.default_rng(args.seed)
    rows = []
    n_warn = 0
    t_start = time.perf_counter()
    for a, b in ((2, 3), (5, 6), (8, 9)):
        Xtr, ytr, Xte, yte = split_pair(X_all, y_all, a, b, rng)
        gamma = median_gamma(Xtr)
        K = kernel_matrix(Xtr, gamma=gamma)
        Kte = kernel_matrix(Xte, Xtr, gamma=gamma)
        L = graph_laplacian(knn_graph(Xtr, 6), normalized=False)
        for nl in args.labels:
            rec = {"acc_path": [], "acc_grid": [], "t_path": [], "t_grid": [],
                   "t_lu": [], "t_bp": [], "t_svc": [], "events": [], "bps": []}  # fmt: skip
            for _ in range(runs):
                lab = np.r_[
                    rng.choice(np.flatnonzero(ytr < 0), nl // 2, replace=False),
                    rng.choice(np.flatnonzero(ytr > 0), nl - nl // 2, replace=False),
                ]
                # the solvers' convention: +1 / -1 labeled, 0 unlabeled
                T = np.zeros((ytr.size, 1))
                T[lab, 0] = np.where(ytr[lab] > 0, 1.0, -1.0)
                t0 = time.perf_counter()
                with warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter("always", PathWarning)
                    [res] = lapsvm_path(K, L, T, rho=args.rho)
                t_path = time.perf_counter() - t0
                n_warn += sum(issubclass(x.category, PathWarning) for x in w)
                KP = Kte @ res.P
                hi, lo, err = path_error_pieces(res, KP, yte)
                rec["acc_path"].append(100.0 * (1 - err.min() / yte.size))
                rec["t_path"].append(t_path)
                rec["events"].append(res.n_events)
                rec["bps"].append(res.lambdas.size)
                # grid: one factorisation of rho I + L K, then 50 dual solves
                labs = res.labeled
                t_pm = T[labs, 0]  # ±1 on the labeled rows
                t0 = time.perf_counter()
                P, M = translating_matrix(K, L, labs, t_pm, args.rho)
                t_lu = time.perf_counter() - t0
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", PathWarning)
                    _solve_path(M, t_pm, rho=args.rho)
                rec["t_bp"].append(time.perf_counter() - t0)
                lam_hi = res.lambdas[0]
                lam_lo = res.lambdas[-1] if res.lambdas.size > 1 else lam_hi / 100
                lams = np.geomspace(lam_hi, lam_lo, 50)
                F, t_grid = grid_duals(M, Kte @ P, t_pm, lams)
                acc = 100.0 * ((F > 0) == (yte > 0)[:, None]).mean(axis=0)
                rec["acc_grid"].append(acc.max())
                rec["t_grid"].append(t_lu + t_grid)
                rec["t_svc"].append(t_grid)
                rec["t_lu"].append(t_lu)
            p_mean, p_std = (
                PAPER_TABLE1[(a, b)][nl]
                if nl in PAPER_TABLE1[(a, b)]
                else (np.nan, np.nan)
            )
            rows.append({
                "pair": f"{a} vs {b}", "n_train": ytr.size, "n_test": yte.size,
                "l": nl, "runs": runs,
                "acc_path": (np.mean(rec["acc_path"]), np.std(rec["acc_path"])),
                "acc_grid": (np.mean(rec["acc_grid"]), np.std(rec["acc_grid"])),
                "paper": (p_mean, p_std),
                "events": (np.mean(rec["events"]), int(np.max(rec["events"]))),
                "t_path": np.mean(rec["t_path"]), "t_grid": np.mean(rec["t_grid"]),
                "t_lu": np.mean(rec["t_lu"]), "t_bp": np.mean(rec["t_bp"]),
                "t_svc": np.mean(rec["t_svc"]),
            })  # fmt: skip
    elapsed = time.perf_counter() - t_start

    header = [
        "pair",
        "n_train/n_test",
        "l",
        "runs",
        "best acc. on path %",
        "best on 50-grid %",
        "paper Table 1 %",
        "events mean (max)",
        "path s",
        "50-grid dual s",
        "LU s",
        "breakpoints only s",
        "50 dual solves only s",
    ]
    table = cm.markdown_table(
        header,
        [
            [
                r["pair"],
                f"{r['n_train']}/{r['n_test']}",
                r["l"],
                r["runs"],
                f"{r['acc_path'][0]:.1f} ({r['acc_path'][1]:.1f})",
                f"{r['acc_grid'][0]:.1f} ({r['acc_grid'][1]:.1f})",
                f"{r['paper'][0]:.1f} ({r['paper'][1]:.1f})",
                f"{r['events'][0]:.1f} ({r['events'][1]})",
                f"{r['t_path']:.3f}",
                f"{r['t_grid']:.3f}",
                f"{r['t_lu']:.3f}",
                f"{r['t_bp']:.4f}",
                f"{r['t_svc']:.4f}",
            ]
            for r in rows
        ],
    )
    print(table)
    print(f"\n{n_warn} PathWarning(s); total {elapsed:.1f} s")

    if not args.no_append:
        blas = ", ".join(
            f"{d.get('internal_api')} {d.get('version')} ({d.get('num_threads')} threads)"
            for d in threadpool_info()
        )
        import semisvm

        meta = [
            f"## {_dt.datetime.now().isoformat(timespec='seconds')}",
            "",
            f"- command: `{' '.join([Path(sys.executable).name] + sys.argv)}`",
            f"- machine: processor={platform.processor() or platform.machine()!r}, "
            f"cpu_count={os.cpu_count()}, {platform.platform()}",
            f"- versions: python {platform.python_version()}, numpy {np.__version__}, "
            f"scipy {scipy.__version__}, scikit-learn {sklearn.__version__}, "
            f"semisvm {semisvm.__version__}; BLAS: {blas}",
            f"- data: {path_file.name}; seed {args.seed}; rho {args.rho}; kNN 6, "
            "binary, L = D - W; RBF gamma by the median rule; pixels in [-1, 1]",
            f"- {n_warn} PathWarning(s); total run time {elapsed:.1f} s",
            "- timings are means per labeled set; 'path' = the whole "
            "`lapsvm_path` call (one n x n LU + all breakpoints); '50-grid dual' = "
            "one LU of rho I + L K + 50 LIBSVM dual solves (default tol) on lambdas "
            "log-spaced over the path's range; 'LU' = that factorisation alone; "
            "'breakpoints only' = following the path given M (no LU); '50 dual "
            "solves only' = the 50 LIBSVM solves given M",
            "- paper: Wang, Chen, Yeung & Lochovsky, ICDM 2006, Table 1 (their "
            "splits: 600/500 images per digit; runs unspecified)",
            "",
            table,
            "",
        ]
        out = Path(args.results)
        out.parent.mkdir(parents=True, exist_ok=True)
        new = not out.exists()
        with out.open("a") as fh:
            if new:
                fh.write(
                    "# LapSVM path benchmark (append-only)\n\n"
                    "Written by `benchmarks/bench_path.py`.\n\n"
                )
            fh.write("\n".join(meta) + "\n")
        print(f"appended to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
