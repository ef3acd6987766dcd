"""End to end: kernel + graph + solver, PCG against our own Newton and dual solvers.

Two data sets, each run in a fresh process per solver (so that each run has its
own peak memory):

* ``synthetic``: a 784-dimensional digits-like two-class mixture (a stand-in for
  MNIST 3 vs 8, which is not available here), 12,000 training points of which
  80 labeled, 2,000 test points;
* ``usps``: the full USPS set (``usps_full.npz``), 10 classes one-vs-rest, the
  7,291 training images with 100 labeled, tested on the 2,007 test images.

Solvers: ``LapSVM(solver="pcg")`` with the stability early-stopping rule (float32
data, so float32 K, and a float64 run), ``solver="newton"`` and ``solver="dual"``.
The speed-up is the ratio of whole ``fit`` times measured in the same run.

Usage::

    python benchmarks/bench_end_to_end.py             # full sizes (~30-40 min)
    python benchmarks/bench_end_to_end.py --quick     # 1,500 training points (< 2 min)
    python benchmarks/bench_end_to_end.py --data /path/to/data   # or $SEMISVM_DATA

Appends the table to ``benchmarks/results/end_to_end.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as cm  # noqa: E402

SCRIPT = Path(__file__).resolve()
METHODS = ("pcg", "pcg64", "newton", "dual")
# gamma_I per data set (gamma_A = 1e-6 for both), chosen on the quick splits by
# Newton's test error from {1e-2, 1e-1, 1}
GAMMA_I = {"synthetic": 1.0, "usps": 0.1}


def _rss_now_mib() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")  # pragma: no cover


def make_split(name: str, quick: bool, folder: Path, seed: int = 0):
    """Training data (y = -1 unlabeled), the true training labels, and test data."""
    if name == "synthetic":
        n_train, n_test, n_lab = (1000, 500, 40) if quick else (12000, 2000, 80)
        X, y = cm.digits_like(
            n_train + n_test, 784, n_classes=2, n_protos=8, random_state=seed
        )
        Xtr, ytr, Xte, yte = X[:n_train], y[:n_train], X[n_train:], y[n_train:]
    elif name == "usps":
        X, y, is_test = cm.load_usps(folder)
        Xtr, ytr, Xte, yte = X[~is_test], y[~is_test], X[is_test], y[is_test]
        n_lab = 100
        if quick:
            rng = np.random.default_rng(seed)
            tr = np.sort(rng.choice(ytr.size, 1000, replace=False))
            te = np.sort(rng.choice(yte.size, 500, replace=False))
            Xtr, ytr, Xte, yte = Xtr[tr], ytr[tr], Xte[te], yte[te]
            n_lab = 50
    else:
        raise ValueError(name)
    lab = cm.pick_labeled(ytr, n_lab, random_state=seed + 1)
    y_semi = np.full(ytr.size, -1)
    y_semi[lab] = ytr[lab]
    return Xtr, y_semi, ytr, Xte, yte


def worker(args: argparse.Namespace) -> None:
    """One fit in this process; prints one JSON line."""
    from semisvm import LapSVM, SolverOptions

    Xtr, y_semi, ytr, Xte, yte = make_split(
        args.dataset, args.quick, cm.data_dir(args.data)
    )
    if args.method == "pcg64":
        Xtr, Xte = Xtr.astype(np.float64), Xte.astype(np.float64)
    elif args.method in ("newton", "dual"):
        Xtr, Xte = Xtr.astype(np.float64), Xte.astype(np.float64)
    solver = "pcg" if args.method.startswith("pcg") else args.method
    gamma_i = args.gamma_i if args.gamma_i is not None else GAMMA_I[args.dataset]
    # gamma_a / gamma_i here are the paper's raw weights; early stopping is PCG's
    clf = LapSVM(
        solver=solver,
        gamma_a=args.gamma_a,
        gamma_i=gamma_i,
        n_neighbors=args.n_neighbors,
        early_stopping="stability" if solver == "pcg" else None,
        max_iter=args.max_iter,
        options=SolverOptions(
            regularization="paper",
            stability_tol=args.stability_tol,
            stability_value_tol=args.stability_value_tol,
        ),
    )
    rss0 = _rss_now_mib()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(Xtr, y_semi)
    t_fit = time.perf_counter() - t0
    peak = cm.peak_rss_mib()
    t0 = time.perf_counter()
    pred = clf.predict(Xte)
    t_pred = time.perf_counter() - t0
    unl = y_semi == -1
    n, d = Xtr.shape
    C = 1 if np.unique(ytr).size == 2 else np.unique(ytr).size
    k_bytes = n * n * (4 if Xtr.dtype == np.float32 else 8)
    n_iter = clf.n_iter_
    print(
        json.dumps(
            {
                "fit_s": t_fit,
                "kernel_s": clf.fit_times_["kernel"],
                "graph_s": clf.fit_times_["graph"],
                "solver_s": clf.fit_times_["solver"],
                "predict_s": t_pred,
                "test_error": float(np.mean(pred != yte)),
                "unlabeled_error": float(np.mean(clf.transduction_[unl] != ytr[unl])),
                "n_iter": int(np.max(n_iter)),
                "rss_before_mib": rss0,
                "peak_rss_mib": peak,
                "K_mib": k_bytes / 2**20,
                "n": n,
                "d": d,
                "C": C,
                "k": args.n_neighbors,
            }
        )
    )


def main(argv: list[str] | None = None) -> None:
    ap = cm.bench_parser(__doc__, worker=True)
    ap.add_argument("--datasets", nargs="*", default=["synthetic", "usps"])
    ap.add_argument(
        "--methods",
        nargs="*",
        default=None,
        help="default: all (pcg64 left out with --quick)",
    )
    ap.add_argument("--gamma-a", type=float, default=1e-6)
    ap.add_argument(
        "--gamma-i",
        type=float,
        default=None,
        help="default: per data set (synthetic 1, usps 0.1)",
    )
    ap.add_argument("--n-neighbors", type=int, default=10)
    ap.add_argument(
        "--stability-tol",
        type=float,
        default=0.015,
        help="eta of the stability rule (library default, the paper's 1.5%%)",
    )
    ap.add_argument("--stability-value-tol", type=float, default=0.05)
    ap.add_argument("--max-iter", type=int, default=3000)
    ap.add_argument("--timeout", type=float, default=3600.0)
    ap.add_argument("--dataset", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--method", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args)
        return
    machine = cm.machine_description()
    common = [
        f"--gamma-a={args.gamma_a}",
        f"--n-neighbors={args.n_neighbors}",
        f"--stability-tol={args.stability_tol}",
        f"--stability-value-tol={args.stability_value_tol}",
        f"--max-iter={args.max_iter}",
    ]
    if args.gamma_i is not None:
        common.append(f"--gamma-i={args.gamma_i}")
    methods = args.methods or (
        [m for m in METHODS if m != "pcg64"] if args.quick else list(METHODS)
    )
    if args.quick:
        common.append("--quick")
    if args.data:
        common.append(f"--data={args.data}")
    rows = []
    for ds in args.datasets:
        res = {}
        for m in methods:
            r = cm.run_worker(
                SCRIPT,
                [f"--dataset={ds}", f"--method={m}", *common],
                timeout=args.timeout,
            )
            res[m] = r
            msg = r.get("error") or (
                f"fit {r['fit_s']:.2f}s (kernel {r['kernel_s']:.2f}, "
                f"graph {r['graph_s']:.2f}, solver "
                f"{r['solver_s']:.2f}, {r['n_iter']} iter), "
                "test error "
                f"{100 * r['test_error']:.2f}%, peak "
                f"{r['peak_rss_mib']:.0f} MiB"
            )
            print(f"{ds:9s} {m:7s} {msg}", flush=True)
        ref = res.get("pcg", {})
        for m, r in res.items():
            if "error" in r:
                rows.append([ds, m, r["error"]] + [float("nan")] * 10)
                continue
            extra = r["peak_rss_mib"] - r["rss_before_mib"]
            o_n = 8 * r["n"] * (r["d"] + r["C"] + r["k"]) / 2**20
            speed = (r["fit_s"] / ref["fit_s"]) if "fit_s" in ref else float("nan")
            speed_s = (
                (r["solver_s"] / ref["solver_s"]) if "solver_s" in ref else float("nan")
            )
            rows.append(
                [
                    ds,
                    m,
                    f"{r['n']}x{r['d']}, C={r['C']}",
                    r["fit_s"],
                    r["kernel_s"],
                    r["graph_s"],
                    r["solver_s"],
                    r["n_iter"],
                    100 * r["test_error"],
                    speed,
                    speed_s,
                    extra,
                    (extra - r["K_mib"]) / o_n,
                ]
            )
        for other in ("newton", "dual"):
            if "fit_s" in ref and "fit_s" in res.get(other, {}):
                o = res[other]
                print(
                    f"{ds}: pcg is {o['fit_s'] / ref['fit_s']:.1f}x faster than {other}"
                    f" end to end; test error pcg {100 * ref['test_error']:.2f}% vs "
                    f"{other} {100 * o['test_error']:.2f}% (diff "
                    f"{100 * (ref['test_error'] - o['test_error']):+.2f} points)"
                )
    table = cm.markdown_table(
        [
            "data",
            "solver",
            "training set",
            "fit (s)",
            "kernel (s)",
            "graph (s)",
            "solver (s)",
            "iterations",
            "test error (%)",
            "fit time / pcg fit time",
            "solver time / pcg solver time",
            "peak RSS of fit (MiB)",
            "(peak - K) / [8 n (d + C + k) bytes]",
        ],
        rows,
    )
    gi = args.gamma_i if args.gamma_i is not None else GAMMA_I
    params = (
        f"gamma_a={args.gamma_a}, gamma_i={gi}, n_neighbors="
        f"{args.n_neighbors}, normalized Laplacian, RBF with median gamma; pcg: "
        f"early_stopping='stability', stability_tol={args.stability_tol}, "
        f"stability_value_tol={args.stability_value_tol}"
    )
    body = (
        f"Parameters: {params}. `pcg`: float32 data, so float32 K; the others "
        "float64.\n\n" + table + "\n"
    )
    print(body)
    if not args.no_save:
        cmd = "python benchmarks/bench_end_to_end.py" + (
            " --quick" if args.quick else ""
        )
        path = cm.append_results(
            "end_to_end", "End to end: PCG vs Newton vs dual", cmd, body, machine
        )
        print(f"appended to {path}")


if __name__ == "__main__":
    main()
