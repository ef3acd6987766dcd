"""Streamed exact kernel product against its GEMM.

On the scale benchmark's ``manifold`` data (float32, median-rule RBF), for each
n and d this times, on one BLAS thread, median of ``--repeat`` interleaved
rounds:

* ``product``: one ``StreamedKernelOperator @ V``, V of shape (n,) (C = 1) and
  (n, 10) (C = 10);
* ``gemm``: the bare float32 GEMMs :math:`X_R X_S^T` of *all* n x n entries, in
  the operator's tile shape, into one reused buffer -- the floor of any product
  that forms every entry (the operator forms only the tiles S >= R, so it can go
  below 1);
* unless ``--no-before``: the previous algorithm (commit ffcf8b6), row tiles
  of at most 256 MiB from ``kernel_matrix`` applied to V (``before``), and the
  GEMM the previous benchmark compared it with (the same 256 MiB row tiles, a
  fresh output per tile: ``gemm_fresh``).

Usage::

    python benchmarks/scale/bench_streamed.py --n 20000 50000 --d 50
    python benchmarks/scale/bench_streamed.py --n 20000 --d 784 --no-before
    python benchmarks/scale/bench_streamed.py --quick --no-save   # smoke test

Results: a table appended to benchmarks/scale/results/scale.md (and JSON lines
to scale.jsonl).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent / "src"))
import _common as cm  # noqa: E402
from data import make_manifold  # noqa: E402
from semisvm.kernels import (  # noqa: E402
    StreamedKernelOperator,
    kernel_matrix,
    median_gamma,
)
from semisvm.kernels._operators import single_blas_thread  # noqa: E402

RESULTS = HERE / "results"
COLUMNS = [
    "n",
    "d",
    "C",
    "tile",
    "t_product",
    "t_gemm",
    "ratio",
    "t_before",
    "t_gemm_fresh",
    "ratio_before",
    "speedup",
    "C10_vs_C1",
    "load",
]


def gemm_floor(X: np.ndarray, rows: int, cols: int) -> None:
    """The GEMMs of all n x n entries of X X^T in (rows, cols) tiles, one buffer."""
    n = X.shape[0]
    buf = np.empty((rows, cols), dtype=np.float32)
    for r0 in range(0, n, rows):
        r1 = min(n, r0 + rows)
        for c0 in range(0, n, cols):
            c1 = min(n, c0 + cols)
            np.matmul(X[r0:r1], X[c0:c1].T, out=buf[: r1 - r0, : c1 - c0])


def before_product(X: np.ndarray, gamma: float, v: np.ndarray) -> np.ndarray:
    """The previous streamed product (commit ffcf8b6): 256 MiB row tiles."""
    n = X.shape[0]
    rows = max(1, (256 * 2**20) // (4 * n))
    sq = np.einsum("ij,ij->i", X, X)
    v32 = v.astype(np.float32)
    out = np.empty(v.shape)
    for s in range(0, n, rows):
        sl = slice(s, min(n, s + rows))
        Kb = kernel_matrix(
            X[sl], X, gamma=gamma, dtype=np.float32, X_norms_sq=sq[sl], Z_norms_sq=sq
        )
        r = np.arange(n)[sl]
        Kb[np.arange(r.size), r] = 1.0
        out[sl] = Kb @ v32
    return out


def gemm_fresh(X: np.ndarray) -> None:
    """The previous benchmark's GEMM: 256 MiB row tiles, a new output each."""
    n = X.shape[0]
    rows = max(1, (256 * 2**20) // (4 * n))
    for s in range(0, n, rows):
        X[s : s + rows] @ X.T


def run(n: int, d: int, repeat: int, before: bool) -> list[dict]:
    X, _ = make_manifold(n, d, seed=0)
    gamma = median_gamma(X)
    op = StreamedKernelOperator(X, gamma=gamma)
    rng = np.random.default_rng(0)
    v, V10 = rng.normal(size=n), rng.normal(size=(n, 10))
    # one-off set-up (threadpoolctl, first touch of the buffers) outside the timing
    StreamedKernelOperator(X[:500], gamma=gamma) @ v[:500]
    fns = {
        "product1": lambda: op @ v,
        "product10": lambda: op @ V10,
        "gemm": lambda: gemm_floor(X, op.tile_rows, op.tile_cols),
    }
    if before:
        fns["before1"] = lambda: before_product(X, gamma, v)
        fns["before10"] = lambda: before_product(X, gamma, V10)
        fns["gemm_fresh"] = lambda: gemm_fresh(X)
    load0 = os.getloadavg()[0]
    with single_blas_thread():
        t = cm.interleaved(fns, repeat=repeat)
    load = f"{load0:.2f}-{os.getloadavg()[0]:.2f}"
    rows = []
    for C in (1, 10):
        r = dict(
            n=n,
            d=d,
            C=C,
            tile=f"{op.tile_rows}x{op.tile_cols}",
            t_product=t[f"product{C}"],
            t_gemm=t["gemm"],
            ratio=t[f"product{C}"] / t["gemm"],
            C10_vs_C1=t["product10"] / t["product1"] if C == 10 else None,
            load=load,
        )
        if before:
            r.update(
                t_before=t[f"before{C}"],
                t_gemm_fresh=t["gemm_fresh"],
                ratio_before=t[f"before{C}"] / t["gemm_fresh"],
                speedup=t[f"before{C}"] / t[f"product{C}"],
            )
        rows.append(r)
        print(json.dumps(r), flush=True)
    return rows


def main() -> None:
    ap = cm.bench_parser(__doc__, data=False)
    ap.add_argument("--n", type=int, nargs="+", default=[20_000, 50_000])
    ap.add_argument("--d", type=int, nargs="+", default=[50])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-before", action="store_true")
    ap.add_argument("--note", default="")
    args = ap.parse_args()
    if args.quick:
        args.n, args.d, args.repeat = [3000], [50], 2
    machine = cm.machine_description()
    t0 = time.perf_counter()
    records = []
    for d in args.d:
        for n in args.n:
            records += run(n, d, args.repeat, not args.no_before)
    table = cm.records_table(records, COLUMNS)
    print(table)
    if args.no_save:
        return
    with open(RESULTS / "scale.md", "a") as fh:
        fh.write(
            f"\n### Streamed product vs its GEMM (bench_streamed.py), {machine['date']}"
            f" {args.note}\n\n"
            f"Command: `python benchmarks/scale/bench_streamed.py "
            f"{' '.join(sys.argv[1:])}`; commit {machine['commit']}; "
            f"{machine['cpu']}, {machine['cores']} cores; BLAS {machine['blas']}, "
            f"env {machine['blas_env']}; one BLAS thread; median of {args.repeat} "
            f"interleaved rounds; {time.perf_counter() - t0:.0f} s.\n\n"
            "t_* in seconds; ratio = t_product / t_gemm (t_gemm: all n x n entries "
            "of X X^T in the tile shape, one reused buffer); ratio_before = "
            "t_before / t_gemm_fresh (the previous operator and the previous "
            "benchmark's GEMM: 256 MiB row tiles, fresh outputs); speedup = "
            "t_before / t_product; C10_vs_C1 = t_product(C=10) / t_product(C=1); load = 1-minute "
            "load average at start-end.\n\n"
        )
        fh.write(table + "\n")
    with open(RESULTS / "scale.jsonl", "a") as fh:
        for r in records:
            fh.write(json.dumps(dict(r, bench="streamed", date=machine["date"])) + "\n")


if __name__ == "__main__":
    main()
