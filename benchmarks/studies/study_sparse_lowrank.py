"""Study: a kernel operator that keeps the dense model's accuracy at low-rank cost.

K is replaced by its Nystroem part plus the exact diagonal residual,

    K_hat = Phi Phi^T + diag(K - Phi Phi^T),

(the FITC correction of sparse Gaussian processes: exact on the diagonal, the
landmarks' low-rank part elsewhere).  A product costs 2 n m per column instead
of n^2.  The study fits LapRLS / LapSVM with the dense default's regularization
on K, on Phi Phi^T alone (today's Nystroem model) and on K_hat, and reports the
error on the unlabeled points and the solver's time.

    python benchmarks/studies/study_sparse_lowrank.py [--family usps5] [--m 1000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import _common as cm  # noqa: E402
import bench_peers as bp  # noqa: E402


class FITCOperator:
    """K_hat = Phi Phi^T + diag(d) as the solvers' operator."""

    def __init__(self, Phi: np.ndarray, d: np.ndarray) -> None:
        self.Phi = np.ascontiguousarray(Phi, dtype=np.float64)
        self.d = d
        self.shape = (Phi.shape[0], Phi.shape[0])
        self.dtype = np.dtype(np.float64)

    def __matmul__(self, V: np.ndarray) -> np.ndarray:
        V = np.asarray(V, dtype=np.float64)
        out = self.Phi @ (self.Phi.T @ V)
        if V.ndim == 1:
            return out + self.d * V
        return out + self.d[:, None] * V

    def diagonal(self) -> np.ndarray:
        return np.einsum("ij,ij->i", self.Phi, self.Phi) + self.d

    def rows(self, idx):
        R = self.Phi[idx] @ self.Phi.T
        R[np.arange(len(idx)), idx] += self.d[idx]
        return R


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--family", default="usps5")
    ap.add_argument("--m", type=int, nargs="+", default=[500, 1000, 2000])
    ap.add_argument("--draws", type=int, default=1)
    ap.add_argument("--model", default="LapRLS")
    ap.add_argument("--skip-dense", action="store_true")
    args = ap.parse_args()
    from sklearn.metrics.pairwise import rbf_kernel

    from semisvm import LapRLS, LapSVM
    from semisvm.models._model import choose_regularization
    from semisvm.models._params import fit_params
    from semisvm.models._problem import prepare_problem
    from semisvm.models._solve import solve

    X, y, per = bp.load_family(args.family, cm.data_dir(None), False)
    X = np.asarray(X, dtype=np.float64)
    for draw in range(args.draws):
        lab = bp.draw_labels(y, per, draw)
        yy = np.full(y.size, -1)
        yy[lab] = y[lab]
        unl = np.setdiff1d(np.arange(y.size), lab)
        est = (LapRLS if args.model == "LapRLS" else LapSVM)()
        params = fit_params(est)
        t0 = time.perf_counter()
        problem = prepare_problem(X, yy, params)
        t_prep = time.perf_counter() - t0
        t0 = time.perf_counter()
        reg = choose_regularization(problem, params)
        t_sel = time.perf_counter() - t0
        print(
            f"draw {draw}: prep {t_prep:.1f}s select {t_sel:.1f}s "
            f"gamma_a={reg.gamma_a_:.3g} gamma_i={reg.gamma_i_:.3g} "
            f"kind={problem.kind} gamma={problem.ops.gamma_}",
            flush=True,
        )
        classes = problem.targets.classes

        def run(
            K, name, problem=problem, params=params, reg=reg, classes=classes, unl=unl
        ):
            t = time.perf_counter()
            sol = solve(
                params,
                K=K,
                L=problem.ops.L,
                Y=problem.targets.Y,
                kind="dense",
                solver="pcg",
                gamma_a=reg.gamma_a_,
                gamma_i=reg.gamma_i_,
                sample_weight=problem.sample_weight,
                early_stopping=problem.early_stopping,
            )
            t = time.perf_counter() - t
            res = sol.result
            F = np.asarray(K @ res.alpha) + res.b
            pred = classes[F.argmax(1)] if F.shape[1] > 1 else classes[(F[:, 0] > 0)]
            err = 100 * np.mean(pred[unl] != y[unl])
            G = (
                np.asarray(K.Phi @ (K.Phi.T @ res.alpha)) + res.b
                if hasattr(K, "Phi")
                else F
            )
            pg = classes[G.argmax(1)] if G.shape[1] > 1 else classes[(G[:, 0] > 0)]
            err_g = 100 * np.mean(pg[unl] != y[unl])
            print(
                f"  {name:>16}: err {err:5.2f}% (landmark part {err_g:5.2f}%) "
                f"solve {t:5.2f}s iters {np.max(res.n_iter)}",
                flush=True,
            )

        if not args.skip_dense:
            run(problem.ops.K, "dense")
        rng = np.random.default_rng(draw)
        for m in args.m:
            t = time.perf_counter()
            idx = rng.choice(y.size, m, replace=False)
            Kmm = rbf_kernel(X[idx], X[idx], gamma=problem.ops.gamma_)
            w, V = np.linalg.eigh(Kmm)
            keep = w > 1e-8 * w.max()
            Knm = rbf_kernel(X, X[idx], gamma=problem.ops.gamma_)
            Phi = Knm @ (V[:, keep] / np.sqrt(w[keep]))
            d = np.clip(1.0 - np.einsum("ij,ij->i", Phi, Phi), 0.0, None)
            t = time.perf_counter() - t
            print(f"  m={m}: factor {t:.2f}s, residual diag mean {d.mean():.3f}")
            run(FITCOperator(Phi, np.zeros_like(d)), f"nystroem m={m}")
            run(FITCOperator(Phi, d), f"fitc m={m}")


if __name__ == "__main__":
    main()
