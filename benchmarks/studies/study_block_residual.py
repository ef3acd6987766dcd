"""Study: low rank plus the exact kernel on blocks of nearby points (PIC).

FITC keeps the exact diagonal of K beside the Nystroem part.  The partially
independent conditional approximation (PIC; Snelson & Ghahramani, AISTATS 2007)
keeps the exact residual on the diagonal blocks of a partition of the points,

    K_hat = Phi Phi^T + blockdiag_B(K_BB - Phi_B Phi_B^T),

which is positive semi-definite (each block is a principal submatrix of the
Schur complement K - Phi Phi^T) and costs 2 n m + n b per column for blocks
of about b points.  FITC is its case b = 1.  The blocks are mini-batch k-means
clusters of X, so that the near neighbours of a point, whose kernel values the
low-rank part underestimates most, tend to share its block.

The study prepares the default fit (its graph, its weights chosen by the
"auto" rule), solves it by PCG on the dense K (``--dense``), on FITC and on the
block operator, applies the estimator's class balance to the outputs and
reports the error on the unlabeled points and the solve time.  Data: full USPS
with ``--copies`` deformed copies of every image (``bench_peers.deformed_usps``;
0: USPS itself), ``--per-class`` labels per class, label draw ``--draw``.

    python benchmarks/studies/study_block_residual.py --copies 1 --block-sizes 1 100 300 --dense
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import bench_peers as bp  # noqa: E402


class BlockResidualOperator:
    """``Phi Phi^T`` plus the exact residual on the diagonal blocks ``blocks``."""

    def __init__(self, Phi: np.ndarray, blocks: list, residuals: list) -> None:
        self.Phi = np.ascontiguousarray(Phi, dtype=np.float64)
        n = Phi.shape[0]
        self.shape = (n, n)
        self.dtype = np.dtype(np.float64)
        self.blocks = blocks
        self.residuals = residuals
        self._block_of = np.empty(n, dtype=np.intp)
        self._position = np.empty(n, dtype=np.intp)
        for k, B in enumerate(blocks):
            self._block_of[B] = k
            self._position[B] = np.arange(B.size)

    @classmethod
    def from_kernel(cls, Phi, blocks, kernel) -> BlockResidualOperator:
        """``kernel(rows)``: the exact K on those rows and columns."""
        residuals = [kernel(B) - Phi[B] @ Phi[B].T for B in blocks]
        return cls(Phi, blocks, residuals)

    def __matmul__(self, V: np.ndarray) -> np.ndarray:
        V = np.asarray(V, dtype=np.float64)
        out = self.Phi @ (self.Phi.T @ V)
        for B, R in zip(self.blocks, self.residuals, strict=True):
            out[B] += R @ V[B]
        return out

    def diagonal(self) -> np.ndarray:
        d = np.einsum("ij,ij->i", self.Phi, self.Phi)
        for B, R in zip(self.blocks, self.residuals, strict=True):
            d[B] += np.diag(R)
        return d

    def rows(self, idx) -> np.ndarray:
        idx = np.asarray(idx)
        out = self.Phi[idx] @ self.Phi.T
        for r, i in enumerate(idx):
            k = self._block_of[i]
            out[r, self.blocks[k]] += self.residuals[k][self._position[i]]
        return out


def partition(X: np.ndarray, size: int, seed: int = 0) -> list:
    """Blocks of about ``size`` points: mini-batch k-means clusters of X (one
    point per block for size 1, FITC)."""
    n = X.shape[0]
    if size <= 1:
        return [np.array([i]) for i in range(n)]
    from sklearn.cluster import MiniBatchKMeans

    km = MiniBatchKMeans(
        n_clusters=max(2, n // size), random_state=seed, n_init=1, batch_size=4096
    ).fit(X)
    return [
        B
        for B in (np.flatnonzero(km.labels_ == c) for c in range(km.n_clusters))
        if B.size
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--copies", type=int, default=1)
    ap.add_argument("--m", type=int, default=0, help="landmarks (0: the default)")
    ap.add_argument("--block-sizes", type=int, nargs="+", default=[1, 100, 300])
    ap.add_argument("--dense", action="store_true", help="also solve on the dense K")
    ap.add_argument("--per-class", type=int, default=5, help="labels per class")
    ap.add_argument("--draw", type=int, default=0)
    args = ap.parse_args()
    from sklearn.metrics.pairwise import rbf_kernel
    from threadpoolctl import threadpool_limits

    from semisvm import LapSVM, SolverOptions
    from semisvm.models._adaptive import adapt_outputs
    from semisvm.models._model import choose_regularization
    from semisvm.models._params import fit_params
    from semisvm.models._problem import prepare_problem
    from semisvm.models._scale import default_n_components
    from semisvm.models._solve import solve

    X, y, yy, unl = bp.usps_draw(None, args.copies, args.per_class, args.draw)
    op = "dense" if args.dense else "fitc"
    params = fit_params(LapSVM(options=SolverOptions(kernel_approximation=op)))
    with threadpool_limits(1):
        t0 = time.perf_counter()
        problem = prepare_problem(X, yy, params)
        reg = choose_regularization(problem, params)
        gamma = problem.ops.gamma_
        t = problem.targets
        print(
            f"n={y.size} prepare+select {time.perf_counter() - t0:.1f}s "
            f"gamma_a={reg.gamma_a_:.3g} gamma_i={reg.gamma_i_:.3g} gamma={gamma:.4g}",
            flush=True,
        )

        def run(K, name: str) -> None:
            t1 = time.perf_counter()
            res = solve(
                params,
                K=K,
                L=problem.ops.L,
                Y=t.Y,
                kind="dense",
                solver="pcg",
                gamma_a=reg.gamma_a_,
                gamma_i=reg.gamma_i_,
                sample_weight=problem.sample_weight,
                early_stopping=problem.early_stopping,
            ).result
            seconds = time.perf_counter() - t1
            F, *_ = adapt_outputs(
                np.asarray(K @ res.alpha) + res.b,
                t.labeled,
                t.y_idx[t.labeled],
                t.classes.size,
                class_balance="mass",
                class_prior=None,
                classes=t.classes,
            )
            err = 100 * np.mean(t.classes[F.argmax(1)][unl] != y[unl])
            print(
                f"  {name:>28}: error {err:5.2f}%  solve {seconds:6.1f} s", flush=True
            )

        if args.dense:
            run(problem.ops.K, "dense")
        m = args.m or default_n_components(y.size)
        idx = np.random.default_rng(0).choice(y.size, m, replace=False)
        w, V = np.linalg.eigh(rbf_kernel(X[idx], X[idx], gamma=gamma))
        keep = w > 1e-8 * w.max()
        Phi = rbf_kernel(X, X[idx], gamma=gamma) @ (V[:, keep] / np.sqrt(w[keep]))
        for size in args.block_sizes:
            t1 = time.perf_counter()
            blocks = partition(X, size)
            K = BlockResidualOperator.from_kernel(
                Phi, blocks, lambda B: rbf_kernel(X[B], X[B], gamma=gamma)
            )
            largest = max(B.size for B in blocks)
            setup = time.perf_counter() - t1
            name = "FITC" if size <= 1 else f"blocks ~{size} (max {largest})"
            run(K, f"m={m} {name}, setup {setup:.1f}s")


if __name__ == "__main__":
    main()
