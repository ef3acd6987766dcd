r"""The semi-supervised (deformed) kernel as an estimator: ``SemiSupervisedKernel``.

It builds K and the graph Laplacian of the training points through the same
preparation path as every estimator (:mod:`semisvm.models._problem`), factors
:math:`cI + LK` once, and evaluates :math:`\hat k` on any points with
:func:`semisvm.kernels.deformed_gram` (the algebra and the references are there).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError
from sklearn.gaussian_process.kernels import Hyperparameter, Kernel
from sklearn.utils import check_array

from .. import _defaults
from .._validation import Interval, Options, check_finite, validate_params
from ..graph import check_adjacency
from ..kernels import row_norms_sq
from ..kernels._deformed import deformed_gram
from ._adaptive import paper_regularization
from ._problem import prediction_kernel, prepare_graph, prepare_kernel

__all__ = ["DeformedGPKernel", "SemiSupervisedKernel"]


class SemiSupervisedKernel(BaseEstimator):
    r"""Semi-supervised (deformed) kernel built on labeled + unlabeled points.

    ``fit(X)`` builds the base Gram matrix ``K`` and the graph Laplacian ``L`` of
    the n training points (labeled and unlabeled alike) and LU-factors
    :math:`cI + LK` once; afterwards the object evaluates

    .. math::

        \hat k(a, z) = k(a, z) - k_a^\top (c I + L K)^{-1} L k_z,
        \qquad c = \gamma_A / \gamma_I,

    with :math:`\gamma_A, \gamma_I` the raw weights that ``gamma_a``,
    ``gamma_i`` mean under ``regularization`` (as in :class:`~semisvm.LapSVM`),

    between any two sets of points through ``kernel(A, B)`` / ``gram(A, B)``.
    It can be handed to any supervised kernel machine: as a precomputed Gram
    matrix (``SVC(kernel="precomputed")``, ``KernelRidge(kernel="precomputed")``),
    as a callable (``SVC(kernel=ssk)``), or to a Gaussian process through
    :meth:`as_gp_kernel`.

    Parameters
    ----------
    kernel : {'rbf', 'poly', 'linear'} or callable, default='rbf'
        Base kernel (see :func:`semisvm.kernels.kernel_matrix`); ``rbf`` is
        :math:`\exp(-\gamma\|x - z\|^2)`, i.e. ``gamma = 1 / (2 sigma^2)``.
        A callable is called as ``kernel(A, B, **kernel_params)``.
    gamma : float or {'knn', 'median', 'scale'}, default='knn'
        Base-kernel parameter (see :func:`semisvm.kernels.resolve_gamma`).
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=1.0
        Constant of the polynomial kernel.
    kernel_params : dict, default=None
        Extra keyword arguments of a callable kernel.
    n_neighbors : int, default=10
        Must be smaller than ``n_samples``.
        Neighbours of the symmetric kNN graph (ignored when ``fit`` receives an
        ``adjacency``).
    graph_weight : {'auto', 'binary', 'heat', 'local'}, default='auto'
        Edge weights of the kNN graph.
    heat_t : float, default=None
        Width of the heat weights; ``None`` uses the mean edge length.
    normalize_laplacian : bool, default=False
        Use :math:`I - D^{-1/2} W D^{-1/2}` instead of :math:`D - W`.
    laplacian_power : int or 'auto', default='auto'
        Integer power p of the Laplacian, :math:`L^p`; ``'auto'`` as in
        :class:`~semisvm.LapSVM` without the labels, which this kernel does not
        see: 3 when the intrinsic dimension is at least 16, else 1
        (:func:`semisvm.graph.auto_laplacian_power`); the value used is
        ``laplacian_power_``.
    gamma_a : float, default=1e-6
        Ambient regularisation (> 0) of the LapSVM objective, read as
        ``regularization`` says.  The library-wide default
        ``semisvm._defaults.GAMMA_A``, meaning what it means in
        :class:`~semisvm.LapSVM`.
    gamma_i : float, default=1.0
        Intrinsic regularisation (>= 0), read as ``regularization`` says.  ``0``
        gives back the base kernel.  The library-wide default
        ``semisvm._defaults.GAMMA_I``.
    regularization : {'normalized', 'paper'}, default='normalized'
        How ``gamma_a`` and ``gamma_i`` are read, as the option of the same name
        of :class:`~semisvm.SolverOptions` for :class:`~semisvm.LapSVM`:
        ``'normalized'``: as :math:`\lambda_A, \lambda_I` of the objective with
        the loss averaged over the labeled points and the graph term averaged
        over the n points (divided by 2,000 beyond 2,000 points) and by the mean
        degree (times the graph's length normalization, see
        :mod:`semisvm.models._adaptive`), so that the same values give the same
        model as in ``LapSVM``; the kernel depends on the ratio only,
        :math:`c = \lambda_A n_G \bar d^{\,p} / (\lambda_I \rho^p)`,
        :math:`n_G = \min(n, 2000)`, not on the number of labels.
        ``'paper'``: as the raw :math:`\gamma_A, \gamma_I` below
        (:math:`c = \gamma_A/\gamma_I`; the reading of version 0.1.0).

    Attributes
    ----------
    X_fit_ : ndarray of shape (n_samples, n_features)
        The points the kernel was deformed on.
    gamma_ : float
        The resolved base-kernel ``gamma``.
    laplacian_ : scipy.sparse.csr_array of shape (n_samples, n_samples)
    c_ : float
        :math:`\gamma_A / \gamma_I` of the raw weights (``inf`` when
        ``gamma_i == 0``).
    graph_scale_ : float
        The graph term's length normalization :math:`\rho` (1 for a user
        ``adjacency``), used by ``regularization='normalized'``.
    n_features_in_ : int

    See Also
    --------
    semisvm.models.LapSVC : SVC on this kernel, i.e. a Laplacian SVM.
    semisvm.solvers.lapsvm_dual : the same Laplacian SVM through its dual.

    Notes
    -----
    **Parameter mapping.**  Below, :math:`\gamma_A, \gamma_I` are the raw
    weights: ``gamma_a``, ``gamma_i`` themselves with
    ``regularization='paper'``; with ``'normalized'`` (the default, as in
    :class:`~semisvm.LapSVM`) :math:`\gamma_A = l\lambda_A` and
    :math:`\gamma_I = l\lambda_I\rho^p / (n\bar d^{\,p})` for ``gamma_a`` =
    :math:`\lambda_A`, ``gamma_i`` = :math:`\lambda_I` and l labeled points
    (:func:`semisvm.models._adaptive.paper_regularization`).  The Laplacian SVM
    objective (Belkin et al. 2006; Melacci & Belkin 2011, Eq. 4)

    .. math::

        \sum_{i \le l} \max(0, 1 - y_i f(x_i)) + \gamma_A \|g\|_K^2
        + \gamma_I\, \mathbf g^\top L \mathbf g, \qquad f = g + b,

    with :math:`\mathbf g = (g(x_1), \dots, g(x_n))`, divided by
    :math:`2\gamma_A` becomes

    .. math::

        C \sum_{i \le l} \xi_i + \tfrac12 \bigl(\|g\|_K^2
        + c^{-1}\, \mathbf g^\top L \mathbf g\bigr),
        \qquad C = \frac{1}{2\gamma_A},\quad c = \frac{\gamma_A}{\gamma_I}.

    The bracket is the squared norm of g in the deformed RKHS whose kernel is
    :math:`\hat k` above (Sindhwani et al. 2005, Theorem 2.1; Bodó's note, by
    the Woodbury identity), so the Laplacian SVM is a standard SVM with
    ``C = 1/(2 gamma_a)`` on :math:`\hat k`.  Bodó writes the same kernel with
    :math:`(\frac{1}{2\gamma'_I} I + LK)^{-1}` for the objective
    :math:`\frac12\|w\|^2 + C\sum\xi + \gamma'_I f^\top L f`; there
    :math:`\gamma'_I = \gamma_I / (2\gamma_A)`.  The kernel itself only depends on
    the ratio ``c``; ``gamma_a`` alone sets the SVM's ``C``.  The bias is not
    part of g, so it is unregularised by both terms (also with the normalized
    Laplacian, where :math:`L\mathbf 1 \ne 0`) -- exactly as in the dual
    LapSVM.

    On the fitted points :math:`\hat K = K - K (cI + LK)^{-1} L K
    = c\,K (cI + LK)^{-1}`, symmetric positive semi-definite.

    **Cost.**  ``fit``: the Gram matrix, the kNN graph and one dense n-by-n LU
    (:math:`O(n^3)`).  Evaluating on m and p points: :math:`O(n(m + p)d)` base
    kernel entries, a sparse product with ``L`` and an LU solve,
    :math:`O(n^2 p + nmp)`.

    A fitted kernel is not re-fitted by scikit-learn's ``clone`` (which
    ``GridSearchCV``/``cross_val_score`` apply to ``SVC(kernel=ssk)``): cloning a
    fitted kernel returns the same, shared, fitted object.

    References
    ----------
    V. Sindhwani, P. Niyogi, M. Belkin. Beyond the point cloud: from transductive
    to semi-supervised learning. ICML 2005.

    Z. Bodó. Laplacian SVM and semi-supervised kernels (technical note).

    S. Melacci, M. Belkin. Laplacian support vector machines trained in the
    primal. JMLR 12, 2011.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.svm import SVC
    >>> from semisvm.datasets import make_two_moons
    >>> from semisvm import SemiSupervisedKernel
    >>> X, y, y_true = make_two_moons(200, noise=0.05, random_state=0)
    >>> ssk = SemiSupervisedKernel(gamma=2.0, n_neighbors=6, normalize_laplacian=False,
    ...                            gamma_a=0.01, gamma_i=10.0,
    ...                            regularization="paper").fit(X)
    >>> lab = y != -1
    >>> svc = SVC(kernel="precomputed", C=1 / (2 * 0.01)).fit(ssk(X[lab]), y[lab])
    >>> float(np.mean(svc.predict(ssk(X, X[lab])) == y_true))
    1.0
    """

    _parameter_constraints: dict = {
        "kernel": [Options(("rbf", "poly", "linear")), "callable"],
        "gamma": [
            Interval(numbers.Real, 0.0, None, closed="neither"),
            Options(("knn", "median", "scale")),
        ],
        "degree": [Interval(numbers.Integral, 1, None, closed="left")],
        "coef0": [Interval(numbers.Real, None, None)],
        "kernel_params": ["dict", None],
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "graph_weight": [Options(("auto", "binary", "heat", "local"))],
        "heat_t": [Interval(numbers.Real, 0.0, None, closed="neither"), None],
        "normalize_laplacian": ["boolean"],
        "laplacian_power": [
            Interval(numbers.Integral, 1, None, closed="left"),
            Options(("auto",)),
        ],
        "gamma_a": [Interval(numbers.Real, 0.0, None, closed="neither")],
        "gamma_i": [Interval(numbers.Real, 0.0, None, closed="left")],
        "regularization": [Options(("normalized", "paper"))],
    }

    def __init__(
        self,
        *,
        kernel: str | Callable = "rbf",
        gamma: float | str = _defaults.GAMMA,
        degree: int = 3,
        coef0: float = 1.0,
        kernel_params: dict | None = None,
        n_neighbors: int = _defaults.N_NEIGHBORS,
        graph_weight: str = _defaults.GRAPH_WEIGHT,
        heat_t: float | None = None,
        normalize_laplacian: bool = _defaults.NORMALIZE_LAPLACIAN,
        laplacian_power: int | str = _defaults.LAPLACIAN_POWER,
        gamma_a: float = _defaults.GAMMA_A,
        gamma_i: float = _defaults.GAMMA_I,
        regularization: str = "normalized",
    ) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.n_neighbors = n_neighbors
        self.graph_weight = graph_weight
        self.heat_t = heat_t
        self.normalize_laplacian = normalize_laplacian
        self.laplacian_power = laplacian_power
        self.gamma_a = gamma_a
        self.gamma_i = gamma_i
        self.regularization = regularization

    # ------------------------------------------------------------------ fit
    def fit(self, X: Any, y: Any = None, *, adjacency: Any = None):
        """Build the graph and the base Gram matrix of ``X`` and factor ``cI + LK``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            All training points, labeled and unlabeled.
        y : None
            Ignored (the kernel is unsupervised).
        adjacency : {array-like, sparse matrix} of shape (n_samples, n_samples), \
                default=None
            A symmetric non-negative graph to use instead of the kNN graph.

        Returns
        -------
        self : SemiSupervisedKernel
        """
        validate_params(self.get_params(deep=False), self._parameter_constraints)
        X = self._check_X(X, reset=True)
        n = X.shape[0]
        if n < 2:
            raise ValueError(
                f"SemiSupervisedKernel needs at least 2 points, got n_samples={n}."
            )
        K, gamma = prepare_kernel(self, X)
        K = np.asarray(K, dtype=np.float64)
        gamma = 1.0 if gamma is None else gamma
        if adjacency is not None:
            adjacency = check_adjacency(adjacency, n)
        L_pow, scale, power, dim = prepare_graph(self, X, K, gamma, adjacency=adjacency)
        self.laplacian_power_, self.intrinsic_dimension_ = power, dim
        # c depends on the ratio of the raw weights only: no label count needed
        ga, gi = self._raw_weights(L_pow, n, scale, weight_sum=1.0)
        L = L_pow.tocsr() if hasattr(L_pow, "tocsr") else L_pow
        L_op = _as_product_operand(L)
        lu_piv, c = _factor(K, L_op, ga, gi)

        self.X_fit_ = X
        self.gamma_ = gamma
        self.graph_scale_ = scale
        self._laplacian_operator = L_pow
        self.laplacian_ = L
        self.c_ = c
        self._K_fit = K
        self._L_op = L_op
        self._lu = lu_piv
        return self

    def _raw_weights(
        self, L: Any, n: int, scale: float, *, weight_sum: float
    ) -> tuple[float, float]:
        """The raw (paper's) weights for ``gamma_a``, ``gamma_i`` under
        ``regularization``, with ``weight_sum`` the labeled loss weight."""
        return paper_regularization(
            self.regularization,
            self.gamma_a,
            self.gamma_i,
            n=n,
            weight_sum=weight_sum,
            L=L,
            power=self.laplacian_power_,
            scale=scale,
        )

    # ----------------------------------------------------------- evaluation
    def gram(self, A: Any, B: Any = None) -> np.ndarray:
        r"""Deformed Gram matrix :math:`\hat k(A, B)`.

        Parameters
        ----------
        A : array-like of shape (m, n_features)
        B : array-like of shape (p, n_features), default=None
            ``None`` means ``B = A``; the result is then exactly symmetric.

        Returns
        -------
        K_hat : ndarray of shape (m, p)
        """
        self._check_fitted()
        A = self._check_X(A, reset=False, name="A")
        K_AX = self._base(A, self.X_fit_)
        if B is None:
            K_AB = self._base(A, None)
            G = deformed_gram(K_AB, K_AX, K_AX, self._L_op, self._lu)
            return 0.5 * (G + G.T)
        B = self._check_X(B, reset=False, name="B")
        K_BX = self._base(B, self.X_fit_)
        K_AB = self._base(A, B)
        return deformed_gram(K_AB, K_AX, K_BX, self._L_op, self._lu)

    def __call__(self, A: Any, B: Any = None) -> np.ndarray:
        """Same as :meth:`gram`, so that ``SVC(kernel=ssk)`` works."""
        return self.gram(A, B)

    def gram_fit(self, rows: Any = None, cols: Any = None) -> np.ndarray:
        r"""Deformed Gram matrix between fitted points, reusing the stored ``K``.

        On all fitted points this is :math:`c K (cI + LK)^{-1}`.

        Parameters
        ----------
        rows, cols : array-like of int, default=None
            Indices of fitted points; ``None`` means all.  When ``cols`` is
            ``None`` it equals ``rows`` and the result is exactly symmetric.

        Returns
        -------
        K_hat : ndarray of shape (len(rows), len(cols))
        """
        self._check_fitted()
        K = self._K_fit
        sym = cols is None
        r = np.arange(K.shape[0]) if rows is None else np.asarray(rows)
        c = r if sym else np.asarray(cols)
        G = deformed_gram(K[np.ix_(r, c)], K[r], K[c], self._L_op, self._lu)
        return 0.5 * (G + G.T) if sym else G

    def diag(self, A: Any) -> np.ndarray:
        r"""Diagonal :math:`\hat k(a, a)` for every row of ``A`` (no m-by-m matrix).

        Parameters
        ----------
        A : array-like of shape (m, n_features)

        Returns
        -------
        d : ndarray of shape (m,)
        """
        self._check_fitted()
        A = self._check_X(A, reset=False, name="A")
        base = self._base_diag(A)
        if self._lu is None:
            return base
        K_AX = self._base(A, self.X_fit_)
        R = la.lu_solve(self._lu, np.asarray(self._L_op @ K_AX.T), check_finite=False)
        return base - np.einsum("ij,ji->i", K_AX, R)

    def as_gp_kernel(self) -> DeformedGPKernel:
        """A :class:`sklearn.gaussian_process.kernels.Kernel` view of this kernel.

        It has no hyperparameters, so ``GaussianProcessClassifier`` and
        ``GaussianProcessRegressor`` use it as it is (no optimisation).
        """
        self._check_fitted()
        return DeformedGPKernel(self)

    # -------------------------------------------------------------- helpers
    def __sklearn_tags__(self):  # noqa: D105
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = isinstance(self.kernel, str)
        return tags

    def __sklearn_clone__(self):
        if _is_fitted(self):
            return self
        return super().__sklearn_clone__()

    def _check_fitted(self) -> None:
        if not _is_fitted(self):
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet. Call "
                "'fit' with the labeled and unlabeled training points before "
                "evaluating the kernel."
            )

    def _check_X(self, X: Any, *, reset: bool, name: str = "X") -> np.ndarray:
        if isinstance(self.kernel, str):
            X = check_array(
                X,
                accept_sparse="csr",
                dtype=[np.float64, np.float32],
                ensure_all_finite=False,
                input_name=name,
            )
            check_finite(X, name)
            n_features = X.shape[1]
        else:  # a callable kernel may take any objects; only sizes are checked
            if not hasattr(X, "shape"):
                X = np.asarray(X)
            if X.dtype.kind in "fc":
                check_finite(X, name)
            n_features = X.shape[1] if X.ndim == 2 else None
        if reset:
            self.n_features_in_ = n_features
        elif n_features != self.n_features_in_:
            raise ValueError(
                f"{name} has {n_features} features, but {type(self).__name__} was "
                f"fitted on points with {self.n_features_in_} features."
            )
        return X

    def _base(self, A: Any, B: Any) -> np.ndarray:
        return prediction_kernel(self, A, B, dtype=np.float64)

    def _base_diag(self, A: Any) -> np.ndarray:
        if self.kernel == "rbf":
            return np.ones(A.shape[0])
        if self.kernel == "linear":
            return row_norms_sq(A).astype(np.float64)
        if self.kernel == "poly":
            return (self.gamma_ * row_norms_sq(A).astype(np.float64) + self.coef0) ** (
                self.degree
            )
        return np.array(
            [self._base(A[i : i + 1], None)[0, 0] for i in range(A.shape[0])]
        )


def _as_product_operand(L: Any) -> Any:
    """Dense copy of a dense-ish sparse ``L`` (BLAS beats SciPy's sparse @ dense)."""
    if sp.issparse(L) and L.nnz > 0.1 * L.shape[0] * L.shape[1]:
        return L.toarray()
    return L


def _is_fitted(ssk: SemiSupervisedKernel) -> bool:
    return hasattr(ssk, "X_fit_")


def _factor(
    K: np.ndarray, L: Any, gamma_a: float, gamma_i: float
) -> tuple[tuple[np.ndarray, np.ndarray] | None, float]:
    """LU factors of ``c I + L K`` with ``c = gamma_a / gamma_i``."""
    if gamma_i == 0:
        return None, float("inf")
    c = float(gamma_a) / float(gamma_i)
    M = np.array(L @ K, dtype=np.float64, copy=True)
    M[np.diag_indices_from(M)] += c
    return la.lu_factor(M, overwrite_a=True, check_finite=False), c


class DeformedGPKernel(Kernel):
    """Adapter: a fitted :class:`SemiSupervisedKernel` as a scikit-learn GP kernel.

    Parameters
    ----------
    ssk : SemiSupervisedKernel
        A fitted semi-supervised kernel.  It has no tunable hyperparameters here
        (its graph and base kernel are fixed at ``ssk.fit``).
    """

    def __init__(self, ssk: SemiSupervisedKernel) -> None:
        self.ssk = ssk

    @property
    def hyperparameters(self) -> list[Hyperparameter]:
        return []

    def __call__(self, X, Y=None, eval_gradient=False):
        K = self.ssk.gram(X, Y)
        if eval_gradient:
            if Y is not None:
                raise ValueError("Gradient can only be evaluated when Y is None.")
            return K, np.empty((K.shape[0], K.shape[1], 0))
        return K

    def diag(self, X):
        return self.ssk.diag(X)

    def is_stationary(self):
        return False

    @property
    def requires_vector_input(self):
        return isinstance(self.ssk.kernel, str)

    def __repr__(self):
        return f"DeformedGPKernel({self.ssk!r})"
