r"""Preconditioners of the primal LapSVM / LapRLS PCG (Melacci & Belkin 2011, Alg. 1).

Notation.  For a fixed error set :math:`E`, the coefficient part of the objective's
Hessian is :math:`H = K (G K + \gamma_A I)` with :math:`G = I_E + \gamma_I L`; the
operator :math:`A = G K + \gamma_A I` is self-adjoint in the K inner product
:math:`\langle u, v\rangle_K = u^T K v`.  Let :math:`g` be the paper's preconditioned
gradient (coefficient part), so that the true gradient is :math:`\nabla_\alpha = K g`.

A preconditioner here is a linear map :math:`T` with :math:`K T` symmetric positive
definite; PCG then uses :math:`M^{-1} = \mathrm{diag}(1, T K^{-1})`, which is
symmetric positive definite, and the preconditioned gradient is
:math:`M^{-1}\nabla = [g_b;\ T g]`.  The solver needs :math:`z = T g` and
:math:`K z` (for the direction's outputs and for the Polak-Ribiere products); both
must come from :math:`g` and :math:`K g` without a further product with K, so that
an iteration keeps its single product with K.

* :class:`PaperPreconditioner`: :math:`T = I`, i.e. the paper's
  :math:`P = \mathrm{diag}(1, K)`.  The preconditioned operator is :math:`A`, whose
  spectrum spreads from :math:`\gamma_A` to about :math:`\lambda_{\max}(K)
  \lambda_{\max}(G)` and grows with n (so does the iteration count).
* :class:`NystroemPreconditioner`: a Rayleigh-Ritz approximation of the top of
  :math:`A`'s spectrum on m landmark coefficient vectors, deflated as in
  randomized Nyström preconditioning (Frangella, Tropp & Udell, 2023) but in the
  K inner product, so that no product with K beyond the m landmark columns is
  needed (the map and why :math:`K T` is positive definite: its docstring).

The preconditioner changes the search directions, not the objective: PCG with
either converges to the same optimum (the exact line search is unchanged).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla
from sklearn.utils import check_random_state

from ..kernels._operators import single_blas_thread
from ._landmarks import LandmarkSpace

__all__ = [
    "PRECONDITIONERS",
    "PaperPreconditioner",
    "NystroemPreconditioner",
    "make_preconditioner",
]

PRECONDITIONERS = ("paper", "nystroem")


class PaperPreconditioner:
    """The paper's :math:`P = \\mathrm{diag}(1, K)` (Algorithm 1): :math:`T = I`."""

    name = "paper"
    setup_products = 0

    def apply(self, G: np.ndarray, KG: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return ``(T G, K T G)`` for a block G given ``K G``."""
        return G, KG


def _kernel_columns(Kop: Any, idx: np.ndarray) -> tuple[np.ndarray, int]:
    """Columns ``K[:, idx]`` as float64 (read directly when the operator stores K).

    Returns the columns and the number of K-vector products spent on them.
    """
    get = getattr(Kop, "columns", None)
    if callable(get):
        return np.asarray(get(idx), dtype=np.float64), 0
    Kmat = getattr(Kop, "K", None)
    if isinstance(Kmat, np.ndarray) and Kmat.shape == Kop.shape:
        return np.asarray(Kmat[:, idx], dtype=np.float64), 0
    n = Kop.shape[0]
    E = np.zeros((n, idx.size))
    E[idx, np.arange(idx.size)] = 1.0
    return np.asarray(Kop @ E, dtype=np.float64), idx.size


def _draw_landmarks(
    n: int, labeled: np.ndarray, rank: int, random_state: Any
) -> np.ndarray:
    """m = rank landmark rows: every labeled point when they fit in half of m
    (else half of m drawn among them), the rest uniform without replacement."""
    m = int(min(max(rank, 1), n))
    rng = check_random_state(random_state)
    first = (
        labeled
        if labeled.size <= m // 2
        else rng.choice(labeled, m // 2, replace=False)
    )
    rest = np.setdiff1d(np.arange(n), first)
    extra = rng.choice(rest, m - first.size, replace=False) if m > first.size else []
    return np.sort(np.concatenate([first, np.asarray(extra, dtype=np.intp)]))


def _landmark_rayleigh(
    Cm: np.ndarray,
    idx: np.ndarray,
    labeled: np.ndarray,
    Lop: Any,
    gamma_i: float,
    dtype: Any,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""``(B, C B, A_sub)`` of the landmark columns ``Cm = K[:, idx]``: B spans
    the landmark subspace K-orthonormally (:math:`B^T K_{ZZ} B = I`, numerically
    null directions dropped) and :math:`A_{sub} = (CB)^T (I_{\mathcal L} +
    \gamma_I L) (CB)`, the Rayleigh quotient of A on it."""
    W = Cm[idx]
    W = 0.5 * (W + W.T)
    lam, Q = sla.eigh(W)
    eps = np.finfo(np.float32 if dtype == np.float32 else np.float64).eps
    keep = lam > max(lam[-1], 0.0) * 1e3 * eps
    B = Q[:, keep] / np.sqrt(lam[keep])  # B^T W B = I
    # G applied to the landmark functions: I_lab C + gamma_i L C
    GC = np.zeros_like(Cm)
    GC[labeled] = Cm[labeled]
    if Lop is not None and gamma_i != 0:
        GC += gamma_i * np.asarray(Lop @ Cm)
    CB = Cm @ B
    return B, CB, B.T @ (Cm.T @ GC) @ B


class NystroemPreconditioner:
    r"""Deflation of the top of the spectrum on a landmark (Nyström) subspace.

    A Rayleigh-Ritz approximation of the top of :math:`A`'s spectrum (module
    docstring) on the span of m landmark coefficient vectors :math:`e_j` (the
    Nyström space: the functions :math:`k(x_j, \cdot)`), deflated in the K inner
    product.  With :math:`V` (n x r) the Ritz vectors of the top
    :math:`r = \lceil \min(m, \mathrm{rank}) / 2\rceil` Ritz values
    :math:`\theta_1 \ge \dots \ge \theta_r` (:math:`V^T K V = I`), and
    :math:`c = 1 / (\theta_{r+1} + \gamma_A)`,

    .. math::
        T g = V \,\mathrm{diag}\big(\tfrac{1}{\theta + \gamma_A}\big) V^T K g
              + c\,(g - V V^T K g),

    which is self-adjoint and positive definite in the K inner product (it acts
    as :math:`(\theta_i + \gamma_A)^{-1}` on span V and as c on its K-orthogonal
    complement), so :math:`K T` is symmetric positive definite.  :math:`V` is
    nonzero only on the m landmark rows, and :math:`K V` is the landmark columns
    times an m x r matrix: applying T and :math:`K T` costs :math:`O(n m C)` for
    C columns.

    Parameters
    ----------
    Kop : operator of shape (n, n)
        The kernel (through the solver's operator interface).
    labeled : ndarray of int
        Indices of the labeled rows (the part of :math:`G` from the loss is taken
        as :math:`I_{\mathcal L}`, an upper bound of every error set).
    Lop : operator or None
        The graph Laplacian (None: no intrinsic term).
    gamma_a, gamma_i : float
    rank : int
        Number of landmarks m (at most n).  All labeled points are landmarks when
        they fit in half of m; the rest are drawn uniformly without replacement.
    random_state : int, RandomState instance or None
    landmarks : LandmarkSpace, optional
        The operator's own landmark space (:mod:`semisvm.solvers._landmarks`),
        used instead of drawing ``rank`` landmarks when it is exact
        (:math:`\hat K E_Z T = \Phi`): the subspace is then spanned by
        :math:`E_Z T` (already K-orthonormal), :math:`KV` is :math:`\Phi R` and
        the Rayleigh quotient :math:`\Phi_{\mathcal L}^T\Phi_{\mathcal L} +
        \gamma_I B` reads the space's graph Gram B: no kernel column, product
        with L or n x m x m product of its own; on the operator whose space it
        is, T and K T ride on the operator's two passes over :math:`\Phi`
        (:meth:`apply_with_product`).

    Attributes
    ----------
    landmarks_ : ndarray of int
    theta_ : ndarray
        Ritz values :math:`\theta` kept (decreasing).
    setup_products : int
        K-vector products spent on the landmark columns (0 when the operator
        exposes its matrix).
    """

    name = "nystroem"

    def __init__(
        self,
        Kop: Any,
        labeled: np.ndarray,
        Lop: Any,
        gamma_a: float,
        gamma_i: float,
        rank: int,
        random_state: Any = None,
        landmarks: LandmarkSpace | None = None,
    ) -> None:
        n = Kop.shape[0]
        labeled = np.asarray(labeled, dtype=np.intp)
        self.setup_products = 0
        # small dense algebra: one BLAS thread (threaded LAPACK on m x m matrices
        # was up to 100x slower on the shared 2-core benchmark machine)
        # on the operator's own exact landmarks K V = Phi R: T and K T then
        # ride on the operator's passes over Phi (apply_with_product)
        self._op: Any = None
        if landmarks is not None and landmarks.exact:
            if getattr(Kop, "Phi", None) is landmarks.Phi and hasattr(Kop, "expand"):
                self._op = Kop
            idx, B, CB = landmarks.Z, landmarks.T, landmarks.Phi
            with single_blas_thread():
                Pl = np.asarray(CB[labeled], dtype=np.float64)
                Asub = Pl.T @ Pl
                if Lop is not None and gamma_i != 0:
                    Asub += gamma_i * landmarks.gram
        else:
            idx = _draw_landmarks(n, labeled, rank, random_state)
            Cm, self.setup_products = _kernel_columns(Kop, idx)
            with single_blas_thread():
                B, CB, Asub = _landmark_rayleigh(
                    Cm, idx, labeled, Lop, gamma_i, Kop.dtype
                )
        # the thin products of apply in the precision of K's own products (a
        # float32 factor's): half the bytes, no accuracy the products had
        precision = getattr(Kop, "product_dtype", Kop.dtype)
        dtype = np.float32 if precision == np.float32 else np.float64
        # the m x m eigenproblem, the setup's largest step: on the BLAS's own
        # threads and by divide and conquer, LAPACK's fastest driver for all
        # eigenpairs (the thin products below stay on one thread)
        theta, R = sla.eigh(0.5 * (Asub + Asub.T), driver="evd")
        with single_blas_thread():
            self._deflate(idx, B, CB, theta, R, gamma_a, rank, dtype)
        self._n = n

    def _deflate(self, idx, B, CB, theta, R, gamma_a, rank, dtype) -> None:
        theta = np.maximum(theta[::-1], 0.0)
        R = R[:, ::-1]
        # deflate the top half of rank Ritz values (a larger landmark space gives
        # better ones, not more of them: the apply's cost stays); the next one
        # estimates the top of the spectrum left on the complement, its scale c
        r = (min(theta.size, rank) + 1) // 2
        cval = theta[min(r, theta.size - 1)] if theta.size else 0.0
        theta, R = theta[:r], R[:, :r]
        self.landmarks_ = idx
        self.theta_ = theta
        self._Y = B @ R  # V = E_idx Y, K V = CB R
        self._diag = 1.0 / (theta + gamma_a)
        self._c = 1.0 / (cval + gamma_a)
        if self._op is not None:  # K V = Phi R, never formed
            self._R = np.asarray(R, dtype=np.float64)
            return
        if CB.dtype != dtype:  # the product in the wider of the two precisions
            CB, R = CB.astype(np.float64, copy=False), R.astype(np.float64, copy=False)
        self._KV = np.asarray(CB @ R.astype(CB.dtype, copy=False), dtype=dtype)

    @property
    def fused(self) -> bool:
        """Whether T rides on the operator's passes (:meth:`apply_with_product`)."""
        return self._op is not None

    def apply_with_product(
        self, G: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        r"""``(K G, T G, K T G)`` for a block G on the operator's own landmarks.

        With :math:`KV = \Phi R`: :math:`V^T K G = R^T \Phi^T G` from the
        product's first pass, and :math:`K V\,\mathrm{coef} = \Phi R\,
        \mathrm{coef}` joins its second pass (``expand``): two passes over
        :math:`\Phi` per iteration instead of four, the same map T.
        """
        W = self._op.project(G)
        coef = self._coefficients(W)
        KG, KVc = self._op.expand(G, W, self._R @ coef)
        return KG, self._t(G, coef), self._c * KG + KVc

    def apply_lean(self, G: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        r"""``(T G, K T G, diag(G^T K G))`` for a block G on the operator's own
        landmarks, with C columns in each pass over :math:`\Phi`.

        With :math:`W = G^T\Phi` (the first pass) and the residual product
        :math:`R_BG`: :math:`KTG = \Phi(cW^T + R\,\mathrm{coef}) + cR_BG`
        (one second pass of C columns, where :meth:`apply_with_product` carries
        2C to return :math:`KG` too) and :math:`g^TKg = \|W_{g}\|^2 +
        g^TR_Bg`.  PCG needs :math:`KG` only through inner products, which
        :math:`K`'s symmetry moves onto :math:`KTG` (:func:`lapsvm_pcg`).
        """
        op = self._op
        W = np.asarray(op.project(G), dtype=np.float64)
        coef = self._coefficients(W)
        RG = op.residual(G)
        KTG = op.expand_one(self._c * W + (self._R @ coef).T)
        KTG += self._c * RG
        gKg = np.einsum("ij,ij->i", W, W) + np.einsum("ij,ij->j", G, RG)
        return self._t(G, coef), KTG, gKg

    def _coefficients(self, W: np.ndarray) -> np.ndarray:
        """``(diag - c) V^T K G`` from ``W = G^T Phi`` (C, m)."""
        P = (np.asarray(W, dtype=np.float64) @ self._R).T
        return (self._diag - self._c)[:, None] * P

    def _t(self, G: np.ndarray, coef: np.ndarray) -> np.ndarray:
        """``T G = c G + V coef`` (V nonzero on the landmark rows only)."""
        Z = self._c * G
        Z[self.landmarks_] += self._Y @ coef
        return Z

    def apply(self, G: np.ndarray, KG: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return ``(T G, K T G)`` for a block G given ``K G`` (no product with K)."""
        if self._op is not None:
            Phi = self._op.Phi
            coef = self._coefficients(self._op.project(G))
            extra = (self._R @ coef).T.astype(Phi.dtype)
            with single_blas_thread():
                KVc = np.asarray((extra @ Phi.T).T, dtype=np.float64)
            return self._t(G, coef), self._c * KG + KVc
        with single_blas_thread():  # thin products: threads only add overhead
            KV = self._KV
            # V^T K G, the thin operand first (one pass over KV)
            P = np.asarray((G.T.astype(KV.dtype, copy=False) @ KV).T, dtype=np.float64)
            coef = (self._diag - self._c)[:, None] * P
            KZ = self._c * KG + KV @ coef.astype(KV.dtype, copy=False)
        return self._t(G, coef), KZ


def make_preconditioner(
    name: str,
    Kop: Any,
    labeled: np.ndarray,
    Lop: Any,
    gamma_a: float,
    gamma_i: float,
    rank: int | None,
    random_state: Any,
    landmarks: LandmarkSpace | None = None,
) -> Any:
    """Build the preconditioner called ``name`` (see :data:`PRECONDITIONERS`)."""
    if name == "paper":
        return PaperPreconditioner()
    if name == "nystroem":
        n = Kop.shape[0]
        m = default_rank(n) if rank is None else rank
        return NystroemPreconditioner(
            Kop, labeled, Lop, gamma_a, gamma_i, m, random_state, landmarks
        )
    raise ValueError(
        f"Unknown preconditioner {name!r}; expected one of {PRECONDITIONERS}."
    )


def default_rank(n: int) -> int:
    """Landmarks used by default: :math:`\\min(n, 1000, \\max(100, \\lceil 5\\sqrt n\\rceil))`."""
    return int(min(n, 1000, max(100, int(np.ceil(5.0 * np.sqrt(n))))))
