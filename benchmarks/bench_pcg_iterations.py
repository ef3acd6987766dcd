"""PCG iterations against n: the paper's preconditioner vs the Nyström one; early stopping.

Part ``iterations``: LapSVM with the estimator's kernel and
graph defaults (RBF with median width, 10-NN binary normalized Laplacian,
gamma_A = 1e-6, gamma_I = 1, bias in the intrinsic term), float64 K, solved to
``tol = 1e-6`` (the paper's mixed criterion, confirmed on the true residual) with
``max_iter = 1000``, once with ``preconditioner="paper"`` (P = diag(1, K)) and once
with ``preconditioner="nystroem"`` (default rank), on

* two moons, 1 label per class;
* a 784-dimension manifold set, ``X = tanh(Z W)``, ``Z ~ N(0, I_10)``,
  ``W ~ N(0, 1/10)`` (10 x 784), class ``Z_1 + 0.5 sin(2 Z_2) > 0``, 50 labels,
* ``spiral_long``: two interleaved spirals whose arc length
  grows like n at a constant density along the arc (``t_max = 3 pi sqrt(n / 2000)``,
  noise 0.5), 5 labels per class: the graph's diameter grows like n, the case
  where a one-level preconditioner's iterations grow with the manifold's length.
  Fitted through the estimators (``LapSVM``, or ``LapRLS`` with ``--loss
  squared``; ``solver="pcg"``, ``gamma_a=1e-6, gamma_i=1`` with the estimators'
  normalization, the first Laplacian power, no early stop) so that the problem
  is the one users solve (local kernel width, the default graph; the times
  there are whole fits),

at n = 2k, 5k, 10k, 20k (20k: a 3.2 GB float64 K, once per process).
``--data`` picks the sets, ``--tol`` the tolerance, ``--loss squared`` gives LapRLS.

Part ``early``: accuracy on the unlabeled points of the
unstopped solution against the early-stopping rules, and the iterations they save,
on two moons (1 label per class) from n = 200 to 20,000 (50,000 needs the scale
operators: a dense K does not fit in ~3 GiB) and on digits (scikit-learn's 8x8
digits, 10 classes, 1 and 5 labels per class; and the synthetic 784-dimension
digits-like set of ``_common.digits_like``, binary, 1% labels, up to 10,000).

Every (data set, n) runs in its own process (its own peak memory).  Iteration
counts do not depend on the machine; times are single runs on a shared machine.

Usage::

    python benchmarks/bench_pcg_iterations.py                  # both parts (~1 h)
    python benchmarks/bench_pcg_iterations.py --part iterations --sizes 2000 5000
    python benchmarks/bench_pcg_iterations.py --quick          # small sizes (< 2 min)
    python benchmarks/bench_pcg_iterations.py --part iterations --data spiral_long \
        --sizes 2000 4000 8000 16000 --tol 1e-9 --loss squared

Prints the tables and appends them to ``benchmarks/results/pcg_iterations.md``.
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
from semisvm.datasets import make_two_moons  # noqa: E402
from semisvm.models._problem import build_kernel, build_laplacian  # noqa: E402
from semisvm.solvers._pcg import lapsvm_pcg  # noqa: E402

GAMMA_A, GAMMA_I = 1e-6, 1.0
ES_RULES = {
    # name: keyword arguments of lapsvm_pcg
    "stability (paper, eta=1.5%)": dict(
        early_stopping="stability", stability_value_tol=None
    ),
    "stability, last window, value guard 5%": dict(early_stopping="stability"),
    "stability, half window, value guard 5%": dict(
        early_stopping="stability", stability_window="half"
    ),
    "nystroem + stability, half window, value guard 5%": dict(
        early_stopping="stability",
        stability_window="half",
        preconditioner="nystroem",
        random_state=0,
    ),
}


def manifold(n: int, d: int = 784, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``X = tanh(Z W)`` with a 10-dimensional Gaussian latent Z; binary classes."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, 10))
    W = rng.standard_normal((10, d)) / np.sqrt(10)
    X = np.tanh(Z @ W)
    y = (Z[:, 0] + 0.5 * np.sin(2 * Z[:, 1]) > 0).astype(int)
    return X, y


def spiral_long(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two spirals of arc length ~ n at a constant density along the arc."""
    rng = np.random.default_rng(seed + 7)
    t_max = 3 * np.pi * np.sqrt(n / 2000)
    t = np.sqrt(rng.uniform(np.pi**2, t_max**2, size=n))  # uniform in arc length
    y = rng.integers(2, size=n)
    r = np.where(y == 1, 1.0, -1.0)[:, None]
    X = r * np.c_[t * np.cos(t), t * np.sin(t)] + rng.normal(scale=0.5, size=(n, 2))
    return X, y


def dataset(
    name: str, n: int, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features, targets (n, C) in {-1, 0, +1} and the true class of every point."""
    if name == "spiral_long":
        X, ytrue = spiral_long(n, seed)
        lab = np.sort(
            np.concatenate(
                [
                    np.random.default_rng(seed).choice(
                        np.flatnonzero(ytrue == c), 5, replace=False
                    )
                    for c in (0, 1)
                ]
            )
        )
    elif name == "moons":
        X, y, yt = make_two_moons(n, n_labeled_per_class=1, random_state=seed)
        lab = np.flatnonzero(y != -1)
        ytrue = yt
    elif name == "manifold":
        X, ytrue = manifold(n, seed=seed)
        lab = cm.pick_labeled(ytrue, 50, random_state=seed)
    elif name in ("digits1", "digits5"):  # labels per class
        from sklearn.datasets import load_digits

        X, ytrue = load_digits(return_X_y=True)
        X = X / 16.0
        per = int(name[6:])
        rng = np.random.default_rng(seed)
        lab = np.sort(
            np.concatenate(
                [
                    rng.choice(np.flatnonzero(ytrue == c), per, replace=False)
                    for c in range(10)
                ]
            )
        )
    elif name == "digitslike":
        X, yy = cm.digits_like(n, 784, random_state=seed)
        X = X.astype(np.float64)
        ytrue = (yy % 2 == 0).astype(int)
        lab = cm.pick_labeled(ytrue, max(2, n // 100), random_state=seed)
    else:
        raise ValueError(name)
    classes = np.unique(ytrue)
    if classes.size == 2:
        Y = np.zeros((X.shape[0], 1))
        Y[lab, 0] = np.where(ytrue[lab] == classes[1], 1.0, -1.0)
    else:
        Y = np.zeros((X.shape[0], classes.size))
        Y[lab] = -1.0
        Y[lab, ytrue[lab]] = 1.0
    return X, Y, ytrue


def accuracy(K, r, Y, ytrue) -> float:
    F = np.asarray(K @ r.alpha) + r.b
    pred = (F[:, 0] > 0).astype(int) if F.shape[1] == 1 else np.argmax(F, axis=1)
    unl = ~np.any(Y != 0, axis=1)
    return float(np.mean(pred[unl] == ytrue[unl]))


def solve(K, L, Y, ytrue, **kw) -> dict:
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = lapsvm_pcg(
            K, Y, L=L, gamma_a=GAMMA_A, gamma_i=GAMMA_I, intrinsic_bias=True, **kw
        )
    t = time.perf_counter() - t0
    return {
        "n_iter": int(r.n_iter.max()),
        "n_products": int(r.n_products.max()),
        "reason": ",".join(sorted(set(r.reason))),
        "time_s": t,
        "objective": float(r.objective.sum()),
        "acc": accuracy(K, r, Y, ytrue),
    }


def fit_estimator(X, Y, ytrue, loss: str, preconditioner: str, tol: float) -> dict:
    """Fit ``LapSVM``/``LapRLS`` with PCG to ``tol`` (no early stop); its iterations."""
    from semisvm import LapRLS, LapSVM, SolverOptions

    y = np.where(Y[:, 0] > 0, 1, np.where(Y[:, 0] < 0, 0, -1))
    est = (LapRLS if loss == "squared" else LapSVM)(
        solver="pcg",
        gamma_a=GAMMA_A,
        gamma_i=GAMMA_I,
        laplacian_power=1,
        early_stopping=None,
        tol=tol,
        max_iter=5000,
        random_state=0,
        options=SolverOptions(preconditioner=preconditioner),
    )
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    unl = y == -1
    return {
        "n_iter": int(est.n_iter_),
        "n_products": "-",  # not exposed by the estimators
        "reason": str(est.termination_condition_),
        "time_s": time.perf_counter() - t0,
        "objective": float(est.objective_),
        "acc": float(np.mean(est.transduction_[unl] == ytrue[unl])),
    }


def worker(
    part: str, name: str, n: int, seed: int, tol: float = 1e-6, loss: str = "hinge"
) -> dict:
    X, Y, ytrue = dataset(name, n, seed)
    n = X.shape[0]
    if name == "spiral_long":
        out = {"data": name, "n": n, "kernel_s": 0.0, "graph_s": 0.0}
        for pre in ("paper", "nystroem"):
            out[pre] = fit_estimator(X, Y, ytrue, loss, pre, tol)
        out["peak_rss_mib"] = cm.peak_rss_mib()
        return out
    t0 = time.perf_counter()
    K, g = build_kernel(
        X, kernel="rbf", gamma="median", degree=3, coef0=1.0, kernel_params=None
    )
    t1 = time.perf_counter()
    L = build_laplacian(
        X,
        K,
        kernel="rbf",
        gamma_=g,
        n_neighbors=10,
        graph_weight="binary",
        heat_t=None,
        normalize_laplacian=True,
        laplacian_power=1,
        adjacency=None,
    )
    out: dict = {
        "data": name,
        "n": n,
        "kernel_s": t1 - t0,
        "graph_s": time.perf_counter() - t1,
    }
    base: dict = dict(tol=tol, max_iter=5000 if tol < 1e-6 else 1000)
    if loss == "squared":
        base["loss"] = "squared"
    if part == "iterations":
        out["paper"] = solve(K, L, Y, ytrue, preconditioner="paper", **base)
        out["nystroem"] = solve(
            K, L, Y, ytrue, preconditioner="nystroem", random_state=0, **base
        )
    else:
        out["unstopped"] = solve(K, L, Y, ytrue, **base)
        for rule, kw in ES_RULES.items():
            out[rule] = solve(K, L, Y, ytrue, **base, **kw)
    out["peak_rss_mib"] = cm.peak_rss_mib()
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--part", choices=["iterations", "early", "both"], default="both")
    ap.add_argument("--sizes", type=int, nargs="*", default=None)
    ap.add_argument(
        "--data",
        nargs="*",
        default=None,
        choices=["moons", "manifold", "spiral_long"],
        help="part iterations: the sets (default moons manifold)",
    )
    ap.add_argument("--tol", type=float, default=1e-6, help="part iterations")
    ap.add_argument(
        "--loss",
        choices=["hinge", "squared"],
        default="hinge",
        help="part iterations: squared hinge (LapSVM) or squared (LapRLS)",
    )
    ap.add_argument("--quick", action="store_true", help="small sizes (CI smoke test)")
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--job", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(*json.loads(args.job))))
        return
    parts = ["iterations", "early"] if args.part == "both" else [args.part]
    machine = cm.machine_description()
    body = ""
    for part in parts:
        if part == "iterations":
            sizes = args.sizes or (
                [500, 1000] if args.quick else [2000, 5000, 10000, 20000]
            )
            data = args.data or ["moons", "manifold"]
            jobs = [(part, d, n, 0, args.tol, args.loss) for d in data for n in sizes]
        else:
            sizes = args.sizes or (
                [200, 500] if args.quick else [200, 1000, 2000, 5000, 10000, 20000]
            )
            jobs = [(part, "moons", n, 0) for n in sizes]
            jobs += [(part, d, 1797, s) for d in ("digits1", "digits5") for s in (0, 1)]
            jobs += [(part, "digitslike", n, 0) for n in sizes if 1000 <= n <= 10000]
        rows = []
        for job in jobs:
            r = cm.run_worker(Path(__file__), ["--job", json.dumps(job)])
            if "error" in r:
                print(f"{job}: {r['error']}", flush=True)
                continue
            rows.append(r)
            print(json.dumps(r), flush=True)
        if part == "iterations":
            table = cm.markdown_table(
                [
                    "data",
                    "n",
                    "paper: iters",
                    "paper: reason",
                    "paper: solve (s)",
                    "nystroem: iters",
                    "nystroem: products",
                    "nystroem: reason",
                    "nystroem: solve (s)",
                    "objective rel. diff",
                    "acc paper",
                    "acc nystroem",
                    "peak RSS (MiB)",
                ],
                [
                    [
                        r["data"],
                        r["n"],
                        r["paper"]["n_iter"],
                        r["paper"]["reason"],
                        r["paper"]["time_s"],
                        r["nystroem"]["n_iter"],
                        r["nystroem"]["n_products"],
                        r["nystroem"]["reason"],
                        r["nystroem"]["time_s"],
                        (r["nystroem"]["objective"] - r["paper"]["objective"])
                        / abs(r["paper"]["objective"]),
                        r["paper"]["acc"],
                        r["nystroem"]["acc"],
                        r["peak_rss_mib"],
                    ]
                    for r in rows
                ],
            )
            body += (
                f"### Iterations to tol = {args.tol:g} against n"
                f" ({'LapRLS' if args.loss == 'squared' else 'LapSVM'})\n\n"
                + table
                + "\n\n"
            )
        else:
            head = ["data", "n", "unstopped: iters", "unstopped: acc"]
            for rule in ES_RULES:
                head += [f"{rule}: iters", f"{rule}: acc - unstopped (points)"]
            tab = []
            for r in rows:
                u = r["unstopped"]
                line = [r["data"], r["n"], u["n_iter"], u["acc"]]
                for rule in ES_RULES:
                    line += [r[rule]["n_iter"], 100 * (r[rule]["acc"] - u["acc"])]
                tab.append(line)
            body += (
                "### Early stopping: accuracy on the unlabeled points and iterations"
                " (target: within 0.5 points of unstopped)\n\n"
                + cm.markdown_table(head, tab)
                + "\n\n"
            )
    print(body)
    if not args.no_save:
        cmd = (
            "python benchmarks/bench_pcg_iterations.py"
            + (" --quick" if args.quick else "")
            + (f" --part {args.part}" if args.part != "both" else "")
            + (f" --sizes {' '.join(map(str, args.sizes))}" if args.sizes else "")
            + (f" --data {' '.join(args.data)}" if args.data else "")
            + (f" --tol {args.tol:g}" if args.tol != 1e-6 else "")
            + (" --loss squared" if args.loss == "squared" else "")
        )
        path = cm.append_results(
            "pcg_iterations", "PCG iterations and early stopping", cmd, body, machine
        )
        print(f"appended to {path}")


if __name__ == "__main__":
    main()
