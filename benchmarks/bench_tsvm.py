"""Benchmark: exact transductive SVM on two moons.

Part A (the randomized paper's claim): two moons with 4,000 unlabeled points and
one labeled point per class, solved by ``ExactTSVM(method="randomized")``; we
record time, rounds, branch-and-bound nodes, error on U and whether the
certificate was reached, next to a supervised SVM on the two labels and LapSVM
(default graph weights and ``graph_weight="heat"``) on the same labels.

Part B: a 200-point two moons, where local TSVM heuristics are known to stop in
poor local minima.  The exact solution is compared with a label-switching local
search written here (alternating minimisation plus pairwise label swaps, as in
SVMlight's TSVM) and with scikit-learn's ``SelfTrainingClassifier``.

Each part runs several settings (``SETTINGS_A`` / ``SETTINGS_B``): the setting of
the first benchmark run (evenly sampled moons, noise 0.1, ``gamma=5``,
``C*=10``), the same with uniformly sampled moons (about 45 unlabeled points
inside the margin at the optimum, close to the sample size of 60) and settings chosen for the method without looking
at the labels of U: ``gamma="scale"`` (scikit-learn's width heuristic, about 1
here) and a large ``C*=100``, which leaves few unlabeled points inside the
margin at the optimum (the combinatorial dimension of the random sampling).
Every setting is reported, certified or not, with the proven lower bound and
the relative gap; "certificate" means a proof (see
``semisvm.solvers._tsvm``), not Clarkson's "no violator" criterion alone.

The script prints a table and appends it, with the machine description, library
versions and date, to ``benchmarks/results/tsvm.md``.

Usage::

    python benchmarks/bench_tsvm.py            # full run (about 15 minutes)
    python benchmarks/bench_tsvm.py --quick    # smoke run (< 60 s on 2 cores)
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import time
import warnings
from pathlib import Path

import numpy as np
import scipy
import sklearn
from sklearn.exceptions import ConvergenceWarning
from sklearn.semi_supervised import SelfTrainingClassifier
from sklearn.svm import SVC

import _common as cm  # noqa: E402 - benchmarks/_common.py, beside this script
from semisvm.datasets import make_two_moons
from semisvm.kernels import kernel_matrix, resolve_gamma
from semisvm.models._tsvm import ExactTSVM
from semisvm.solvers._l2svm import l2svm_primal
from semisvm.solvers._tsvm import _balanced_signs, balance_bounds

RESULTS = Path(__file__).resolve().parent / "results" / "tsvm.md"


def local_search_tsvm(K, t_lab, C, C_star, max_swaps=2000):
    """Label-switching TSVM heuristic (local search, SVMlight-style).

    Start from the supervised SVM's balanced labeling of U; alternate (a)
    re-solving the L2-SVM and relabeling U by the balanced sign of f and (b)
    swapping one (+, -) pair of U whose slacks sum above 2 (the swap lowers the
    loss for fixed f).  Stops at a labeling no step improves.
    """
    L = np.flatnonzero(t_lab != 0)
    U = np.flatnonzero(t_lab == 0)
    frac = float(np.mean(t_lab[L] > 0))
    lo, hi = balance_bounds(U.size, frac)
    cost = np.where(t_lab != 0, C, C_star)
    root = l2svm_primal(K[np.ix_(L, L)], t_lab[L], np.full(L.size, C))
    f_u = K[np.ix_(U, L)] @ root.alpha + root.b
    lab = _balanced_signs(f_u, lo, hi)
    t = t_lab.astype(float).copy()
    sol = None
    for _ in range(max_swaps):
        t[U] = lab
        sol = (
            l2svm_primal(K, t, cost)
            if sol is None
            else l2svm_primal(K, t, cost, alpha0=sol.alpha, b0=sol.b, f0=sol.f)
        )
        new = _balanced_signs(sol.f[U], lo, hi)
        if not np.array_equal(new, lab):
            lab = new
            continue
        xi = np.maximum(0.0, 1.0 - lab * sol.f[U])
        pos = np.flatnonzero(lab > 0)
        neg = np.flatnonzero(lab < 0)
        if pos.size == 0 or neg.size == 0:
            break
        i = pos[np.argmax(xi[pos])]
        j = neg[np.argmax(xi[neg])]
        if xi[i] + xi[j] <= 2.0:
            break
        lab = lab.copy()
        lab[i], lab[j] = -1.0, 1.0
    return lab, sol.objective


def lapsvm_error(X, y, y_true, U, **kw):
    """Error on U of LapSVM with its library defaults (``gamma="median"``)."""
    try:
        from semisvm.models import LapSVM  # noqa: PLC0415
    except ImportError:
        return "n/a"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf = LapSVM(**kw).fit(X, y)
        return float(np.mean(clf.predict(X[U]) != y_true[U]))
    except Exception as exc:  # report, do not crash the benchmark
        return f"failed ({type(exc).__name__})"


def svm_error(X, y, y_true, U, gamma, C):
    lab = y != -1
    clf = SVC(kernel="rbf", gamma=gamma, C=C).fit(X[lab], y[lab])
    return float(np.mean(clf.predict(X[U]) != y_true[U]))


# (sampling, noise, gamma, C_star); C and sample_size from the command line
SETTINGS_A = [
    ("even", 0.1, 5.0, 10.0),
    ("uniform", 0.1, 5.0, 10.0),
    ("even", 0.05, "scale", 100.0),
    ("uniform", 0.1, "scale", 100.0),
]
SETTINGS_B = [
    ("even", 0.1, 5.0, 10.0),
    ("uniform", 0.1, 5.0, 10.0),
    ("even", 0.05, "scale", 100.0),
]


def _selected(settings, args):
    """Settings whose ``(sampling, noise, gamma, C*)`` text contains ``--select``."""
    if not args.select:
        return settings
    return [
        st for st in settings if args.select in f"{st[0]}, {st[1]}, {st[2]}, {st[3]}"
    ]


def _describe(X, sampling, noise, gamma, C_star):
    g = resolve_gamma(X, gamma, "rbf")
    gtxt = f"{gamma}={g:.3g}" if isinstance(gamma, str) else f"{g:g}"
    return g, f"{sampling}, noise={noise}, gamma={gtxt}, C*={C_star:g}"


def run_stsvm(X, y, y_true, gamma, C_star, sample_size, args):
    U = np.flatnonzero(y == -1)
    clf = ExactTSVM(
        method="randomized",
        C=args.C,
        C_star=C_star,
        gamma=gamma,
        sample_size=min(sample_size, U.size),
        max_iter=args.max_iter,
        time_limit=args.time_limit,
        random_state=0,
    )
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, y)
    return {
        "method": f"STSVM (r={clf.sample_size})",
        "time_s": time.perf_counter() - t0,
        "rounds": clf.n_rounds_,
        "nodes": clf.n_nodes_,
        "objective": clf.objective_,
        "lower_bound": clf.lower_bound_,
        "gap": f"{clf.gap_:.1%}",
        "positives_U": int(np.count_nonzero(clf.transduction_[U] == 1)),
        "error_U": float(np.mean(clf.transduction_[U] != y_true[U])),
        "certificate": clf.is_global_optimum_,
    }


def part_a(n_unlabeled, args):
    rows = []
    for sampling, noise, gamma, C_star in _selected(SETTINGS_A, args):
        X, y, y_true = make_two_moons(
            n_unlabeled + 2,
            noise=noise,
            sampling=sampling,
            n_labeled_per_class=1,
            random_state=0,
        )
        U = np.flatnonzero(y == -1)
        g, desc = _describe(X, sampling, noise, gamma, C_star)
        row = {"data": f"two moons, u={U.size}, l=2", "setting": desc}
        row.update(run_stsvm(X, y, y_true, g, C_star, args.sample_size, args))
        row["svm_error_U"] = svm_error(X, y, y_true, U, g, args.C)
        row["lapsvm_error_U"] = lapsvm_error(X, y, y_true, U)
        row["lapsvm_heat_error_U"] = lapsvm_error(X, y, y_true, U, graph_weight="heat")
        rows.append(row)
        print(table([row]), flush=True)
    return rows


def part_b(n_samples, args):
    rows = []
    for sampling, noise, gamma, C_star in _selected(SETTINGS_B, args):
        rows += _part_b_setting(n_samples, sampling, noise, gamma, C_star, args)
    return rows


def _part_b_setting(n_samples, sampling, noise, gamma, C_star, args):
    X, y, y_true = make_two_moons(
        n_samples,
        noise=noise,
        sampling=sampling,
        n_labeled_per_class=1,
        random_state=1,
    )
    U = np.flatnonzero(y == -1)
    g, desc = _describe(X, sampling, noise, gamma, C_star)
    data = f"two moons, u={U.size}, l=2"
    rows = []
    row = {"data": data, "setting": desc}
    row.update(run_stsvm(X, y, y_true, g, C_star, args.sample_size, args))
    row["svm_error_U"] = svm_error(X, y, y_true, U, g, args.C)
    row["lapsvm_error_U"] = lapsvm_error(X, y, y_true, U)
    row["lapsvm_heat_error_U"] = lapsvm_error(X, y, y_true, U, graph_weight="heat")
    rows.append(row)
    print(table([row]), flush=True)
    K = kernel_matrix(X, kernel="rbf", gamma=g)
    t_lab = np.where(y == -1, 0.0, np.where(y == 1, 1.0, -1.0))
    t0 = time.perf_counter()
    lab, obj = local_search_tsvm(K, t_lab, args.C, C_star)
    rows.append(
        {
            "data": data,
            "setting": desc,
            "method": "local search TSVM",
            "time_s": time.perf_counter() - t0,
            "objective": obj,
            "error_U": float(np.mean((lab > 0).astype(int) != y_true[U])),
        }
    )
    t0 = time.perf_counter()
    st = SelfTrainingClassifier(SVC(kernel="rbf", gamma=g, C=args.C, probability=True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        st.fit(X, y)
    rows.append(
        {
            "data": data,
            "setting": desc,
            "method": "SelfTraining(SVC)",
            "time_s": time.perf_counter() - t0,
            "error_U": float(np.mean(st.predict(X[U]) != y_true[U])),
        }
    )
    return rows


COLUMNS = [
    "data",
    "setting",
    "method",
    "time_s",
    "rounds",
    "nodes",
    "objective",
    "lower_bound",
    "gap",
    "positives_U",
    "error_U",
    "certificate",
    "svm_error_U",
    "lapsvm_error_U",
    "lapsvm_heat_error_U",
]


def fmt(v):
    if v is None:
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def table(rows):
    return cm.records_table(rows, COLUMNS, fmt=fmt)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="smoke run (< 60 s)")
    p.add_argument("--n-unlabeled", type=int, default=4000)
    p.add_argument("--n-small", type=int, default=200)
    p.add_argument("--C", type=float, default=10.0)
    p.add_argument("--sample-size", type=int, default=60)
    p.add_argument("--max-iter", type=int, default=100)
    p.add_argument("--time-limit", type=float, default=240.0)
    p.add_argument(
        "--select",
        default="",
        help="run only the settings whose 'sampling, noise, gamma, C*' text "
        "contains this string (e.g. 'even, 0.05')",
    )
    p.add_argument("--no-write", action="store_true", help="do not append results")
    args = p.parse_args(argv)
    if args.quick:
        args.n_unlabeled = min(args.n_unlabeled, 300)
        args.n_small = min(args.n_small, 60)
        args.sample_size = min(args.sample_size, 30)
        args.max_iter = min(args.max_iter, 40)
        args.time_limit = min(args.time_limit, 8.0)
    rows = part_a(args.n_unlabeled, args)
    rows += part_b(args.n_small, args)
    out = table(rows)
    runs = [r for r in rows if r["method"].startswith("STSVM")]
    n_cert = sum(bool(r["certificate"]) for r in runs)
    out += (
        f"\n\nExact TSVM runs: {n_cert} certified, {len(runs) - n_cert} not "
        "certified (best found; lower bound and gap given)."
    )
    print(out)
    if args.no_write:
        return
    header = (
        f"\n## {dt.datetime.now().isoformat(timespec='seconds')}"
        f"{' (--quick)' if args.quick else ''}\n\n"
        f"- machine: {platform.processor() or platform.machine()} / "
        f"{os.cpu_count()} CPUs, {platform.platform()}\n"
        f"- python {platform.python_version()}, numpy {np.__version__}, scipy "
        f"{scipy.__version__}, scikit-learn {sklearn.__version__}\n"
        f"- parameters: C={args.C}, sample_size={args.sample_size}, max_iter="
        f"{args.max_iter}, time_limit={args.time_limit}s per fit, random_state=0;"
        " setting = moons sampling, noise, RBF gamma, C*"
        f"{'; --select ' + repr(args.select) if args.select else ''}\n\n"
    )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    with RESULTS.open("a") as fh:
        fh.write(header + out + "\n")


if __name__ == "__main__":
    main()
