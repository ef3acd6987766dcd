r"""Coarse-to-fine start for the primal solvers: the exact optimum on m landmarks.

PCG on the full problem spreads the labels' information about one graph hop per
iteration, so with a few labels among many points an early-stopping rule can
fire before the labels have spread and stop far from the optimum (measurements:
docs/rules.rst).  The coarse
start gives PCG an iterate whose outputs are already spread over the whole
graph.

**The coarse problem is the full one restricted to a subspace.**  Let Z be m
landmark rows, :math:`W = K_{ZZ} = U\operatorname{diag}(s)U^T` and
:math:`T = U_+ \operatorname{diag}(s_+^{-1/2})` over the eigenvalues kept
(:math:`s > \epsilon s_{\max}`).  For :math:`\alpha` supported on Z with
:math:`\alpha_Z = T\eta`,

.. math::
    K\alpha = K_{:Z} T \eta = \Phi\eta, \qquad
    \alpha^T K \alpha = \eta^T T^T W T \eta = \|\eta\|^2,

so the LapSVM/LapRLS objective of :math:`(\alpha, b)` equals the objective of
the feature-space problem in :math:`(\eta, b)` with features
:math:`\Phi = K_{:Z}T` (:func:`semisvm.solvers._lowrank.lapsvm_lowrank`, which
solves it exactly: a direct solve for the squared loss, Newton with exact line
search for the squared hinge).  Its optimum is therefore the exact minimizer of
the full objective over that subspace: a feasible start whose objective is at
most that of :math:`\alpha = 0`, from which PCG continues on the full problem.
Nothing is approximated: the model PCG solves is unchanged, only its start.

**On a Nyström-based operator** (FITC, blocks: :math:`\hat K = \Phi\Phi^T` plus
a residual that vanishes on the landmark columns) the operator's own
landmarks serve (``landmarks``, a :class:`~semisvm.solvers._landmarks.LandmarkSpace`
whose graph Gram the fit's other steps share): with :math:`\Phi = CT`,
:math:`\Phi\Phi_Z^T T = \Phi\,T^TWT = \Phi`, and the residual's landmark columns
:math:`K_{iz} - \Phi_i\Phi_z^T = (C(I - TT^TW))_{iz}` vanish when the factor keeps
every eigenvalue of W (:math:`TT^TW = I`), so :math:`\hat K_{:Z}T = \Phi` and
:math:`\alpha^T\hat K\alpha = \|\eta\|^2` on :math:`\alpha_Z = T\eta`: the same
restricted optimum, with no column, eigendecomposition or feature product
recomputed.  With dropped eigenvalues the start is that optimum up to them
(still only a start: PCG solves the full problem).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._landmarks import LandmarkSpace
from ._lowrank import lapsvm_lowrank

__all__ = ["coarse_start", "default_coarse_size"]


def default_coarse_size(n: int) -> int:
    r""":math:`\lceil\sqrt n \ln n\rceil` landmarks, capped at 1,500 and n."""
    return int(min(n, 1500, np.ceil(np.sqrt(n) * np.log(max(n, 2)))))


def _kernel_columns(K: Any, Z: np.ndarray) -> np.ndarray:
    """K[:, Z] of a dense array or an operator with ``rows`` (K is symmetric)."""
    if isinstance(K, np.ndarray):
        return np.ascontiguousarray(K[Z].T, dtype=np.float64)
    return np.ascontiguousarray(np.asarray(K.rows(Z)).T, dtype=np.float64)


def coarse_start(
    K: Any,
    Y: np.ndarray,
    *,
    L: Any,
    gamma_a: float,
    gamma_i: float,
    loss: str,
    intrinsic_bias: bool,
    n_landmarks: int | None = None,
    random_state: int = 0,
    landmarks: LandmarkSpace | None = None,
) -> tuple[np.ndarray, np.ndarray, dict]:
    r"""The exact optimum over coefficients supported on uniform landmarks.

    Parameters
    ----------
    K : ndarray or kernel operator with ``rows`` of shape (n, n)
    Y : ndarray of shape (n, C)
        Targets in the solvers' convention (±1 labeled, 0 unlabeled).
    L : Laplacian (sparse matrix or operator)
    gamma_a, gamma_i : float
        The paper's weights (as the full solver gets them).
    loss : {'squared_hinge', 'squared'}
    intrinsic_bias : bool
    n_landmarks : int, default=None
        :func:`default_coarse_size` of n.  Every labeled point is a landmark
        besides these (their coefficients matter most).
    random_state : int, default=0
    landmarks : LandmarkSpace, optional
        The landmark rows Z, features :math:`\Phi = \hat K_{:Z}T` (n x r) and T
        (|Z| x r) of a Nyström-based operator and its graph Gram (module
        docstring; :func:`~semisvm.solvers._landmarks.landmark_space` of
        :class:`~semisvm.kernels.FITCOperator` and
        :class:`~semisvm.kernels.BlockResidualOperator`), used instead of drawing
        landmarks.

    Returns
    -------
    alpha0 : ndarray of shape (n, C)
        Nonzero on the landmarks only.
    b0 : ndarray of shape (C,)
    info : dict
        ``n_landmarks``, ``rank`` and the coarse ``objective`` per column.
    """
    n = Y.shape[0]
    kw = dict(
        L=L, gamma_a=gamma_a, gamma_i=gamma_i, loss=loss, intrinsic_bias=intrinsic_bias
    )
    if landmarks is not None:
        landmarks.check_laplacian(L)
        Z, T = landmarks.Z, landmarks.T
        M = None
        if L is not None and gamma_i != 0:
            M = landmarks.bordered_gram(intrinsic_bias)
        res = lapsvm_lowrank(landmarks.Phi, Y, M=M, **kw)
    else:
        m = default_coarse_size(n) if n_landmarks is None else int(min(n, n_landmarks))
        lab = np.flatnonzero(np.any(Y != 0, axis=1))
        rng = np.random.default_rng(random_state)
        Z = np.union1d(lab, rng.choice(n, size=m, replace=False))
        C = _kernel_columns(K, Z)
        W = C[Z]
        W = 0.5 * (W + W.T)
        s, U = np.linalg.eigh(W)
        keep = s > max(s.max(), 0.0) * 1e-10
        T = U[:, keep] / np.sqrt(s[keep])
        res = lapsvm_lowrank(C, Y, T=T, **kw)
    eta = np.asarray(res.alpha).reshape(T.shape[1], -1)
    alpha0 = np.zeros((n, eta.shape[1]))
    alpha0[Z] = T @ eta
    info = {
        "n_landmarks": int(Z.size),
        "rank": int(T.shape[1]),
        "objective": np.asarray(res.objective, dtype=np.float64),
    }
    return alpha0, np.asarray(res.b, dtype=np.float64).reshape(-1), info
