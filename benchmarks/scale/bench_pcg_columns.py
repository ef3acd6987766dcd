"""Cost of a 10-column PCG iteration against a 1-column one.

For the dense float32 operator, the streamed exact operator and the Nyström
low-rank operator, at n = 4,000 and 8,000 (digits-like data, d = 256, 10 classes,
1% labeled, median-rule RBF, 10-NN normalized Laplacian, gamma_A = 1e-6,
gamma_I = 1), this times

* the product ``K @ V`` alone, V of shape (n, 1) and (n, 10) (float64, as the
  solver passes it);
* one PCG iteration of the solver's state object (``_PCG.run``: step with the
  exact line search, new gradient, the one product, the preconditioner, the
  direction, the tol check), without hooks and with the stability rule as a hook
  (checked every ceil(sqrt(n)/2) iterations, never stopping),

with C = 1 (digit 0 against the rest) and C = 10 (one-vs-rest), median of
``--repeat`` rounds, all four measurements interleaved in every round.  "outside"
is the iteration minus the product: the per-column work around the GEMM.

Usage::

    python benchmarks/scale/bench_pcg_columns.py              # n = 4000 8000, ~4 min
    python benchmarks/scale/bench_pcg_columns.py --quick      # n = 1500, dense only
    python benchmarks/scale/bench_pcg_columns.py --profile    # + cProfile of a 10-column run

Results: appended to benchmarks/scale/results/pcg_columns.md and pcg_columns.jsonl.
"""

from __future__ import annotations

import cProfile
import io
import json
import math
import pstats
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent / "src"))
import _common as cm  # noqa: E402
from semisvm.graph import graph_laplacian, knn_graph_from_kernel  # noqa: E402
from semisvm.kernels import (  # noqa: E402
    NystroemFactor,
    StreamedKernelOperator,
    kernel_matrix,
    median_gamma,
)
from semisvm.kernels._operators import DenseKernelOperator  # noqa: E402
from semisvm.solvers._early_stopping import DataStoppingRule  # noqa: E402
from semisvm.solvers._pcg import _PCG  # noqa: E402
from semisvm.solvers._tolerances import tolerances  # noqa: E402

RESULTS = HERE / "results"
GAMMA_A, GAMMA_I = 1e-6, 1.0


def problem(n: int, d: int = 256):
    """X (float32), the dense float32 K, L, gamma and the C = 1 / C = 10 targets."""
    X, y = cm.digits_like(n, d, random_state=n)
    gamma = median_gamma(X)
    K = kernel_matrix(X, gamma=gamma, dtype=np.float32)
    L = graph_laplacian(knn_graph_from_kernel(K, gamma, 10), normalized=True)
    lab = cm.pick_labeled(y, max(10, n // 100), random_state=1)
    Y1 = np.zeros((n, 1))
    Y1[lab, 0] = np.where(y[lab] == 0, 1.0, -1.0)
    Y10 = np.zeros((n, 10))
    Y10[lab] = -1.0
    Y10[lab, y[lab]] = 1.0
    return X, K, L, gamma, {1: Y1, 10: Y10}


def operators(names, X, K, gamma):
    ops = {}
    if "dense" in names:
        ops["dense"] = DenseKernelOperator(K)
    if "streamed" in names:
        ops["streamed"] = StreamedKernelOperator(X, gamma=gamma)
    if "nystroem" in names:
        ops["nystroem"] = (
            NystroemFactor(n_components=1000, gamma=gamma, random_state=0)
            .fit(X)
            .operator()
        )
    return ops


def new_state(op, Y, L) -> _PCG:
    """The solver's state after ``start`` (as :func:`lapsvm_pcg` builds it)."""
    pcg = _PCG(
        op,
        Y,
        L=L,
        gamma_a=GAMMA_A,
        gamma_i=GAMMA_I,
        squared=False,
        intrinsic_bias=False,
        fit_intercept=True,
        sample_weight=None,
        tol=0.0,
        tol_criterion="mixed",
    )
    pcg.start(None, None, "paper", None, 0)
    return pcg


def stability_hook(pcg: _PCG) -> DataStoppingRule:
    """The default stability rule, made never to stop (stability_tol = 0)."""
    return DataStoppingRule(
        "stability",
        theta=max(1, math.ceil(math.sqrt(pcg.n) / 2)),
        unlabeled=pcg.unl,
        n_columns=pcg.C,
        stability_tol=0.0,
        stability_value_tol=0.05,
        window="last",
        dead_zone=tolerances(pcg.Kop.dtype).sign_dead_zone,
    )


def time_iterations(op, Y, L, n_iter: int, hook: bool) -> float:
    """Seconds per iteration of ``_PCG.run`` (start excluded)."""
    pcg = new_state(op, Y, L)
    rule = stability_hook(pcg) if hook else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        pcg.run(n_iter, rule, None, None)
        t = time.perf_counter() - t0
    assert (pcg.n_iter == n_iter).all(), pcg.n_iter
    return t / n_iter


def time_product(op, V, k: int) -> float:
    t0 = time.perf_counter()
    for _ in range(k):
        op @ V
    return (time.perf_counter() - t0) / k


def measure(name, op, Ys, L, n_iter, repeat) -> dict:
    rng = np.random.default_rng(0)
    V = {c: rng.standard_normal((op.shape[0], c)) for c in (1, 10)}
    k = n_iter if name != "streamed" else 2  # products per timed call
    fns = {}
    for c in (1, 10):
        fns[f"prod{c}"] = lambda c=c: time_product(op, V[c], k)
    for c in (1, 10):
        fns[f"iter{c}"] = lambda c=c: time_iterations(op, Ys[c], L, n_iter, False)
        fns[f"hook{c}"] = lambda c=c: time_iterations(op, Ys[c], L, n_iter, True)
    times: dict[str, list[float]] = {key: [] for key in fns}
    for key, fn in fns.items():  # warm-up (allocations, BLAS buffers)
        if key.startswith("prod"):
            fn()
    for _ in range(repeat):
        for key, fn in fns.items():
            times[key].append(fn())
    r = {key: float(np.median(v)) for key, v in times.items()}
    r.update(operator=name, n=op.shape[0], n_iter=n_iter, repeat=repeat)
    r["prod_ratio"] = r["prod10"] / r["prod1"]
    r["iter_ratio"] = r["iter10"] / r["iter1"]
    r["hook_ratio"] = r["hook10"] / r["hook1"]
    r["outside1"] = r["iter1"] - r["prod1"]
    r["outside10"] = r["iter10"] - r["prod10"]
    return r


class _Timed:
    """An operator (or callable) whose calls add their wall time to ``acc[key]``."""

    def __init__(self, inner, acc: dict, key: str):
        self.inner, self.acc, self.key = inner, acc, key
        self.shape = getattr(inner, "shape", None)
        self.dtype = getattr(inner, "dtype", None)
        self.reason = getattr(inner, "reason", None)

    def _timed(self, fn, *a):
        t0 = time.perf_counter()
        out = fn(*a)
        self.acc[self.key] = self.acc.get(self.key, 0.0) + time.perf_counter() - t0
        return out

    def __matmul__(self, V):
        return self._timed(self.inner.__matmul__, V)

    def __call__(self, *a):
        return self._timed(self.inner, *a)

    def __getattr__(self, name):
        return getattr(self.inner, name)


PHASES = [
    "K product",
    "L product",
    "line search",
    "step: other",
    "gradient",
    "direction: other",
    "objective",
    "tol check",
    "hook",
    "total",
]


def breakdown(op, Y, L, n_iter: int) -> dict:
    """Milliseconds per iteration of each phase of ``_PCG.run`` (exclusive times)."""
    from semisvm.solvers import _pcg

    pcg = new_state(op, Y, L)
    acc: dict = {}
    pcg.Kop = _Timed(pcg.Kop, acc, "K product")
    pcg.Lop = _Timed(pcg.Lop, acc, "L product")
    for name in ("_step", "_new_direction", "grad", "objective", "_check_tol"):
        setattr(pcg, name, _Timed(getattr(pcg, name), acc, name))
    rule = _Timed(stability_hook(pcg), acc, "hook")
    ls = _pcg.exact_line_search_batch
    _pcg.exact_line_search_batch = _Timed(ls, acc, "line search")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            pcg.run(n_iter, rule, None, None)
            acc["total"] = time.perf_counter() - t0
    finally:
        _pcg.exact_line_search_batch = ls
    g = acc.get
    out = {
        "K product": g("K product", 0.0),
        "L product": g("L product", 0.0),
        "line search": g("line search", 0.0),
        "step: other": g("_step", 0.0) - g("L product", 0.0) - g("line search", 0.0),
        "gradient": g("grad", 0.0),
        "direction: other": g("_new_direction", 0.0)
        - g("grad", 0.0)
        - g("K product", 0.0),
        "objective": g("objective", 0.0),
        "tol check": g("_check_tol", 0.0),
        "hook": g("hook", 0.0),
        "total": acc["total"],
    }
    return {k: v / n_iter * 1e3 for k, v in out.items()}


def breakdown_table(rows: list[tuple[str, int, int, dict]]) -> str:
    header = (
        ["operator", "n", "C"] + [f"{p} (ms)" for p in PHASES] + ["outside K product"]
    )
    body = [
        [name, n, c]
        + [r[p] for p in PHASES]
        + [f"{(r['total'] - r['K product']) / r['total']:.0%}"]
        for name, n, c, r in rows
    ]
    return cm.markdown_table(header, body)


def product_variants(K: np.ndarray, repeat: int) -> str:
    """Ways to form K @ V (float32 K, 10 columns) on one BLAS thread, against ``symv``.

    Also the single-thread GFLOP/s of a square ``sgemm``: the compute floor of the
    10-column product (2 n^2 C flops) at the best rate the BLAS reaches.
    """
    from scipy.linalg import blas
    from threadpoolctl import threadpool_limits

    n = K.shape[0]
    rng = np.random.default_rng(0)
    V = rng.standard_normal((n, 10)).astype(np.float32)
    Vt = np.ascontiguousarray(V.T)
    V16t = np.zeros((16, n), np.float32)
    V16t[:10] = Vt
    v = V[:, 0].copy()

    def row_blocks(b=256):
        out = np.empty((10, n), np.float32)
        for i in range(0, n, b):
            np.matmul(Vt, K[i : i + b].T, out=out[:, i : i + b])
        return out

    def lower_blocks(b=512):  # each block of the lower triangle read once, used twice
        out = np.zeros((n, 10), np.float32)
        for i in range(0, n, b):
            Kb = K[i : i + b, : i + b]
            out[i : i + b] += Kb @ V[: i + b]
            if i:
                out[:i] += Kb[:, :i].T @ V[i : i + b]
        return out

    m = 2048
    A = rng.random((m, m), dtype=np.float32)
    fns = {
        "symv, 1 column (the binary iteration's product)": lambda: blas.ssymv(
            1.0, K.T, v, lower=1
        ),
        "(V^T K)^T, 10 columns (the operator)": lambda: Vt @ K,
        "K V, 10 columns": lambda: K @ V,
        "(V^T K)^T, 16 columns (V zero-padded)": lambda: V16t @ K,
        "row blocks of 256, 10 columns": row_blocks,
        "lower-triangle blocks of 512, 10 columns": lower_blocks,
        "square sgemm 2048^3": lambda: A @ A,
    }
    times: dict[str, list[float]] = {k: [] for k in fns}
    with threadpool_limits(1, user_api="blas"):
        for _ in range(repeat):
            for k, fn in fns.items():
                t0 = time.perf_counter()
                fn()
                times[k].append(time.perf_counter() - t0)
    med = {k: float(np.median(t)) for k, t in times.items()}
    peak = 2.0 * m**3 / med["square sgemm 2048^3"] / 1e9
    floor = 2.0 * n * n * 10 / (peak * 1e9)
    rows = [
        [
            k,
            med[k] * 1e3,
            med[k] / med[fns_first(fns)],
            2.0 * n * n * (16 if "16" in k else 10) / med[k] / 1e9
            if "10 col" in k or "16 col" in k
            else None,
        ]
        for k in fns
        if not k.startswith("square")
    ]
    rows.append(
        [
            f"10 columns at the square sgemm's {peak:.0f} GFLOP/s (compute floor)",
            floor * 1e3,
            floor / med[fns_first(fns)],
            peak,
        ]
    )
    return (
        f"K @ V at n = {n}, float32, one BLAS thread, median of {repeat}:\n\n"
        + cm.markdown_table(["product", "ms", "/ symv", "GFLOP/s"], rows)
        + "\n"
    )


def fns_first(fns: dict) -> str:
    return next(iter(fns))


def profile_run(op, Y, L, n_iter: int) -> str:
    pcg = new_state(op, Y, L)
    rule = stability_hook(pcg)
    pr = cProfile.Profile()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pr.enable()
        pcg.run(n_iter, rule, None, None)
        pr.disable()
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(18)
    return s.getvalue()


COLUMNS = [
    "operator",
    "n",
    "n_iter",
    "prod1",
    "prod10",
    "prod_ratio",
    "iter1",
    "iter10",
    "iter_ratio",
    "hook1",
    "hook10",
    "hook_ratio",
    "outside1",
    "outside10",
]
HEADER = [
    "operator",
    "n",
    "iterations",
    "K@V 1 col (ms)",
    "K@V 10 cols (ms)",
    "product ratio",
    "iter 1 col (ms)",
    "iter 10 cols (ms)",
    "iter ratio",
    "iter+hook 1 (ms)",
    "iter+hook 10 (ms)",
    "iter+hook ratio",
    "outside 1 (ms)",
    "outside 10 (ms)",
]


def fmt(v):
    return cm.fmt_cell(v)


def table(rows: list[dict]) -> str:
    ms = {
        "prod1",
        "prod10",
        "iter1",
        "iter10",
        "hook1",
        "hook10",
        "outside1",
        "outside10",
    }
    out = [[r[c] * 1e3 if c in ms else r[c] for c in COLUMNS] for r in rows]
    return cm.markdown_table(HEADER, out, fmt=fmt)


def main(argv: list[str] | None = None) -> None:
    ap = cm.bench_parser(__doc__, data=False)
    ap.add_argument("--sizes", type=int, nargs="*", default=None)
    ap.add_argument("--operators", nargs="*", default=["dense", "streamed", "nystroem"])
    ap.add_argument(
        "--iterations",
        type=int,
        default=40,
        help="iterations timed per run (streamed: a tenth, at least 3)",
    )
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--profile",
        action="store_true",
        help="print a cProfile of a 10-column run per operator",
    )
    ap.add_argument(
        "--variants",
        action="store_true",
        help="time ways to form the 10-column dense product, and the "
        "square-GEMM compute floor, at the largest n",
    )
    ap.add_argument(
        "--breakdown",
        action="store_true",
        help="time each phase of an iteration (C = 1 and 10, with the hook)",
    )
    ap.add_argument("--note", default="", help="a line saved with the results")
    args = ap.parse_args(argv)
    sizes = args.sizes or ([1500] if args.quick else [4000, 8000])
    names = ["dense"] if args.quick else args.operators
    machine = cm.machine_description()
    rows, profiles, phases, variants = [], [], [], ""
    for n in sizes:
        X, K, L, gamma, Ys = problem(n)
        for name, op in operators(names, X, K, gamma).items():
            it = (
                max(3, args.iterations // 10) if name == "streamed" else args.iterations
            )
            r = measure(name, op, Ys, L, it, args.repeat)
            rows.append(r)
            print(table([r]).splitlines()[-1], flush=True)
            if args.breakdown:
                for c in (1, 10):
                    phases.append((name, n, c, breakdown(op, Ys[c], L, it)))
            if args.profile:
                profiles.append(
                    f"#### {name}, n = {n}, C = 10\n\n```\n"
                    + profile_run(op, Ys[10], L, it)
                    + "```\n"
                )
        if args.variants and n == sizes[-1]:
            variants = product_variants(K, max(3, args.repeat))
            print(variants, flush=True)
        del K
    load_end = round(__import__("os").getloadavg()[0], 2)
    body = (
        f"{args.note}\n\nd = 256 digits-like, float32, gamma_A = {GAMMA_A:g}, "
        f"gamma_I = {GAMMA_I:g}, paper preconditioner, median of {args.repeat} "
        f"interleaved rounds; load average (1 min) {machine['load_avg_1m_at_start']} "
        f"at start, {load_end} at end.\n\n" + table(rows) + "\n"
    )
    if variants:
        body += "\n" + variants
    if phases:
        body += (
            "\nWhere the time of one iteration goes (ms per iteration, exclusive "
            "times; one run each, with the stability hook):\n\n"
            + breakdown_table(phases)
            + "\n"
        )
    if profiles:
        body += "\n" + "\n".join(profiles)
    print("\n" + body)
    if not args.no_save:
        cmd = "python benchmarks/scale/bench_pcg_columns.py " + " ".join(
            argv if argv is not None else sys.argv[1:]
        )
        RESULTS.mkdir(exist_ok=True)
        path = RESULTS / "pcg_columns.md"
        new = not path.exists()
        with open(path, "a") as fh:
            if new:
                fh.write(
                    "# PCG iteration: 10 columns against 1\n\n"
                    "Append-only: one section per run, newest last.\n"
                )
            fh.write(f"\n## Run {machine['date']} (commit {machine['commit']})\n\n")
            fh.write(f"Command: `{cmd.strip()}`\n\n")
            fh.write(
                f"- CPU: {machine['cpu']}, {machine['cores']} cores; numpy "
                f"{machine['numpy']}, scipy {machine['scipy']}\n"
            )
            for b in machine["blas"]:
                fh.write(f"- BLAS: {b}\n")
            fh.write(f"- BLAS environment variables: {machine['blas_env']}\n\n")
            fh.write(body.rstrip() + "\n")
        with open(RESULTS / "pcg_columns.jsonl", "a") as fh:
            for r in rows:
                fh.write(
                    json.dumps(
                        {
                            "stamp": machine["date"],
                            "note": args.note,
                            "commit": machine["commit"],
                            "load_start": machine["load_avg_1m_at_start"],
                            "load_end": load_end,
                            **r,
                        }
                    )
                    + "\n"
                )
        print(f"appended to {path}")


if __name__ == "__main__":
    main()
