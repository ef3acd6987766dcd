r"""Nyström low-rank kernel factor and the operator it gives.

With m landmarks :math:`z_1..z_m`, :math:`C = k(X, Z)` (n x m) and
:math:`W = k(Z, Z)` (m x m), the Nyström approximation is

.. math::
    K \approx \tilde K = C W^{+} C^T = \Phi \Phi^T, \qquad
    \Phi = C\, U_r S_r^{-1/2},

with :math:`W = U S U^T` and the eigenvalues below ``rcond * max(S)`` dropped
(Williams & Seeger 2001; the feature map of scikit-learn's ``Nystroem``).  A
function of the Nyström RKHS is :math:`f(x) = k(x, Z)\beta + b` with
:math:`\|f\|^2 = \beta^T W \beta`; in the features, :math:`\beta = U_r S_r^{-1/2}\eta`,
:math:`f = \Phi\eta + b` and :math:`\|f\|^2 = \eta^T\eta` -- the form the m-space
solver (:mod:`semisvm.solvers._lowrank`) works in.

Landmarks: ``'uniform'`` (rows drawn without replacement; the Falkon default,
Rudi et al. 2017) or ``'kmeans'`` (mini-batch k-means centres on a subsample,
Zhang, Tsang & Kwok 2008: a smaller kernel approximation error than uniform
sampling at the same m, for the price of a few k-means passes).

Memory: C (n x m, in the data's float type) is kept; :math:`\Phi` is formed
only if asked for (the m-space solver works from C and T, which saves the
n m r flops of the product).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla
from scipy.linalg.blas import get_blas_funcs

from .._config import blas_limits_enabled
from .._memory import block_rows
from ._kernels import kernel_matrix, row_norms_sq
from ._operators import single_blas_thread

__all__ = ["NystroemFactor", "LowRankOperator", "LANDMARK_METHODS"]

LANDMARK_METHODS = ("uniform", "kmeans")


def uniform_landmark_rows(n: int, m: int, rng: Any, include: Any = None) -> np.ndarray:
    """Sorted rows of m uniform landmarks drawn with ``rng`` (a RandomState),
    the rows ``include`` always among them (then drawn from the others)."""
    if include is None:
        return np.sort(rng.choice(n, size=m, replace=False))
    keep = np.unique(np.asarray(include, dtype=np.intp))
    rest = np.setdiff1d(np.arange(n), keep)
    extra = rng.choice(rest, size=max(m - keep.size, 0), replace=False)
    return np.sort(np.concatenate([keep, extra]))


def _upper_triangular(T: np.ndarray) -> bool:
    """Whether T is square and upper triangular (the Cholesky components)."""
    return T.shape[0] == T.shape[1] and not np.tril(T, -1).any()


def landmark_components(W: np.ndarray, rcond: float) -> np.ndarray:
    r"""T with :math:`T^TWT = I_r` for the landmark Gram matrix W (r = T's columns).

    Eigenvalues at most ``rcond`` times the largest are dropped (the pseudo-inverse:
    a rank-deficient W gives no NaN): then :math:`T = U_r S_r^{-1/2}`.  When W is
    well conditioned, :math:`T = L^{-T}` for the Cholesky factor :math:`W = LL^T`:
    the same span (:math:`TT^T = W^{-1}` either way, so :math:`\Phi\Phi^T` is the
    same Nyström kernel, :math:`\Phi` a rotation of the eigen-basis one) for one
    factorization and one triangular inverse.  "Well conditioned": LAPACK's
    estimate of the reciprocal 1-norm condition number from the factor
    (``pocon``, Higham 1988) above ``rcond`` (no eigenvalue then; the estimate
    is as a rule within a factor 3 of :math:`1/\kappa_1 \le 1/\kappa_2`), else
    the eigenvalues themselves (a landmark Gram near the cutoff: full USPS's and
    the deformed set's are at :math:`\lambda_{min}/\lambda_{max} \approx
    1.0\text{-}1.2 \cdot 10^{-6}`).
    """
    W = 0.5 * (W + W.T)
    tiny = np.finfo(float).tiny
    Lc, info = sla.lapack.dpotrf(W, lower=1, clean=1)
    if info == 0:
        anorm = float(np.abs(W).sum(axis=0).max())
        rc, info = sla.lapack.dpocon(Lc, anorm, uplo="L")
        ok = info == 0 and rc > rcond
        if not ok:  # the estimate at or below the cutoff: the eigenvalues decide
            s = sla.eigvalsh(W)
            ok = bool(s[0] > rcond * max(float(s[-1]), tiny))
        if ok:
            Linv, info = sla.lapack.dtrtri(Lc, lower=1)
            if info == 0 and np.all(np.isfinite(Linv)):
                return np.ascontiguousarray(Linv.T)
    s, U = sla.eigh(W)
    keep = s > rcond * max(float(s[-1]), tiny)
    if not keep.any():
        raise ValueError(
            "The kernel matrix of the landmarks is zero; check the kernel."
        )
    return U[:, keep] / np.sqrt(s[keep])


def nystroem_factor(K: Any) -> Any:
    """The Nyström factor behind an operator: K itself when it is one (it has
    ``landmark_indices_``), a FITC or block operator's ``factor``, else None."""
    return K if hasattr(K, "landmark_indices_") else getattr(K, "factor", None)


class NystroemFactor:
    r"""Nyström factor :math:`\Phi` with :math:`K \approx \Phi\Phi^T` (float32).

    Parameters
    ----------
    n_components : int, default=1000
        Number of landmarks m (capped at n).
    landmarks : {'uniform', 'kmeans'}, default='uniform'
        How the landmarks are chosen.
    kernel : {'rbf', 'poly', 'linear'} or callable, default='rbf'
    gamma, degree, coef0, kernel_params
        Kernel parameters, as in :func:`~semisvm.kernels.kernel_matrix`
        (``gamma`` must already be a number).
    rcond : float, default=1e-6
        Relative cutoff on the eigenvalues of W.
    random_state : int, RandomState or None, default=0
    include : array-like of int, default=None
        Rows of X that are always landmarks (``'uniform'`` draws the others):
        the labeled points, whose kernel rows the factor then reproduces
        exactly.

    Attributes
    ----------
    landmarks_ : ndarray of shape (m, d)
    landmark_indices_ : ndarray of shape (m,) or None
        Rows of X used as landmarks (None for k-means centres).
    components_ : ndarray of shape (m, r)
        :math:`T = U_r S_r^{-1/2}` (float64): :math:`\Phi = k(X, Z) T`.
    C_ : ndarray of shape (n, m)
        :math:`k(X, Z)` of the training rows (float32 for float32 X).
    features_ : ndarray of shape (n, r), float32
        :math:`\Phi` of the training rows (formed on first use).
    rank_ : int
        r, the rank kept.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(300, 3))
    >>> F = NystroemFactor(60, gamma=0.5).fit(X)
    >>> F.features_.shape[0], F.rank_ <= 60
    (300, True)

    Use as a preconditioner (Falkon): ``F.solve_shifted(lam, V)`` returns
    :math:`(\Phi\Phi^T + \lambda I)^{-1} V` in O(n r C) by the Woodbury identity.
    """

    def __init__(
        self,
        n_components: int = 1000,
        *,
        landmarks: str = "uniform",
        kernel: Any = "rbf",
        gamma: float = 1.0,
        degree: int = 3,
        coef0: float = 1.0,
        kernel_params: dict | None = None,
        rcond: float = 1e-6,
        random_state: Any = 0,
        include: Any = None,
    ) -> None:
        self.n_components = n_components
        self.landmarks = landmarks
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.rcond = rcond
        self.random_state = random_state
        self.include = include

    # ------------------------------------------------------------------
    def _k(self, A: Any, B: Any, **kw: Any) -> np.ndarray:
        return kernel_matrix(
            A,
            B,
            kernel=self.kernel,
            gamma=self.gamma,
            degree=self.degree,
            coef0=self.coef0,
            kernel_params=self.kernel_params,
            **kw,
        )

    def _choose_landmarks(self, X: Any, m: int) -> tuple[np.ndarray, np.ndarray | None]:
        from sklearn.utils import check_random_state

        rng = check_random_state(self.random_state)
        n = X.shape[0]
        if self.landmarks == "uniform":
            idx = uniform_landmark_rows(n, m, rng, self.include)
            Z = X[idx]
            return (Z.toarray() if hasattr(Z, "toarray") else np.asarray(Z)), idx
        if self.landmarks == "kmeans":
            from sklearn.cluster import MiniBatchKMeans
            from threadpoolctl import threadpool_limits

            sub = X[np.sort(rng.choice(n, size=min(n, 10 * m), replace=False))]
            # one OpenMP/BLAS thread: oversubscribed threads were 10x slower on the
            # shared 2-core benchmark machine (not under blas_threads=None)
            limit = 1 if blas_limits_enabled() else None
            with threadpool_limits(limits=limit):
                km = MiniBatchKMeans(
                    n_clusters=m,
                    batch_size=max(1024, 2 * m),
                    n_init=1,
                    max_iter=20,
                    random_state=rng.randint(2**31 - 1),
                    init="random",
                ).fit(sub)
            return np.asarray(km.cluster_centers_, dtype=X.dtype), None
        raise ValueError(
            f"landmarks must be one of {LANDMARK_METHODS}, got {self.landmarks!r}."
        )

    def fit(self, X: Any) -> NystroemFactor:
        """Choose landmarks, factor W and compute C = k(X, Z).

        BLAS runs on one thread here: on the 2-core benchmark machine a second
        thread added under 10% to a GEMM and made LAPACK's eigh several times
        slower when the machine was shared (``benchmarks/bench_floor.py``).
        """
        with single_blas_thread():
            return self._fit(X)

    def _fit(self, X: Any) -> NystroemFactor:
        n = X.shape[0]
        m = int(min(self.n_components, n))
        if m < 1:
            raise ValueError(f"n_components must be >= 1, got {self.n_components}.")
        Z, idx = self._choose_landmarks(X, m)
        self.landmarks_ = Z
        self.landmark_indices_ = idx
        self.components_ = landmark_components(
            self._k(Z, None, dtype=np.float64), self.rcond
        )
        self.rank_ = int(self.components_.shape[1])
        self.C_ = self.kernel_to_landmarks(X)
        self._features: np.ndarray | None = None
        return self

    @property
    def features_(self) -> np.ndarray:
        r""":math:`\Phi = C T` (float32, n x r), formed on first use from ``C_``."""
        if self._features is None:
            n = self.C_.shape[0]
            out = np.empty((n, self.rank_), dtype=np.float32)
            T = self.components_.astype(self.C_.dtype)
            rows = block_rows(self.rank_, 8, cap_bytes=64 * 2**20, n_rows=n)
            # the Cholesky T is upper triangular: TRMM, half GEMM's flops (a
            # C-ordered block B is Fortran's B^T, and B T = (T^T B^T)^T)
            trmm = get_blas_funcs("trmm", (T,)) if _upper_triangular(T) else None
            for s in range(0, n, rows):
                B = self.C_[s : s + rows]
                if trmm is None:
                    out[s : s + rows] = B @ T
                else:
                    out[s : s + rows] = trmm(1.0, T, B.T, side=0, lower=0, trans_a=1).T
            self._features = out
        return self._features

    def kernel_to_landmarks(self, X: Any) -> np.ndarray:
        """:math:`C = k(X, Z)` (n x m, float32 for float32 X), built in row blocks."""
        n, m = X.shape[0], self.landmarks_.shape[0]
        dtype = np.float32 if X.dtype == np.float32 else np.float64
        out = np.empty((n, m), dtype=dtype)
        zz = row_norms_sq(self.landmarks_).astype(dtype)
        rows = block_rows(m, 8, cap_bytes=64 * 2**20, n_rows=n)
        for s in range(0, n, rows):
            out[s : s + rows] = self._k(
                X[s : s + rows],
                self.landmarks_,
                dtype=dtype,
                Z_norms_sq=zz if self.kernel == "rbf" else None,
            )
        return out

    def transform(self, X: Any) -> np.ndarray:
        r"""Features :math:`\Phi(X) = k(X, Z)\, T` (float32), built in row blocks."""
        n = X.shape[0]
        m = self.landmarks_.shape[0]
        out = np.empty((n, self.rank_), dtype=np.float32)
        T32 = self.components_.astype(np.float32)
        zz = row_norms_sq(self.landmarks_).astype(np.float32)
        rows = block_rows(m + self.rank_, 4, cap_bytes=64 * 2**20, n_rows=n)
        for s in range(0, n, rows):
            Kb = self._k(
                X[s : s + rows],
                self.landmarks_,
                dtype=np.float32,
                Z_norms_sq=zz if self.kernel == "rbf" else None,
            )
            np.matmul(Kb, T32, out=out[s : s + rows])
        return out

    def training_decision(self, beta: np.ndarray) -> np.ndarray:
        r""":math:`C\beta` on the training rows in float64 (a float32 C is converted
        in row blocks of one reused buffer, as the product of a new point's
        kernel row converts it: no n x m float64 temporary)."""
        C = self.C_
        beta = np.asarray(beta, dtype=np.float64)
        F = np.empty((C.shape[0], beta.shape[1]))
        if C.dtype == np.float64:
            np.matmul(C, beta, out=F)
            return F
        rows = block_rows(C.shape[1], 8, cap_bytes=16 * 2**20, n_rows=C.shape[0])
        buf = np.empty((rows, C.shape[1]))
        for s in range(0, C.shape[0], rows):
            B = buf[: min(rows, C.shape[0] - s)]
            B[...] = C[s : s + rows]
            np.matmul(B, beta, out=F[s : s + rows])
        return F

    def coef_from_features(self, eta: np.ndarray) -> np.ndarray:
        r""":math:`\beta = T\eta`: coefficients on the landmarks, :math:`f = k(x, Z)\beta`."""
        return self.components_ @ eta

    def operator(self) -> LowRankOperator:
        r"""The operator :math:`\Phi\Phi^T` (the solvers' interface)."""
        return LowRankOperator(self.features_)

    def solve_shifted(self, lam: float, V: np.ndarray) -> np.ndarray:
        r""":math:`(\Phi\Phi^T + \lambda I)^{-1} V` by the Woodbury identity.

        :math:`\tfrac1\lambda\big(V - \Phi(\lambda I + \Phi^T\Phi)^{-1}\Phi^T V\big)`;
        the r x r Cholesky factor is cached per ``lam``.
        """
        if lam <= 0:
            raise ValueError(f"lam must be > 0, got {lam}.")
        cache = getattr(self, "_shift_cache", None)
        if cache is None or cache[0] != lam:
            G = _gram(self.features_)
            G[np.diag_indices_from(G)] += lam
            cache = (lam, sla.cho_factor(G))
            self._shift_cache = cache
        Phi = self.features_
        V = np.asarray(V, dtype=np.float64)
        PtV = (Phi.T @ V.astype(np.float32)).astype(np.float64)
        sol = sla.cho_solve(cache[1], PtV)
        return (V - (Phi @ sol.astype(np.float32)).astype(np.float64)) / lam


def thin_product(P: np.ndarray, V: np.ndarray) -> np.ndarray:
    r""":math:`P(P^TV)` in float64 for a vector or a thin (n, C) block V.

    A block goes as :math:`((V^TP)P^T)^T`, the thin operand first (OpenBLAS's
    sgemm measured 10-20% faster so, as for the dense operator), returned
    C-ordered like V.
    """
    if V.ndim == 1 or V.shape[1] == 1:
        out = P @ (P.T @ V.astype(P.dtype, copy=False))
        return out.astype(np.float64, copy=False)
    VT = np.ascontiguousarray(V.T, dtype=P.dtype)
    block = np.empty(V.shape, dtype=np.float64)
    block[...] = ((VT @ P) @ P.T).T
    return block


#: a float32 factor's float64 copy for the accurate products is kept up to this size
ACCURATE_COPY_MAX_BYTES = 256 * 2**20

#: float64 row blocks converted from a float32 factor: cache-sized, so that the
#: product reads the converted block from cache (74,384 x 2,000: 0.38 s a
#: product with 64 MB blocks, 0.155 s with 8 MB)
CONVERT_BLOCK_BYTES = 8 * 2**20


def accurate_projection(P: np.ndarray, V: np.ndarray) -> np.ndarray:
    r""":math:`P^TV` accumulated in float64 for a float32 or float64 P and an
    (n,) or (n, k) V, P's rows converted in cache-sized blocks (no float64 copy
    of P)."""
    V = np.asarray(V, dtype=np.float64)
    V2 = V[:, None] if V.ndim == 1 else V
    if P.dtype == np.float64:
        W = P.T @ V2
    else:
        rows = block_rows(
            P.shape[1], 8, cap_bytes=CONVERT_BLOCK_BYTES, n_rows=P.shape[0]
        )
        W = np.zeros((P.shape[1], V2.shape[1]))
        for s in range(0, P.shape[0], rows):
            W += P[s : s + rows].astype(np.float64).T @ V2[s : s + rows]
    return W[:, 0] if V.ndim == 1 else W


def accurate_thin_product(
    P: np.ndarray, V: np.ndarray, P64: np.ndarray | None = None
) -> np.ndarray:
    r""":math:`P(P^TV)` accumulated in float64 for a float32 P (row blocks of P
    converted; bounded memory): the product of the matrix the float32 factor
    defines, for the solvers' stopping checks (:func:`thin_product` rounds V
    to float32).  ``P64``: P in float64, read as it is (no conversion)."""
    V = np.asarray(V, dtype=np.float64)
    V2 = V[:, None] if V.ndim == 1 else V
    if P64 is not None:
        out = P64 @ (P64.T @ V2)
        return out[:, 0] if V.ndim == 1 else out
    rows = block_rows(P.shape[1], 8, cap_bytes=CONVERT_BLOCK_BYTES, n_rows=P.shape[0])
    W = accurate_projection(P, V2)
    out = np.empty(V2.shape)
    for s in range(0, P.shape[0], rows):
        out[s : s + rows] = P[s : s + rows].astype(np.float64) @ W
    return out[:, 0] if V.ndim == 1 else out


def _gram(Phi: np.ndarray) -> np.ndarray:
    r""":math:`\Phi^T\Phi` in float64, accumulated over row blocks."""
    r = Phi.shape[1]
    G = np.zeros((r, r))
    rows = block_rows(r, 8, cap_bytes=CONVERT_BLOCK_BYTES, n_rows=Phi.shape[0])
    for s in range(0, Phi.shape[0], rows):
        B = Phi[s : s + rows].astype(np.float64)
        G += B.T @ B
    return G


def landmark_rows(factor: NystroemFactor, n: int) -> np.ndarray:
    r"""The training rows on which FITC and the block operator keep no residual:
    the landmark rows when the factor dropped eigen-directions of the landmark
    kernel, else none.

    Where the factor keeps every eigenvalue, the residual
    :math:`K - \Phi\Phi^T` vanishes on the landmark rows and columns up to the
    float32 factor's rounding (:math:`\Phi_Z\Phi^T = K_{Z:}`).  Where it drops
    some (near-duplicate landmarks: full USPS has them) the residual there is
    the part of :math:`K_{Z:}` along the dropped directions; zeroing it keeps
    :math:`\hat K_{:Z}T = \Phi`, the identity the solvers read
    (:class:`~semisvm.solvers._landmarks.LandmarkSpace`), and a principal
    submatrix of the positive semi-definite residual is one still, so
    :math:`\hat K` stays positive semi-definite.
    """
    out = np.zeros(n, dtype=bool)
    idx = getattr(factor, "landmark_indices_", None)
    if idx is not None and factor.rank_ < len(idx):
        out[np.asarray(idx, dtype=np.intp)] = True
    return out


class NystroemResidual:
    r"""What the operators :math:`\hat K = \Phi\Phi^T + R` share (FITC and
    blocks: a residual R that vanishes on the landmark columns): ``factor``
    and ``Phi`` set by the subclass."""

    factor: NystroemFactor
    Phi: np.ndarray

    def landmark_basis(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        r"""``(Z, Phi, T)``: the landmark rows, :math:`\Phi` and T, with
        :math:`\hat K_{:Z}T = \Phi`: :math:`\Phi_Z^TT = T^TWT = I`, and the
        residual vanishes on the landmark columns (up to the float32 factor's
        rounding when T keeps every eigenvalue of W, by construction when it
        drops some: :func:`landmark_rows`); the coarse start's basis
        (:func:`semisvm.solvers._coarse.coarse_start`).  None when the
        landmarks are not training rows (k-means centres)."""
        idx = self.factor.landmark_indices_
        if idx is None:
            return None
        return idx, self.Phi, self.factor.components_

    n_products: int
    _phi64: np.ndarray | None = None

    def float64_features(self) -> np.ndarray | None:
        """Phi in float64 for the accurate products, copied on first use where the
        copy takes at most ``ACCURATE_COPY_MAX_BYTES`` (a product then reads it
        instead of converting Phi's row blocks each time), else None."""
        if self.Phi.dtype == np.float64:
            return self.Phi
        if self._phi64 is None and 8 * self.Phi.size <= ACCURATE_COPY_MAX_BYTES:
            self._phi64 = self.Phi.astype(np.float64)
        return self._phi64

    def _add_residual(self, out: np.ndarray, V: np.ndarray) -> None:
        """``out += R V`` for an (n, C) block (the subclass's residual)."""
        raise NotImplementedError

    def residual(self, V: np.ndarray) -> np.ndarray:
        """``R V`` for an (n, C) block, float64."""
        out = np.zeros(V.shape)
        self._add_residual(out, np.asarray(V, dtype=np.float64))
        return out

    def project(self, V: np.ndarray) -> np.ndarray:
        r""":math:`V^T\Phi`, shape (C, m), in the products' precision: the
        first pass over :math:`\Phi` of the product with an (n, C) block V."""
        VT = np.ascontiguousarray(V.T, dtype=self.Phi.dtype)
        with single_blas_thread():
            return VT @ self.Phi

    def expand(
        self, V: np.ndarray, W: np.ndarray, extra: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        r"""``(K V, Phi extra)`` from ``W = project(V)``, both float64.

        The second pass over :math:`\Phi` carries the k columns of ``extra``
        (m, k) with the C of W, so that a product with the operator and one
        with :math:`\Phi` read :math:`\Phi` twice instead of four times (the
        preconditioner on this operator's landmarks,
        :class:`semisvm.solvers._preconditioners.NystroemPreconditioner`).
        """
        C = W.shape[0]
        top = np.concatenate([W, extra.T.astype(W.dtype, copy=False)], axis=0)
        with single_blas_thread():
            both = (top @ self.Phi.T).T
        KV = np.array(both[:, :C], dtype=np.float64)
        self._add_residual(KV, np.asarray(V, dtype=np.float64))
        self.n_products += C
        return KV, np.array(both[:, C:], dtype=np.float64)

    def expand_one(self, top: np.ndarray) -> np.ndarray:
        r""":math:`\Phi\,\mathrm{top}^T` for a (C, m) ``top``, float64: a second
        pass over :math:`\Phi` with C columns (the preconditioner's
        :meth:`~semisvm.solvers._preconditioners.NystroemPreconditioner.apply_lean`
        folds the product and the preconditioner into one set of C)."""
        with single_blas_thread():
            out = (top.astype(self.Phi.dtype, copy=False) @ self.Phi.T).T
        self.n_products += top.shape[0]
        return np.array(out, dtype=np.float64)


class LowRankOperator:
    r"""The symmetric operator :math:`\Phi\Phi^T` (two thin products per apply).

    Parameters
    ----------
    Phi : ndarray of shape (n, r)
        Factor (float32 or float64); products are returned in float64.
    """

    def __init__(self, Phi: np.ndarray) -> None:
        self.Phi = Phi
        n = Phi.shape[0]
        self.shape = (n, n)
        self.dtype = np.dtype(np.float64)
        self.n_products = 0

    def __matmul__(self, V: np.ndarray) -> np.ndarray:
        V = np.asarray(V)
        self.n_products += 1 if V.ndim == 1 else V.shape[1]
        # thin products over an n x r matrix: one BLAS thread, as for the streamed
        # tiles (BLAS default on the loaded 2-core machine: ~16 ms for 1 or 10
        # columns at n = 8,000, m = 1,000; one thread: 1.7 and 8.7 ms;
        # benchmarks/scale/results/pcg_columns.md)
        with single_blas_thread():
            return thin_product(self.Phi, V)

    def diagonal(self) -> np.ndarray:
        return np.einsum("ij,ij->i", self.Phi, self.Phi, dtype=np.float64)

    def toarray(self) -> np.ndarray:
        P = self.Phi.astype(np.float64)
        return P @ P.T
