"""How close each building block runs to the machine's floor.

In one run this measures the floors, memory bandwidth (streaming an n x n matrix
once: ``gemv``, and ``symv`` which reads one triangle) and GEMM throughput, and
then the library's building blocks as multiples of them:

* one PCG iteration (single class, and a 10-class one-vs-rest block) against the
  time to stream K once, float64 and float32 storage;
* the RBF kernel build against the GEMM ``X X^T`` it needs;
* the kNN graph read off the existing K against the kernel build.

Usage::

    python benchmarks/bench_floor.py            # n = 3000, 6000, 12000 (~15 min)
    python benchmarks/bench_floor.py --quick    # n = 1500, 3000 (< 2 min)

Prints the tables and appends them to ``benchmarks/results/floor.md``.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as cm  # noqa: E402
from semisvm import SolverOptions
from semisvm.graph import graph_laplacian, knn_graph_from_kernel  # noqa: E402
from semisvm.kernels import kernel_matrix, median_gamma  # noqa: E402
from semisvm.kernels._operators import DenseKernelOperator  # noqa: E402
from semisvm.solvers._pcg import lapsvm_pcg  # noqa: E402

TARGETS = {
    "pcg_vs_stream": 1.3,
    "block10_vs_single": 1.5,
    "kernel_vs_gemm": 1.3,
    "graph_vs_kernel": 0.5,
}


def _pcg_time(K, Y, L, n_iter: int) -> float:
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lapsvm_pcg(
            K,
            Y,
            L=L,
            gamma_a=1e-6,
            gamma_i=1.0,
            max_iter=n_iter,
            tol=0.0,
            early_stopping=None,
        )
    return time.perf_counter() - t0


def bench_n(n: int, dtype, repeat: int, rng: np.random.Generator) -> dict:
    """All measurements at one size and storage type."""
    X, y = cm.digits_like(n, 784, random_state=n)
    X = X.astype(dtype)
    gamma = median_gamma(X)
    r: dict = {"n": n, "dtype": np.dtype(dtype).name}
    # --- kernel build vs the GEMM it needs, and the graph off K
    tk = cm.interleaved(
        {
            "gemm": lambda: X @ X.T,
            "kernel": lambda: kernel_matrix(X, gamma=gamma),
        },
        repeat=max(2, repeat // 2),
    )
    r["gemm_s"] = tk["gemm"]
    r["gemm_gflops"] = 2.0 * n * n * X.shape[1] / tk["gemm"] / 1e9
    r["kernel_s"] = tk["kernel"]
    K = kernel_matrix(X, gamma=gamma)
    tg, W = cm.timeit(
        lambda: knn_graph_from_kernel(K, gamma, 10), repeat=max(2, repeat // 2)
    )
    r["graph_s"] = tg
    L = graph_laplacian(W, normalized=True)
    # --- streaming floors
    v = rng.standard_normal(n).astype(dtype)
    V10 = np.asfortranarray(rng.standard_normal((n, 10)).astype(dtype))
    op = DenseKernelOperator(K)
    op_full = DenseKernelOperator(K, use_symmetry=False)
    fl = {}
    for th in (1, 2):
        with threadpool_limits(th):
            fl.update(
                {
                    f"{k}_{th}t": t
                    for k, t in cm.interleaved(
                        {
                            "gemv": lambda: K @ v,
                            "symv": lambda: op @ v,
                            "gemm10": lambda: op_full @ V10,
                        },
                        repeat=repeat,
                    ).items()
                }
            )
    r.update(fl)
    r["stream_s"] = min(fl["gemv_1t"], fl["gemv_2t"])
    r["stream_gbs"] = K.nbytes / r["stream_s"] / 1e9
    # --- PCG iterations: time(n2 iters) - time(n1 iters), interleaved with a gemv
    Y1 = np.zeros((n, 1))
    lab = cm.pick_labeled(y, max(10, n // 100), random_state=1)
    Y1[lab, 0] = np.where(y[lab] % 2 == 0, 1.0, -1.0)
    Y10 = np.zeros((n, 10))
    Y10[lab] = -1.0
    Y10[lab, y[lab]] = 1.0
    n1, n2 = 2, 12
    tp = cm.interleaved(
        {
            "gemv": lambda: K @ v,
            "pcg1_a": lambda: _pcg_time(K, Y1, L, n1),
            "pcg1_b": lambda: _pcg_time(K, Y1, L, n2),
            "pcg10_a": lambda: _pcg_time(K, Y10, L, n1),
            "pcg10_b": lambda: _pcg_time(K, Y10, L, n2),
        },
        repeat=max(3, repeat // 2),
    )
    r["pcg1_iter_s"] = (tp["pcg1_b"] - tp["pcg1_a"]) / (n2 - n1)
    r["pcg10_iter_s"] = (tp["pcg10_b"] - tp["pcg10_a"]) / (n2 - n1)
    r["stream_s_pcg_round"] = tp["gemv"]
    r["product1_s"] = fl["symv_2t"]
    r["product10_s"] = min(fl["gemm10_1t"], fl["gemm10_2t"])
    r["peak_rss_mib"] = cm.peak_rss_mib()
    r["K_mib"] = K.nbytes / 2**20
    return r


def usps_api(folder: Path, k1: int = 3, k2: int = 23) -> str:
    """Per-iteration solver time of ``LapSVM`` on full USPS: 10 classes vs one binary
    column (digit 0 against the rest), float64 and float32 X, both preconditioners."""
    from semisvm import LapSVM

    if not (folder / "usps_full.npz").exists():
        return f"(skipped: {folder / 'usps_full.npz'} not found)\n"
    X, y, _ = cm.load_usps(folder)
    lab = cm.pick_labeled(y, 100, random_state=0)
    y10 = np.full(y.size, -1)
    y10[lab] = y[lab]
    y2 = np.where(y10 == -1, -1, (y10 == 0).astype(int))
    rows = []
    for dt in (np.float64, np.float32):
        for pre in ("paper", "nystroem"):

            def fit(yy, k, dt=dt, pre=pre):
                est = LapSVM(
                    early_stopping=None,
                    tol=0.0,
                    max_iter=k,
                    random_state=0,
                    options=SolverOptions(preconditioner=pre),
                )
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est.fit(X.astype(dt), yy)
                return est.fit_times_["solver"]

            t = {}
            for name, yy in (("10", y10), ("1", y2)):
                a = np.median([fit(yy, k1) for _ in range(2)])
                b = np.median([fit(yy, k2) for _ in range(2)])
                t[name] = (b - a) / (k2 - k1)
            rows.append(
                [X.shape[0], np.dtype(dt).name, pre, t["1"], t["10"], t["10"] / t["1"]]
            )
    return cm.markdown_table(
        [
            "n",
            "X dtype",
            "preconditioner",
            "1 column: s/iter",
            "10 classes: s/iter",
            "ratio (target <= 1.5)",
        ],
        rows,
    )


def main(argv: list[str] | None = None) -> None:
    ap = cm.bench_parser(__doc__, data=True)
    ap.add_argument("--sizes", type=int, nargs="*", default=None)
    ap.add_argument("--repeat", type=int, default=None)
    ap.add_argument(
        "--usps",
        action="store_true",
        help="also time 10-class vs binary LapSVM iterations on full USPS",
    )
    args = ap.parse_args(argv)
    sizes = args.sizes or ([1500, 3000] if args.quick else [3000, 6000, 12000])
    repeat = args.repeat or (3 if args.quick else 5)
    machine = cm.machine_description()
    rng = np.random.default_rng(0)
    rows = []
    for n in sizes:
        for dt in (np.float64, np.float32):
            r = bench_n(n, dt, repeat, rng)
            rows.append(r)
            print(
                f"n={n} {r['dtype']}: stream {r['stream_s']:.4f}s "
                f"({r['stream_gbs']:.1f} GB/s), pcg1 {r['pcg1_iter_s']:.4f}s, "
                f"pcg10 {r['pcg10_iter_s']:.4f}s, kernel {r['kernel_s']:.3f}s, "
                f"gemm {r['gemm_s']:.3f}s, graph {r['graph_s']:.3f}s",
                flush=True,
            )
    floors = cm.markdown_table(
        [
            "n",
            "K dtype",
            "gemv 1 thr (s)",
            "gemv 2 thr (s)",
            "symv 1 thr (s)",
            "symv 2 thr (s)",
            "gemm 10 col 1 thr (s)",
            "gemm 10 col 2 thr (s)",
            "stream K once (GB/s)",
            "GEMM X X^T (GFLOP/s)",
        ],
        [
            [
                r["n"],
                r["dtype"],
                r["gemv_1t"],
                r["gemv_2t"],
                r["symv_1t"],
                r["symv_2t"],
                r["gemm10_1t"],
                r["gemm10_2t"],
                r["stream_gbs"],
                r["gemm_gflops"],
            ]
            for r in rows
        ],
    )
    floor_ratio = cm.markdown_table(
        [
            "n",
            "K dtype",
            "10-class iter / 1-class iter",
            "floor: 10-col product / 1-col product (same run)",
            "iteration overhead outside the product, 1 class (%)",
            "iteration overhead outside the product, 10 classes (%)",
        ],
        [
            [
                r["n"],
                r["dtype"],
                r["pcg10_iter_s"] / r["pcg1_iter_s"],
                r["product10_s"] / r["product1_s"],
                100 * (r["pcg1_iter_s"] - r["product1_s"]) / r["pcg1_iter_s"],
                100 * (r["pcg10_iter_s"] - r["product10_s"]) / r["pcg10_iter_s"],
            ]
            for r in rows
        ],
    )
    ratios = cm.markdown_table(
        [
            "n",
            "K dtype",
            "PCG iter / stream K (target <= 1.3)",
            "10-class iter / 1-class iter (<= 1.5)",
            "kernel / GEMM (<= 1.3)",
            "graph / kernel (<= 0.5)",
            "1-class iter - product (s)",
            "10-class iter - product (s)",
            "peak RSS (MiB)",
            "K (MiB)",
        ],
        [
            [
                r["n"],
                r["dtype"],
                r["pcg1_iter_s"] / r["stream_s"],
                r["pcg10_iter_s"] / r["pcg1_iter_s"],
                r["kernel_s"] / r["gemm_s"],
                r["graph_s"] / r["kernel_s"],
                r["pcg1_iter_s"] - r["product1_s"],
                r["pcg10_iter_s"] - r["product10_s"],
                r["peak_rss_mib"],
                r["K_mib"],
            ]
            for r in rows
        ],
    )
    times = cm.markdown_table(
        [
            "n",
            "K dtype",
            "PCG 1-class iter (s)",
            "PCG 10-class iter (s)",
            "kernel build (s)",
            "GEMM X X^T (s)",
            "graph from K (s)",
        ],
        [
            [
                r["n"],
                r["dtype"],
                r["pcg1_iter_s"],
                r["pcg10_iter_s"],
                r["kernel_s"],
                r["gemm_s"],
                r["graph_s"],
            ]
            for r in rows
        ],
    )
    body = (
        "### Floors (medians, interleaved rounds)\n\n"
        + floors
        + "\n\n### Building blocks\n\n"
        + times
        + "\n\n### Ratios (measured in this run)\n\n"
        + ratios
        + "\n\n### Multi-class cost against the product floor\n\n"
        + floor_ratio
        + "\n"
    )
    if args.usps:
        body += "\n### Full USPS through the public API (LapSVM, solver time per iteration)\n\n"
        body += usps_api(cm.data_dir(args.data)) + "\n"
    print(body)
    if not args.no_save:
        cmd = (
            "python benchmarks/bench_floor.py"
            + (" --quick" if args.quick else "")
            + (" --usps" if args.usps else "")
            + (f" --sizes {' '.join(map(str, args.sizes))}" if args.sizes else "")
        )
        path = cm.append_results(
            "floor", "Floors and building blocks", cmd, body, machine
        )
        print(f"appended to {path}")


if __name__ == "__main__":
    main()
