r"""Leave-one-out on the labeled points for LapRLS and LapSVM over a grid of weights.

The estimators' default ``gamma_a="auto"``, ``gamma_i="auto"`` choose how far to
trust the graph from these numbers (:mod:`semisvm.models._autoreg`).

**Feature form.**  With features :math:`\Phi\in\mathbb R^{n\times r}`,
:math:`K = \Phi\Phi^T`, a function of the RKHS spanned by the training points is
:math:`f = \Phi w + b\,1` with :math:`\|f\|_K^2 = w^Tw`, and the objective of one
one-vs-rest column (Melacci & Belkin 2011, Eq. 7; LapRLS: squared loss) is
:math:`\sum_{i\le l} c_i\,\ell(y_i, f_i) + \gamma_A w^T w + \gamma_I w^T B w` with
:math:`B = \Phi^T L \Phi`.  With :math:`B = U\,\mathrm{diag}(\mu)\,U^T` and
:math:`A = \Phi_{\mathcal L} U` (l x r) the l x l matrix

.. math::
    G = \Phi_{\mathcal L} (\gamma_A I + \gamma_I B)^{-1} \Phi_{\mathcal L}^T
      = A\,\mathrm{diag}\big(1/(\gamma_A + \gamma_I\mu)\big)\,A^T

costs :math:`O(l^2 r)` per pair :math:`(\gamma_A, \gamma_I)` after one
:math:`O(r^3)` eigendecomposition.

**LapRLS: exact LOO.**  The labeled outputs are :math:`f = H y` for a hat matrix
H built from G (:class:`SpectralLOO`), and deleting the loss term of point i
(the point stays in the graph: transductive LOO) gives the held-out output
exactly, :math:`f^{(-i)}_i = y_i - (y_i - f_i)/(1 - H_{ii})` (Hastie, Tibshirani
& Friedman, *ESL*, Eq. 7.52).  With :math:`\Phi` the full square root of K these
are the exact LOO outputs of :class:`~semisvm.LapRLS`; above ``max_features``,
those of the Nyström model whose landmarks include every labeled point.

**LapSVM** from the generalized Hessian at the optimum (Keerthi & DeCoste 2005;
Chapelle 2007): the LapRLS formula on the error set, exact while the error set
does not change, and exact up to ``exact_max`` labels (re-solved).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import scipy.linalg as sla

from .._memory import block_rows
from .._validation import as_generator
from ._lowrank import intrinsic_gram

__all__ = [
    "SpectralLOO",
    "balanced_loo",
    "gram_product",
    "loo_features",
    "loo_losses",
    "margins",
    "mass_shifts",
    "pointwise_loss",
    "scale_free_squared_hinge",
]


def loo_features(
    columns: Callable[[np.ndarray], np.ndarray],
    n: int,
    labeled_idx: np.ndarray,
    *,
    max_features: int = 600,
    random_state: Any = None,
) -> np.ndarray:
    r"""Features :math:`\Phi` (n x r) with :math:`\Phi\Phi^T \approx K`.

    Parameters
    ----------
    columns : callable
        ``columns(idx)`` returns the (n, len(idx)) block ``K[:, idx]`` in float64.
        An object with a ``features(idx, transform)`` method (the columns of a
        dask array, :class:`semisvm.kernels._distributed.DistributedKernelColumns`)
        builds :math:`\Phi` where the columns are and returns it (an object with
        ``shape``, row indexing and ``graph_gram(L)``).
    n : int
        Number of training points.
    labeled_idx : ndarray of int
        Rows of the labeled points: they are always landmarks, so that their
        features reproduce their kernel rows exactly.
    max_features : int, default=600
        With ``n <= max_features`` every point is a landmark and :math:`\Phi` is
        an exact square root of K: its Cholesky factor, or when K is
        numerically singular its pivoted Cholesky factor truncated at the
        numerical rank (:func:`_pivoted_root`); otherwise the landmarks are
        the labeled points and uniformly drawn others (``random_state``, 0 when
        None), among ``columns.preferred`` when it has enough of them (rows
        whose columns it reads instead of computing,
        :class:`semisvm.models._problem.FactorColumns`).
    random_state : int, RandomState or None

    Returns
    -------
    Phi : ndarray of shape (n, r), float64
    """
    labeled_idx = np.asarray(labeled_idx, dtype=np.intp)
    if n <= max(max_features, labeled_idx.size):
        idx = np.arange(n)
    else:
        rng = as_generator(random_state)
        extra = max(max_features - labeled_idx.size, 0)
        # landmarks whose columns ``columns`` holds already, when there are enough
        pool = getattr(columns, "preferred", None)
        rest = np.setdiff1d(np.arange(n) if pool is None else pool, labeled_idx)
        if rest.size < extra:
            rest = np.setdiff1d(np.arange(n), labeled_idx)
        idx = np.concatenate([labeled_idx, rng.choice(rest, size=extra, replace=False)])
    if idx.size < n and hasattr(columns, "features"):
        # columns kept where they are (a cluster's workers): Phi = C T there
        return columns.features(idx, landmark_transform)
    Cm = np.asarray(columns(idx), dtype=np.float64)
    Wm = Cm[idx]
    Wm = 0.5 * (Wm + Wm.T)
    if idx.size == n:
        # every point a landmark: any square root of K is exact; the Cholesky
        # factor (K = R R^T, Phi = R) costs a sixth of an eigendecomposition.
        # Numerically singular K (duplicate points, a wide kernel on 2-d data)
        # falls back to the pivoted factor below.
        try:
            R = sla.cholesky(Wm, lower=True, check_finite=False)
            if np.all(np.isfinite(R)) and np.diag(R).min() > 1e-7 * np.sqrt(
                max(float(np.diag(Wm).max()), 1e-300)
            ):
                return R
        except np.linalg.LinAlgError:
            pass
    if idx.size == n:
        return _pivoted_root(Wm)
    T = landmark_transform(Wm)
    # C W^{-1/2} in place, row block by row block: no second n x r array (4.8 GB
    # at n = 1,000,000, r = 600)
    rk = T.shape[1]
    if not (Cm.flags.owndata and Cm.flags.writeable):  # not ours to overwrite
        return Cm @ T
    step = block_rows(Cm.shape[1], 8, cap_bytes=64 * 2**20)
    for s in range(0, n, step):
        Cm[s : s + step, :rk] = Cm[s : s + step] @ T
    return Cm[:, :rk]


def _pivoted_root(W: np.ndarray) -> np.ndarray:
    r"""A square root :math:`\Phi` (n x k) of a numerically singular PSD matrix,
    :math:`W \approx \Phi\Phi^T`, by the pivoted Cholesky factorization (LAPACK
    ``dpstrf``): it stops at the numerical rank k, when every remaining pivot of
    the Schur complement is below :math:`10^{-10} \max_i W_{ii}` (so
    :math:`\|W - \Phi\Phi^T\|_2 \le \operatorname{tr}(S) \le
    (n - k)\,10^{-10} \max_i W_{ii}`), at the cost of a Cholesky factorization
    (an eigendecomposition costs about six: two moons, n = 2,000, 0.4 s
    against 4.6 s).  Rows in the original order: :math:`\Phi_{p_i} = R_i`."""
    from scipy.linalg.lapack import dpstrf

    n = W.shape[0]
    tol = 1e-10 * max(float(np.max(np.diag(W))), 1e-300)
    c, piv, rank, info = dpstrf(
        np.array(W, dtype=np.float64, order="F"), lower=1, tol=tol
    )
    if info < 0:  # pragma: no cover - an argument error inside LAPACK
        raise RuntimeError(f"dpstrf failed (info={info}).")
    rank = max(int(rank), 1)
    Phi = np.empty((n, rank))
    Phi[np.asarray(piv, dtype=np.intp) - 1] = np.tril(c[:, :rank])
    return Phi


def landmark_transform(W: np.ndarray) -> np.ndarray:
    r""":math:`T = V_+ \Lambda_+^{-1/2}` of the landmark block :math:`W = V\Lambda V^T`
    (eigenvalues below :math:`10^{-10}\lambda_{\max}` dropped): :math:`\Phi = C T`
    has :math:`\Phi\Phi^T = C W^+ C^T`, the Nyström approximation of K."""
    lam, V = np.linalg.eigh(W)
    keep = lam > 1e-10 * max(float(lam[-1]), 1e-300)
    return V[:, keep] / np.sqrt(lam[keep])


def gram_product(Phi: np.ndarray, LPhi: np.ndarray) -> np.ndarray:
    r""":math:`\Phi^T (L\Phi)`, half the flops when :math:`\Phi` is the lower
    triangular Cholesky root of K (:func:`loo_features` with every point a
    landmark)."""
    n, r = Phi.shape
    if n == r and n > 64 and not np.triu(Phi[:64, :64], 1).any():
        if not np.triu(Phi, 1).any():
            from scipy.linalg.blas import dtrmm

            return np.asarray(
                dtrmm(1.0, Phi, LPhi, side=0, lower=1, trans_a=1), dtype=np.float64
            )
    return Phi.T @ LPhi


def graph_gram(Phi: np.ndarray, L: Any) -> np.ndarray:
    r""":math:`\Phi^T L \Phi` (float64): through :func:`gram_product` for the
    square Cholesky root, else in row blocks
    (:func:`~semisvm.solvers._lowrank.intrinsic_gram`), never an n x r float64
    :math:`L\Phi` (10.7 GB at n = 1,000,000, r = 1,334)."""
    if hasattr(Phi, "graph_gram"):  # features kept on a cluster's workers
        return Phi.graph_gram(L)
    n, r = Phi.shape
    if n == r:
        return gram_product(Phi, np.asarray(L @ Phi, dtype=np.float64))
    return intrinsic_gram(Phi, L, intrinsic_bias=False)[:r, :r]


def _spd_solve(M: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    r""":math:`M^{-1}` ``rhs`` for a symmetric positive definite ``M`` built
    for the call (overwritten): LAPACK's Cholesky factorization and solve
    (``dpotrf``, ``dpotrs``), the routines ``scipy.linalg.cho_factor`` and
    ``cho_solve`` call, on the same numbers (``M.T``: the Fortran-ordered view
    of the symmetric M) -- the same bits without their copies and checks
    (600 x 600, 50 right-hand sides: 8.6 ms instead of 14 ms per ratio, 8
    ratios per graph of a search).  Raises ``LinAlgError`` when M is not
    numerically positive definite, as ``cho_factor`` does."""
    from scipy.linalg.lapack import dpotrf, dpotrs

    c, info = dpotrf(M.T, lower=1, clean=0, overwrite_a=1)
    if info > 0:
        raise np.linalg.LinAlgError(f"{info}-th leading minor not positive definite")
    if info < 0:  # pragma: no cover - an argument error inside LAPACK
        raise RuntimeError(f"dpotrf failed (info={info}).")
    x, info = dpotrs(c, rhs, lower=1)
    if info < 0:  # pragma: no cover
        raise RuntimeError(f"dpotrs failed (info={info}).")
    return x


class SpectralLOO:
    """LOO outputs of LapRLS / LapSVM on the labeled points for many weight pairs.

    Parameters
    ----------
    Phi : ndarray of shape (n, r)
        Features with :math:`\\Phi\\Phi^T \\approx K` (:func:`loo_features`).
    L : sparse matrix, operator or None
        Graph Laplacian (None: supervised problems only).
    labeled_idx : ndarray of int of shape (l,)
    Y : ndarray of shape (l, C)
        ±1 one-vs-rest targets of the labeled points.
    weights : ndarray of shape (l,) or None
        Loss weights :math:`c_i` (class weights); None means 1.
    fit_intercept : bool, default=True
        An unpenalized bias b.
    exact_max : int, default=100
        Up to this many labeled points the LapSVM LOO outputs are exact (each
        held-out error vector re-solved, warm-started from the error set);
        above, the one-step approximation from the generalized Hessian.
    unlabeled_idx : ndarray of int or None
        Rows of unlabeled points whose outputs every leave-one-out fit also
        returns (:meth:`fold_outputs`): the class balance of a held-out fit is
        computed on them, as the estimator computes it on its unlabeled points.
    spectral : bool or 'ratio', default=True
        Diagonalize :math:`B = \\Phi^T L \\Phi` once (worth it for many weight
        pairs); ``False`` solves with the Cholesky factor of
        :math:`\\gamma_A I + \\gamma_I B` per pair (a few pairs: an
        :math:`r^3/3` factorization instead of an eigendecomposition);
        ``'ratio'`` keeps one Cholesky solve of :math:`I + \\rho B` per ratio
        :math:`\\rho = \\gamma_I/\\gamma_A`, shared by every pair with that
        ratio (:math:`(\\gamma_A I + \\gamma_I B)^{-1} = (I + \\rho
        B)^{-1}/\\gamma_A`): a geometric grid of many pairs has few ratios (the
        default grid of the ``*CV`` estimators: 8 for 21 pairs), and 8
        factorizations cost less than one eigendecomposition.
    gram : ndarray of shape (r, r), optional
        :math:`B = \\Phi^T L \\Phi` computed before (e.g.
        :math:`(L\\Phi)^T (L\\Phi)` for the square of a Laplacian whose
        :math:`L\\Phi` served the first power, or the fit's landmark space's).
    ambient_mask : ndarray of shape (r,) or None
        0/1 diagonal :math:`E` of the ambient penalty :math:`\\gamma_A w^T E w`
        (None: :math:`E = I`).  The estimators' *intrinsic bias* is the case
        :math:`\\Phi \\to [\\Phi, 1]`, :math:`E = \\mathrm{diag}(1, \\dots, 1, 0)`,
        ``fit_intercept=False``: the bias is a coefficient that the graph term
        sees and the ambient term does not, :math:`f = \\Phi w + b 1` with
        :math:`\\gamma_I (\\Phi w + b1)^T L (\\Phi w + b1)` (it differs from a free
        intercept when L's rows do not sum to 0: the normalized Laplacian).  The
        spectral path then diagonalizes the pencil: with the generalized
        eigenvectors :math:`V^T(E + B)V = I`, :math:`V^T B V = \\mathrm{diag}(\\beta)`
        (so :math:`V^T E V = I - \\mathrm{diag}(\\beta)`),
        :math:`(\\gamma_A E + \\gamma_I B)^{-1} = V\\,\\mathrm{diag}\\big(1 /
        (\\gamma_A(1 - \\beta) + \\gamma_I\\beta)\\big)V^T`; :math:`E + B` must be
        positive definite (for the intrinsic bias: :math:`1^T L 1 > 0`) and
        :math:`\\gamma_I > 0`.

    Notes
    -----
    *LapRLS.*  The labeled outputs of the weighted ridge problem without
    intercept are :math:`f = H_R y` with :math:`H_R = G(CG + I)^{-1}C`,
    :math:`C = \\mathrm{diag}(c)` (push-through identity).  An unpenalized
    intercept is profiled out: the ridge minimum for targets :math:`z` is
    :math:`z^T C(I-H_R)z`, so :math:`b^* = 1^TC(I-H_R)y / 1^TC(I-H_R)1` and

    .. math::
        H = H_R + \\frac{(I - H_R)1\\;1^T C (I - H_R)}{1^T C (I - H_R) 1}.

    Deleting the loss term of point i changes a quadratic problem by a rank-one
    term, and the identity for linear smoothers gives
    :math:`f^{(-i)}_i = y_i - (y_i - f_i)/(1 - H_{ii})` (*ESL*, Eq. 7.52 for
    the unweighted case; the weighted proof is the same: :math:`f^{(-i)}` is
    the solution for the targets with :math:`y_i` replaced by
    :math:`f^{(-i)}_i`).  The intrinsic term on :math:`\\Phi w` only is exact
    for :math:`L = D - W`, whose rows sum to 0 (``ambient_mask`` for the
    intrinsic bias).

    *LapSVM.*  The squared-hinge optimum is the LapRLS solution on its error
    set :math:`E = \\{i: y_i f_i < 1\\}` (found by the same error-set iteration
    as primal Newton, in the l-dimensional form); removing a point outside E
    leaves the solution unchanged (:math:`f^{(-i)}_i = f_i`), and for
    :math:`i\\in E` the LapRLS formula on E is exact as long as E does not
    change.  Up to ``exact_max`` labeled points each :math:`i \\in E` is
    instead re-solved exactly (the error-set iteration without point i,
    warm-started), which makes the LapSVM LOO exact too.

    Cost per grid point: :math:`O(l^2 r + l^3)` (LapRLS, all classes at once)
    and :math:`O(C\\,t\\,|E|^3)` for LapSVM (t error-set iterations, usually
    < 10).
    """

    def __init__(
        self,
        Phi: np.ndarray,
        L: Any,
        labeled_idx: np.ndarray,
        Y: np.ndarray,
        *,
        weights: np.ndarray | None = None,
        fit_intercept: bool = True,
        exact_max: int = 100,
        unlabeled_idx: np.ndarray | None = None,
        spectral: bool | str = True,
        gram: np.ndarray | None = None,
        ambient_mask: np.ndarray | None = None,
    ) -> None:
        self.exact_max = exact_max
        self.by_ratio = spectral == "ratio"
        A0 = Phi[labeled_idx]
        AU0 = (
            Phi[np.asarray(unlabeled_idx, dtype=np.intp)]
            if (unlabeled_idx is not None)
            else None
        )
        self.B: np.ndarray | None = None
        #: the spectral basis U of the rows (None: the features' own basis)
        self._basis: np.ndarray | None = None
        #: the squared-hinge fits' error sets, per (gamma_a, gamma_i, column)
        self._error_sets: dict = {}
        self._factor: dict = {}
        #: Phi_R (I + rho B)^{-1} Phi_L^T of the engine's rows, per ratio
        self._unit: dict = {}
        r = Phi.shape[1]
        # the ambient diagonal E; in the spectral basis the penalty is
        # diag(gamma_a * p + gamma_i * mu)
        self.mask = (
            np.ones(r) if ambient_mask is None else np.asarray(ambient_mask, float)
        )
        self.p = np.ones(r)
        if ambient_mask is not None and L is None:
            raise ValueError("ambient_mask needs the graph term (L) to be definite.")
        if L is not None and self.by_ratio:
            B = gram if gram is not None else graph_gram(Phi, L)
            self.B = 0.5 * (B + B.T)
            self.mu = None
            self.A, self.AU = A0, AU0
        elif L is not None and not spectral:
            B = gram if gram is not None else graph_gram(Phi, L)
            self.B = 0.5 * (B + B.T)
            self.mu = None
            self.A, self.AU = A0, AU0
        elif L is not None:
            B = gram if gram is not None else graph_gram(Phi, L)
            B = 0.5 * (B + B.T)
            if ambient_mask is None:
                mu, U = np.linalg.eigh(B)
                self.mu = np.maximum(mu, 0.0)
            else:  # the pencil (B, E + B): V^T (E + B) V = I, V^T B V = diag(beta)
                beta, U = sla.eigh(B, B + np.diag(self.mask), check_finite=False)
                beta = np.clip(beta, 0.0, 1.0)
                self.mu, self.p = beta, 1.0 - beta
            self.A = A0 @ U
            self.AU = None if AU0 is None else AU0 @ U
            self._basis = U
        else:
            self.mu = np.zeros(Phi.shape[1])
            self.A = A0
            self.AU = AU0
        self.Y = np.asarray(Y, dtype=np.float64)
        l = self.Y.shape[0]
        self.c = (
            np.ones(l) if weights is None else np.asarray(weights, dtype=np.float64)
        )
        self.fit_intercept = fit_intercept

    def _solved(self, gamma_a: float, gamma_i: float) -> np.ndarray:
        r""":math:`(\gamma_A I + \gamma_I B)^{-1}\Phi_L^T` (r x l), cached."""
        if self.by_ratio:
            return self._solved_ratio(gamma_i / gamma_a) / gamma_a
        key = (gamma_a, gamma_i)
        if key not in self._factor:
            assert self.B is not None, "the Cholesky path needs B (spectral=False)"
            M = gamma_i * self.B
            M[np.diag_indices_from(M)] += gamma_a * self.mask
            self._factor = {key: _spd_solve(M, self.A.T)}
        return self._factor[key]

    def _solved_ratio(self, rho: float) -> np.ndarray:
        r""":math:`(I + \rho B)^{-1}\Phi_L^T` (r x l), one per ratio (cached; ratios
        equal to 12 digits share it)."""
        key = float(f"{rho:.12g}")
        if key not in self._factor:
            assert self.B is not None, "the ratio path needs B"
            M = rho * self.B
            M[np.diag_indices_from(M)] += self.mask
            try:
                self._factor[key] = _spd_solve(M, self.A.T)
            except np.linalg.LinAlgError:  # B numerically indefinite: its
                # spectrum clipped at 0, as the spectral path does (with a mask:
                # the pencil (B, E + B), V^T (E + rho B) V = diag(1 - beta + rho beta))
                if "eig" not in self._factor:
                    if (self.mask == 1).all():
                        mu, U = np.linalg.eigh(self.B)
                        p, mu = np.ones_like(mu), np.maximum(mu, 0.0)
                    else:
                        mu, U = sla.eigh(self.B, self.B + np.diag(self.mask))
                        mu = np.clip(mu, 0.0, 1.0)
                        p = 1.0 - mu
                    self._factor["eig"] = (p, mu, U)
                p, mu, U = self._factor["eig"]
                self._factor[key] = U @ ((U.T @ self.A.T) / (p + rho * mu)[:, None])
        return self._factor[key]

    def _cross(self, rows: np.ndarray, gamma_a: float, gamma_i: float) -> np.ndarray:
        r""":math:`\Phi_R (\gamma_A I + \gamma_I B)^{-1}\Phi_L^T` for the rows R
        (``self.A``: labeled, ``self.AU``: unlabeled), in either basis.

        Without the spectral basis the product depends on the pair only through
        the ratio :math:`\rho = \gamma_I/\gamma_A` and the factor
        :math:`1/\gamma_A`: :math:`\Phi_R(I + \rho B)^{-1}\Phi_L^T / \gamma_A`.
        For the engine's own rows it is kept per ratio (a grid of 5 x 4 pairs has
        8 ratios), so pairs that share a ratio share one product.
        """
        if self.mu is None:
            if gamma_i == 0 and not (self.mask == 0).any():
                return self._unit_cross(rows, 0.0) / gamma_a
            if self.by_ratio:
                return self._unit_cross(rows, gamma_i / gamma_a) / gamma_a
            return rows @ self._solved(gamma_a, gamma_i)
        d = 1.0 / (gamma_a * self.p + gamma_i * self.mu)
        return (rows * d) @ self.A.T

    def _cross_map(self, gamma_a: float, gamma_i: float) -> np.ndarray:
        r"""The (r, l) matrix M with ``_cross(rows) = rows @ M`` (in the engine's
        basis): :math:`(\gamma_A I + \gamma_I B)^{-1}\Phi_L^T`."""
        if self.mu is None:
            if gamma_i == 0 and not (self.mask == 0).any():
                return self.A.T / gamma_a
            return self._solved(gamma_a, gamma_i)
        d = 1.0 / (gamma_a * self.p + gamma_i * self.mu)
        return d[:, None] * self.A.T

    def _unit_cross(self, rows: np.ndarray, rho: float) -> np.ndarray:
        r""":math:`\Phi_R (I + \rho B)^{-1}\Phi_L^T` (:math:`\rho = 0`:
        :math:`\Phi_R\Phi_L^T`), kept per ratio for ``self.A`` and ``self.AU``."""
        which = "A" if rows is self.A else "U" if rows is self.AU else None
        key = (which, float(f"{rho:.12g}"))
        if which is not None and key in self._unit:
            return self._unit[key]
        out = rows @ (self.A.T if rho == 0 else self._solved_ratio(rho))
        if which is not None:
            self._unit[key] = out
        return out

    def gram(self, gamma_a: float, gamma_i: float) -> np.ndarray:
        r""":math:`G = \Phi_L (\gamma_A I + \gamma_I B)^{-1}\Phi_L^T` (l x l)."""
        return self._cross(self.A, gamma_a, gamma_i)

    def gram_u(self, gamma_a: float, gamma_i: float) -> np.ndarray:
        r""":math:`\Phi_U (\gamma_A I + \gamma_I B)^{-1}\Phi_L^T` (u x l)."""
        assert self.AU is not None, "no unlabeled rows (unlabeled_idx=None)"
        return self._cross(self.AU, gamma_a, gamma_i)

    # ----------------------------------------------------------- hat matrices
    def _hat(self, G: np.ndarray, c: np.ndarray) -> np.ndarray:
        """Hat matrix H (m x m) of weighted ridge (+ intercept) on the Gram G."""
        m = G.shape[0]
        s = np.sqrt(c)
        Gt = s[:, None] * G * s[None, :]
        theta, Q = np.linalg.eigh(0.5 * (Gt + Gt.T))
        theta = np.maximum(theta, 0.0)
        HR = ((Q * (theta / (1.0 + theta))) @ Q.T) * (s[None, :] / s[:, None])
        if not self.fit_intercept:
            return HR
        one = np.ones(m)
        v = one - HR @ one
        r = c - HR.T @ c  # (I - H_R)^T C 1
        den = float(c @ v)
        if den <= 1e-14 * float(c.sum()):
            return HR
        return HR + np.outer(v, r) / den

    def rls(self, gamma_a: float, gamma_i: float) -> tuple[np.ndarray, np.ndarray]:
        """Training outputs and exact LOO outputs of LapRLS, each (l, C)."""
        H = self._hat(self.gram(gamma_a, gamma_i), self.c)
        F = H @ self.Y
        h = np.minimum(np.diag(H), 1.0 - 1e-10)
        return F, self.Y - (self.Y - F) / (1.0 - h)[:, None]

    def fold_outputs(
        self, gamma_a: float, gamma_i: float, loss: str, max_iter: int = 50
    ) -> tuple[np.ndarray, np.ndarray, Sequence[np.ndarray]]:
        r"""LOO outputs with the unlabeled outputs of every held-out fit.

        Returns
        -------
        O : ndarray of shape (l, C)
            Held-out output of every labeled point (as :meth:`rls` /
            :meth:`l2svm`).
        FU : ndarray of shape (u, C)
            Outputs of the fit on all labels at the unlabeled sample.
        D : sequence of C ndarrays of shape (u, l)
            ``FU[:, c][:, None] + D[c]`` are the unlabeled outputs of the fits
            without each labeled point.  LapRLS (``loss='squared'``): exact,
            :math:`f_U^{(-i)} = f_U - T_{U,i}(y_i - o_i)` with :math:`T_U` the
            map from the labeled targets to the unlabeled outputs (the held-out
            fit is the fit with :math:`y_i` replaced by :math:`o_i`), as a
            :class:`RankOneDeltas` (the factors :math:`T_U` and :math:`Y - O`;
            its blocks on indexing).  LapSVM (a list):
            zero outside the error set, the same rank-one step on its error set,
            and the re-solved fit where :meth:`l2svm` re-solves.
        """
        if self.AU is None:
            raise ValueError("fold_outputs needs the unlabeled_idx of the engine.")
        G = self.gram(gamma_a, gamma_i)
        GU = self.gram_u(gamma_a, gamma_i)
        Y = self.Y
        l = Y.shape[0]
        every = np.ones(l, dtype=bool)
        H, HU = self._maps(G, GU, every)
        F = H @ Y
        h = np.minimum(np.diag(H), 1.0 - 1e-10)
        O = Y - (Y - F) / (1.0 - h)[:, None]
        FU = HU @ Y
        if loss == "squared":
            # D[c] = -HU (Y[:, c] - O[:, c]), kept as the factors
            return O, FU, RankOneDeltas(HU, Y - O)
        D = []
        for j in range(Y.shape[1]):
            O[:, j], FU[:, j], Dj, E = self._l2svm_fold_column(
                G, GU, Y[:, j], F[:, j], max_iter
            )
            self._error_sets[(gamma_a, gamma_i, j)] = E
            D.append(Dj)
        return O, FU, D

    def outputs(
        self,
        rows: np.ndarray,
        gamma_a: float,
        gamma_i: float,
        loss: str,
        max_iter: int = 50,
    ) -> np.ndarray:
        r"""Outputs of the fit on every label at feature rows ``rows`` (m, r).

        The model of :meth:`rls` / :meth:`l2svm` (:math:`f = \Phi w + b`):
        LapRLS in closed form, LapSVM on the error set its fixed point settles
        on (the active-set iteration of :meth:`l2svm`).  Rows are given in the
        features' own basis (``Phi[idx]``, with the column of ones for an
        engine built on ``[Phi, 1]``).

        Returns
        -------
        F : ndarray of shape (m, C)
        """
        G = self.gram(gamma_a, gamma_i)
        l, C = self.Y.shape
        # every column's coefficients on the labeled points (zero off its error
        # set), mapped to feature space, then one product with the rows:
        # rows @ (M Z) is r C flops per row where rows @ M @ Z is r l
        F = None
        Z = np.zeros((l, C))
        bias = np.zeros(C)
        every = np.ones(l, dtype=bool)
        for j in range(C):
            y = self.Y[:, j]
            E = (
                every
                if loss == "squared"
                else self._error_sets.get((gamma_a, gamma_i, j))
            )
            if E is None:
                if F is None:
                    F, _ = self.rls(gamma_a, gamma_i)
                E, _ = self._settle(G, y, F[:, j], max_iter)
                self._error_sets[(gamma_a, gamma_i, j)] = E
            if E.any():
                iE, v, bias[j] = self._solve_on(G, y, E)
                Z[iE, j] = v
        W = self._cross_map(gamma_a, gamma_i) @ Z
        if self._basis is not None:
            W = self._basis @ W
        return np.asarray(rows, dtype=np.float64) @ W + bias

    def _l2svm_fold_column(self, G, GU, y, f0, max_iter):
        E, f, fit = self._settle_set(G, y, y * f0 < 1.0, max_iter)
        f = f0 if f is None else f
        fU = np.zeros(GU.shape[0]) if fit is None else GU[:, fit[0]] @ fit[1] + fit[2]
        o = f.copy()
        D = np.zeros((GU.shape[0], y.size))
        E_full = E.copy()
        if not E.any():
            return o, fU, D, E_full
        iE = np.flatnonzero(E)
        Hf, HU = self._maps(G, GU, E)
        h = np.minimum(np.diag(Hf[iE]), 1.0 - 1e-10)
        o[iE] = f[iE] - h / (1.0 - h) * (y[iE] - f[iE])
        D[:, iE] = -HU * (y[iE] - o[iE])[None, :]
        if y.size > self.exact_max:
            return o, fU, D, E_full
        # the re-solved held-out fits, mapped to the unlabeled rows by one
        # product (not one copy of GU's columns each)
        redone, fi, Z, b = self._resolve_held_out(G, y, f, o, Hf, E, max_iter)
        if redone.size:
            o[redone] = fi
            D[:, redone] = GU @ Z.T + b - fU[:, None]
        return o, fU, D, E_full

    def _resolve_held_out(
        self,
        G: np.ndarray,
        y: np.ndarray,
        f: np.ndarray,
        o: np.ndarray,
        Hf: np.ndarray,
        E: np.ndarray,
        max_iter: int,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        r"""The held-out fits of the points of E whose one-step value is not
        exact, solved: ``(points, outputs there, coefficients (p, l), biases)``.

        The one-step value :math:`o_i` is the LOO solution when the error set of
        :math:`f - H_{:,k}(y_i - o_i)` (the ridge fit on :math:`E \setminus
        \{i\}`) is :math:`E \setminus \{i\}`; the other points run the
        error-set iteration without point i from that set, all of them at once
        (:meth:`_settle_many`).
        """
        iE = np.flatnonzero(E)
        cols = np.arange(iE.size)
        F_loo = f[:, None] - Hf * (y[iE] - o[iE])[None, :]
        E_loo = y[:, None] * F_loo < 1.0
        E_loo[iE, cols] = False
        E_wo = np.repeat(E[:, None], iE.size, axis=1)
        E_wo[iE, cols] = False
        moved = np.flatnonzero((E_loo != E_wo).any(axis=0))
        points = iE[moved]
        keep = np.ones((points.size, y.size), dtype=bool)
        keep[np.arange(points.size), points] = False
        F, Z, b = self._settle_many(G, y, E_loo[:, moved].T, keep, max_iter)
        return points, F[np.arange(points.size), points], Z, b

    def _settle_many(
        self,
        G: np.ndarray,
        y: np.ndarray,
        E: np.ndarray,
        keep: np.ndarray,
        max_iter: int,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        r""":meth:`_settle_set` of p problems at once, each from its error set
        (a row of ``E``, (p, l)) restricted to its row of ``keep``: the
        outputs on the labeled points (p, l), the coefficients (p, l; zero off
        the final set: outputs at rows R are ``G_R z + b``) and biases (p,) of
        each one's last ridge fit (zeros where none was fitted).

        Each ridge fit is :meth:`_solve_on`'s, on E's points gathered and
        padded to the largest set of the round: a padded slot has weight 0 and
        an identity row, so its coefficient vanishes and E's block is the
        system of :meth:`_solve_on`; one batched solve serves every problem.
        """
        p, l = E.shape
        F = np.zeros((p, l))
        Z = np.zeros((p, l))
        b = np.zeros(p)
        E = np.logical_and(E, keep)
        active = np.asarray(E.any(axis=1))
        for _ in range(max_iter):
            act = np.flatnonzero(active)
            if not act.size:
                break
            Ea = E[act]
            sizes = Ea.sum(axis=1)
            s = int(sizes.max())
            # each row's points of E first (in order), then padding
            idx = np.argsort(~Ea, axis=1, kind="stable")[:, :s]
            valid = np.arange(s)[None, :] < sizes[:, None]
            idx = np.where(valid, idx, 0)
            cs = self.c[idx] * valid
            ys = y[idx]
            Gs = G[idx[:, :, None], idx[:, None, :]] * valid[:, None, :]
            M = cs[:, :, None] * Gs + np.eye(s)
            sol = np.linalg.solve(M, np.stack([cs * ys, cs], axis=2))
            a, e = sol[..., 0], sol[..., 1]
            bias = np.zeros(act.size)
            if self.fit_intercept:
                den = np.sum(cs * (1.0 - np.einsum("pij,pj->pi", Gs, e)), axis=1)
                num = np.sum(cs * (ys - np.einsum("pij,pj->pi", Gs, a)), axis=1)
                ok = den > 1e-14 * cs.sum(axis=1)
                bias[ok] = num[ok] / den[ok]
            v = (a - bias[:, None] * e) * valid
            fa = np.einsum("lps,ps->pl", G[:, idx], v) + bias[:, None]
            Zp = np.zeros((act.size, l))
            rows = np.broadcast_to(np.arange(act.size)[:, None], idx.shape)
            Zp[rows[valid], idx[valid]] = v[valid]
            F[act], Z[act], b[act] = fa, Zp, bias
            E_new = (y[None, :] * fa < 1.0) & keep[act]
            settled = (E_new == Ea).all(axis=1) | ~E_new.any(axis=1)
            E[act] = E_new
            active[act[settled]] = False
        return F, Z, b

    def _maps(
        self, G: np.ndarray, GU: np.ndarray, E: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Maps from ``y[E]`` to the labeled (l, |E|) and unlabeled (u, |E|)
        outputs of the weighted ridge fit (+ intercept) on the points E (every
        point, as the squared loss's fits: the blocks themselves, no copies)."""
        iE = np.flatnonzero(E)
        cE = self.c[iE]
        every = iE.size == E.size
        G_E, GU_E = (G, GU) if every else (G[:, iE], GU[:, iE])
        M = cE[:, None] * (G_E if every else G_E[iE]) + np.eye(iE.size)
        T = np.linalg.solve(M, np.diag(cE))  # (C_E G_EE + I)^{-1} C_E
        P, PU = G_E @ T, GU_E @ T
        if self.fit_intercept:
            HR_E = P if every else P[iE]
            one = np.ones(iE.size)
            v = one - HR_E @ one
            r = cE - HR_E.T @ cE
            den = float(cE @ v)
            if den > 1e-14 * float(cE.sum()):
                P = P + np.outer(1.0 - P @ one, r) / den
                PU = PU + np.outer(1.0 - PU @ one, r) / den
        return P, PU

    def l2svm(
        self, gamma_a: float, gamma_i: float, max_iter: int = 50
    ) -> tuple[np.ndarray, np.ndarray]:
        """Training outputs and approximate LOO outputs of LapSVM, each (l, C)."""
        G = self.gram(gamma_a, gamma_i)
        F, _ = self.rls(gamma_a, gamma_i)
        O = F.copy()
        for j in range(self.Y.shape[1]):
            F[:, j], O[:, j] = self._l2svm_column(G, self.Y[:, j], F[:, j], max_iter)
        return F, O

    def _settle(
        self, G: np.ndarray, y: np.ndarray, f0: np.ndarray, max_iter: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """The squared-hinge fit's fixed point from the outputs ``f0``: the error
        set E (the points with y f < 1) that reproduces itself, and the outputs
        of the ridge fit on E (``f0`` when E is empty at the start)."""
        E, f, _ = self._settle_set(G, y, y * f0 < 1.0, max_iter)
        return E, (f0 if f is None else f)

    def _settle_set(
        self,
        G: np.ndarray,
        y: np.ndarray,
        E: np.ndarray,
        max_iter: int,
        keep: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray | None, tuple | None]:
        """The active-set iteration from the error set ``E`` (restricted to
        ``keep``): the final set, the outputs of the last ridge fit (None when
        none was fitted) and that fit's :meth:`_solve_on` ``(iE, v, b)`` (its
        outputs at rows R are ``G_R[:, iE] v + b``: no second solve)."""
        f = None
        fit = None
        for _ in range(max_iter):
            if not E.any():
                break
            fit = self._solve_on(G, y, E)
            f = G[:, fit[0]] @ fit[1] + fit[2]
            E_new = y * f < 1.0
            if keep is not None:
                E_new &= keep
            if np.array_equal(E_new, E):
                break
            E = E_new
        return E, f, fit

    def _l2svm_column(
        self, G: np.ndarray, y: np.ndarray, f0: np.ndarray, max_iter: int
    ) -> tuple[np.ndarray, np.ndarray]:
        E, f = self._settle(G, y, f0, max_iter)
        o = f.copy()
        if not E.any():
            return f, o
        iE = np.flatnonzero(E)
        Hf = self._maps(G, G[:0], E)[0]  # the hat map of E's fit, labeled rows
        h = np.minimum(np.diag(Hf[iE]), 1.0 - 1e-10)
        o[iE] = f[iE] - h / (1.0 - h) * (y[iE] - f[iE])
        if y.size > self.exact_max:
            return f, o
        redone, fi, _, _ = self._resolve_held_out(G, y, f, o, Hf, E, max_iter)
        o[redone] = fi
        return f, o

    def _solve_on(
        self, G: np.ndarray, y: np.ndarray, E: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, float]:
        r"""The weighted ridge fit (+ intercept) on the labeled points E: the
        points, their coefficients and the bias (outputs at rows R:
        ``G_R[:, iE] v + b``).

        The fit of :meth:`_maps` applied to ``y[E]`` without forming the maps:
        with :math:`M = C_E G_{EE} + I`, :math:`a = M^{-1} C_E y_E` and
        :math:`e = M^{-1} C_E 1` (one solve, two right-hand sides), the
        intercept is :math:`b = c_E^T (y_E - G_{EE} a) / c_E^T (1 - G_{EE} e)`
        and :math:`v = a - b e` (:math:`b = 0` without intercept or when the
        denominator vanishes, as there).
        """
        iE = np.flatnonzero(E)
        cE = self.c[iE]
        GEE = G[np.ix_(iE, iE)]
        M = cE[:, None] * GEE + np.eye(iE.size)
        rhs = np.stack([cE * y[iE], cE], axis=1)
        a, e = np.linalg.solve(M, rhs).T
        b = 0.0
        if self.fit_intercept:
            den = float(cE @ (1.0 - GEE @ e))
            if den > 1e-14 * float(cE.sum()):
                b = float(cE @ (y[iE] - GEE @ a)) / den
        return iE, a - b * e, b


def loo_losses(
    engine: SpectralLOO,
    pairs: Sequence[tuple[float, float]],
    loss: str,
    *,
    n_exact: int = 4,
    always: Sequence[int] = (),
) -> np.ndarray:
    """Per-point LOO losses, shape (len(pairs), l), for the raw weight pairs.

    ``loss='squared'``: LapRLS, :math:`\\frac1C\\sum_c (y_{ic} - o_{ic})^2`;
    ``'squared_hinge'``: LapSVM, :math:`\\frac1C\\sum_c \\max(0, 1 - y_{ic}o_{ic})^2`.
    For the squared hinge every pair is first screened with the LapRLS LOO
    outputs (scored by the squared hinge); the ``n_exact`` best pairs and those
    in ``always`` are then scored with the LapSVM LOO outputs (exact up to
    ``engine.exact_max`` labels, the generalized-Hessian step above).
    """
    out = np.empty((len(pairs), engine.Y.shape[0]))
    for p, (ga, gi) in enumerate(pairs):
        _, O = engine.rls(ga, gi)
        out[p] = pointwise_loss(O, engine.Y, loss)
    if loss == "squared":
        return out
    lead = set(np.argsort(out.mean(axis=1))[:n_exact].tolist()) | set(always)
    for p in sorted(lead):
        _, O = engine.l2svm(*pairs[p])
        out[p] = pointwise_loss(O, engine.Y, loss)
    return out


def pointwise_loss(O: np.ndarray, Y: np.ndarray, loss: str) -> np.ndarray:
    r"""Per-point held-out loss of outputs O (m, C) against ±1 targets Y (m, C).

    Two classes (C = 1): ``'squared'`` :math:`(y - o)^2`, ``'squared_hinge'``
    :math:`\max(0, 1 - y o)^2`.  More classes: both use the multi-class margin
    :math:`m = o_{y} - \max_{c \ne y} o_c` (the quantity ``predict`` compares),
    :math:`\max(0, 1 - m)^2` -- the one-vs-rest column losses would be dominated
    by the C - 1 "rest" columns and do not rank models by their predictions.
    """
    if O.shape[1] == 1:
        if loss == "squared":
            return (Y[:, 0] - O[:, 0]) ** 2
        return np.maximum(0.0, 1.0 - Y[:, 0] * O[:, 0]) ** 2
    pos = Y > 0
    own = O[pos] if pos.sum() == O.shape[0] else np.where(pos, O, -np.inf).max(axis=1)
    other = np.where(pos, -np.inf, O).max(axis=1)
    return np.maximum(0.0, 1.0 - (own - other)) ** 2


def _clipped_targets(t: Any, m: int) -> np.ndarray:
    return np.broadcast_to(
        np.clip(np.asarray(t, dtype=np.float64), -1.0 + 1e-9, 1.0 - 1e-9), (m,)
    )


def mass_shifts(
    V: np.ndarray, t: Any, *, max_iter: int = 100, start: Any = None
) -> np.ndarray:
    r"""Column-wise roots :math:`\delta_k` of
    :math:`g_k(\delta) = \mathrm{mean}(V_{:k} + \delta) - t\,\mathrm{mean}|V_{:k} + \delta|`.

    The class-mass balance of :func:`semisvm.models._adaptive.balance_offsets`
    for many output vectors at once (the held-out fits of a leave-one-out).
    :math:`g_k` is piecewise linear with slopes in :math:`[1 - |t|, 1 + |t|]`,
    convex for :math:`t \le 0` and concave for :math:`t \ge 0`, so Newton's
    method converges from any start (after at most one overshoot it is
    monotone) and stops exactly once it reaches the root's linear piece;
    columns not settled after ``max_iter`` steps are solved by bisection.

    Parameters
    ----------
    V : ndarray of shape (u, m)
    t : float or ndarray of shape (m,)
        :math:`2\pi_c - 1`, clipped to :math:`(-1, 1)`; one per column when
        columns of several classes are solved together.
    start : float or ndarray, optional
        Starting shifts (default: minus the column medians); the shift of the
        full fit is a good start for its held-out fits, its first-order
        correction (:func:`balanced_loo`) a better one.

    Returns
    -------
    delta : ndarray of shape (m,)
    """
    V = np.asarray(V, dtype=np.float64)
    u, n_col = V.shape
    t = _clipped_targets(t, n_col)
    scale = np.maximum(V.max(axis=0), -V.min(axis=0)) + 1.0
    d = (
        -np.median(V, axis=0)
        if start is None
        else np.broadcast_to(np.asarray(start, dtype=np.float64), (n_col,)).copy()
    )
    # per step, sum|V + d| = 2 sum max(V + d, 0) - sum(V + d) =
    # 2 (sum max(V, -d) + u d) - (sum V + u d), and the slope's mean sign is
    # (2 |P| - u) / u with P the entries where V + d > 0 (a zero entry counts
    # as negative: a subgradient at a kink; the root is the same): two cheap
    # passes instead of three temporaries (4x faster at 1,000 x 50).  The
    # column sums are products with a vector of ones and the counts byte sums,
    # into buffers allocated once (the passes are the whole cost: balanced_loo
    # calls this once per candidate of a search, on 250 x 500 outputs)
    ones = np.ones(u)
    total = ones @ V
    buf = np.empty_like(V)
    flags = np.empty(V.shape, dtype=bool)
    count_dtype = np.uint16 if u < np.iinfo(np.uint16).max else np.intp
    done = np.zeros(n_col, dtype=bool)
    # the columns still moving (settled columns leave the passes: most settle
    # in one or two steps)
    act = np.arange(n_col)
    Va = V
    for _ in range(max_iter):
        da, ta = d[act], total[act]
        B = np.maximum(Va, -da, out=buf[:, : act.size])
        abs_sum = 2.0 * (ones @ B + u * da) - (ta + u * da)
        tt = t[act]
        g = (ta / u + da) - tt * abs_sum / u
        ok = np.abs(g) <= 1e-13 * scale[act]
        done[act] = ok
        if ok.all():
            return d
        if ok.any():  # the slope only where a step is taken
            keep = ~ok
            act, da, g, tt = act[keep], da[keep], g[keep], tt[keep]
            Va = V[:, act]
        P = np.greater(Va, -da, out=flags[:, : act.size])
        count = np.add.reduce(P.view(np.uint8), axis=0, dtype=count_dtype)
        slope = 1.0 - tt * (2.0 * count - u) / u
        d[act] = da - g / slope
    for k in np.flatnonzero(~done):  # pragma: no cover - safeguard
        lo, hi = -scale[k] - 1.0, scale[k] + 1.0
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            w = V[:, k] + mid
            if w.mean() - t[k] * np.abs(w).mean() > 0:
                hi = mid
            else:
                lo = mid
        d[k] = 0.5 * (lo + hi)
    return d


def sorted_mass_shifts(V: np.ndarray, t: Any) -> np.ndarray:
    r"""The roots of :func:`mass_shifts` by one sort per column (few columns).

    At the breakpoint :math:`\delta = -v_{(j)}` of the sorted column
    :math:`v_{(1)} \le \dots \le v_{(u)}`,
    :math:`\sum_k |v_k + \delta| = (2j - u) v_{(j)} - 2 s_j + s_u` with the
    prefix sums :math:`s_j`, so :math:`g` is known at every breakpoint in
    :math:`O(u)`; it is nondecreasing in :math:`\delta`, so the root's linear
    piece is where it changes sign, and on that piece (:math:`p` entries
    above :math:`-\delta`, summing to :math:`S_p`) :math:`g` is linear:
    :math:`\delta = (t (2 S_p - s_u) - s_u) / (u - t (2p - u))`.  The same root
    as Newton's iteration (which ends on the same piece, by the same linear
    formula) up to rounding, for the cost of a sort: 4x faster than Newton
    from the medians on 250 x 10 outputs (the full fit's shifts of every
    candidate, :func:`balanced_loo`).

    Parameters
    ----------
    V : ndarray of shape (u, m)
    t : float or ndarray of shape (m,)

    Returns
    -------
    delta : ndarray of shape (m,)
    """
    V = np.asarray(V, dtype=np.float64)
    u, n_col = V.shape
    t = _clipped_targets(t, n_col)
    Sv = np.sort(V, axis=0)
    cs = np.cumsum(Sv, axis=0)
    tot = cs[-1]
    j = np.arange(1, u + 1, dtype=np.float64)[:, None]
    # g at delta = -v_(j), times u
    abs_sum = (2.0 * j - u) * Sv - 2.0 * cs + tot
    g = tot - u * Sv - t * abs_sum
    # g is nonincreasing in j: the first k breakpoints have g >= 0, and the root
    # lies on the piece where the entries k + 1..u are above -delta
    k = np.count_nonzero(g >= 0.0, axis=0)
    n_pos = u - k
    below = np.where(k > 0, cs[np.maximum(k - 1, 0), np.arange(n_col)], 0.0)
    s_pos = tot - below
    return (t * (2.0 * s_pos - tot) - tot) / (u - t * (2.0 * n_pos - u))


class RankOneDeltas(Sequence):
    r"""The moves of the held-out fits' unlabeled outputs of LapRLS, kept in
    rank-one form: ``D[c] = -HU * S[:, c]`` (u x l) for the map ``HU`` from the
    labeled targets to the unlabeled outputs and the residuals
    :math:`S = Y - O` (:meth:`SpectralLOO.fold_outputs`).  Indexing builds a
    class's block (the same numbers as the list it replaces);
    :func:`balanced_loo` reads every class's at once from ``HU`` and ``S``."""

    def __init__(self, HU: np.ndarray, S: np.ndarray) -> None:
        self.HU, self.S = HU, S

    def __len__(self) -> int:
        return int(self.S.shape[1])

    def __getitem__(self, c: Any) -> Any:
        if isinstance(c, slice):
            return [self[i] for i in range(len(self))[c]]
        if not -len(self) <= c < len(self):
            raise IndexError(c)
        return -self.HU * self.S[:, c][None, :]


def _held_out_columns(
    FU: np.ndarray, D: Sequence, d0: np.ndarray, t: np.ndarray
) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    r"""The held-out fits to balance, their unlabeled outputs and a start.

    Returns the moved fits per class (those whose unlabeled outputs differ from
    the full fit's), ``V`` (u x m: ``FU[:, c] + D[c][:, i]`` class after class)
    and, per column, :math:`\delta_0 - g'/g_0'`: the full fit's shift
    :math:`\delta_0` corrected to first order in ``D`` (the signs of
    :math:`FU + \delta_0` kept), where Newton's iteration of
    :func:`mass_shifts` settles in about half the passes it takes from
    :math:`\delta_0` (the start changes the path, not the root).
    """
    u, C = FU.shape
    sign = np.where(FU + d0[None, :] > 0.0, 1.0, -1.0)
    W = (1.0 - t[None, :] * sign) / u  # the derivative of g in D, per class
    slope = 1.0 - t * sign.mean(axis=0)
    if isinstance(D, RankOneDeltas):  # every column moves; one product
        l = D.S.shape[0]
        ST = np.ascontiguousarray(D.S.T)  # (C, l)
        V = np.empty((u, C * l))
        V3 = V.reshape(u, C, l)  # a view: class-major columns
        np.multiply(D.HU[:, None, :], ST[None, :, :], out=V3)
        np.subtract(FU[:, :, None], V3, out=V3)
        first = -(W.T @ D.HU) * ST
        start = (d0[:, None] - first / slope[:, None]).ravel()
        return [np.arange(l)] * C, V, start
    moved = [np.flatnonzero(D[c].any(axis=0)) for c in range(C)]
    V = np.empty((u, sum(m.size for m in moved)))
    start = np.empty(V.shape[1])
    at = 0
    for c, m in enumerate(moved):
        Dc = D[c] if m.size == D[c].shape[1] else D[c][:, m]
        np.add(FU[:, c][:, None], Dc, out=V[:, at : at + m.size])
        start[at : at + m.size] = d0[c] - (W[:, c] @ Dc) / slope[c]
        at += m.size
    return moved, V, start


def balanced_loo(
    O: np.ndarray, FU: np.ndarray, D: Sequence, targets: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    r"""Held-out outputs after each held-out fit's own class balance.

    The estimators shift every one-vs-rest column by the class-mass offset
    computed on their unlabeled outputs (:mod:`semisvm.models._adaptive`); a
    leave-one-out that skips this step judges another model (a graph-smoothed
    fit without point i shifts all its outputs toward the other class).  Here
    the held-out fit without point i is balanced on its own unlabeled outputs
    ``FU + D[c][:, i]`` to the same targets ``2 pi_c - 1``: the full fit's
    shifts by :func:`sorted_mass_shifts`, every class's held-out fits in one
    Newton run of :func:`mass_shifts` from their first-order starts
    (:func:`_held_out_columns`; ``D`` a :class:`RankOneDeltas`: built in one
    product).  The roots are those of the plain iteration up to rounding
    (tested); a held-out fit whose unlabeled outputs equal the full fit's
    (LapSVM outside the error set) keeps the full fit's shift.

    Returns
    -------
    O_bal : ndarray of shape (l, C)
        Held-out outputs plus their fit's offsets.
    FU_bal : ndarray of shape (u, C)
        The full fit's unlabeled outputs plus its offsets.
    """
    O_bal = np.array(O, dtype=np.float64)
    FU = np.asarray(FU, dtype=np.float64)
    targets = np.asarray(targets, dtype=np.float64)
    l, C = O.shape
    t = np.array(_clipped_targets(targets, C))
    d0 = sorted_mass_shifts(FU, t)
    shift = np.repeat(d0[None, :], l, axis=0)
    moved, V, start = _held_out_columns(FU, D, d0, t)
    if V.shape[1]:
        cls = np.concatenate([np.full(m.size, c) for c, m in enumerate(moved)])
        delta = mass_shifts(V, t[cls], start=start)
        at = 0
        for c, m in enumerate(moved):
            shift[m, c] = delta[at : at + m.size]
            at += m.size
    return O_bal + shift, FU + d0[None, :]


def margins(O: np.ndarray, Y: np.ndarray) -> np.ndarray:
    r"""Signed margins of outputs O (m, C) against ±1 one-vs-rest targets Y.

    Two classes: :math:`y o`; more: :math:`o_y - \max_{c\ne y} o_c`, the quantity
    ``predict`` compares (positive: the point is classified right).
    """
    if O.shape[1] == 1:
        return Y[:, 0] * O[:, 0]
    pos = Y > 0
    own = np.where(pos, O, -np.inf).max(axis=1)
    other = np.where(pos, -np.inf, O).max(axis=1)
    return own - other


def scale_free_squared_hinge(
    m: np.ndarray, w: np.ndarray | None = None
) -> tuple[float, np.ndarray]:
    r"""The squared hinge after the best rescaling of the outputs.

    .. math::
        s^* = \arg\min_{s \ge 0} \sum_i w_i \max(0, 1 - s\,m_i)^2 ,

    returned with the per-point losses :math:`\max(0, 1 - s^* m_i)^2`.  The value
    does not change when the outputs are multiplied by any positive factor, so a
    graph-smoothed fit whose outputs at the labels are small but right is not
    charged for their size (the plain squared hinge is).  It is 0 when every
    margin is positive (:math:`s^* \to \infty`; the losses are then 0).

    The objective is convex and piecewise quadratic in :math:`s`; on the piece
    where the active set :math:`\{i: s m_i < 1\}` is fixed its minimizer is
    :math:`\sum_A w_i m_i / \sum_A w_i m_i^2`, and the pieces are delimited by the
    breakpoints :math:`1/m_i` of the positive margins, so the exact minimizer is
    found by one sort.
    """
    m = np.asarray(m, dtype=np.float64)
    w = np.ones_like(m) if w is None else np.asarray(w, dtype=np.float64)
    w = w / w.sum()
    pos = m > 0
    if pos.all():
        return 0.0, np.zeros_like(m)
    # candidate s: 0, every breakpoint, and each piece's stationary point
    order = np.argsort(-m[pos], kind="stable")
    mp, wp = m[pos][order], w[pos][order]
    mn, wn = m[~pos], w[~pos]
    # active set when the k largest positive margins have left (k = 0..len(mp))
    a1 = (wn * mn).sum() + np.concatenate([[0.0], np.cumsum((wp * mp)[::-1])])[::-1]
    a2 = (wn * mn * mn).sum() + np.concatenate(
        [[0.0], np.cumsum((wp * mp * mp)[::-1])]
    )[::-1]
    lo = np.concatenate([[0.0], 1.0 / mp])  # piece k: s in [lo_k, hi_k)
    hi = np.concatenate([1.0 / mp, [np.inf]])
    with np.errstate(divide="ignore", invalid="ignore"):
        s_stat = np.where(a2 > 0, a1 / a2, 0.0)
    cand = np.clip(s_stat, lo, np.where(np.isfinite(hi), hi, lo + 1.0))
    cand = np.concatenate([cand, lo])

    # every candidate's objective in one pass (the selection holds out at most
    # 300 labels: 602 x 300 entries)
    vals = (w[None, :] * np.maximum(0.0, 1.0 - cand[:, None] * m[None, :]) ** 2).sum(
        axis=1
    )
    s_best = float(cand[int(np.argmin(vals))])
    return float(vals.min()), np.maximum(0.0, 1.0 - s_best * m) ** 2
