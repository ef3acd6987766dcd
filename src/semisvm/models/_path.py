r"""Laplacian SVM over its entire regularization path, as an estimator.

:class:`LapSVMPath` builds the kNN graph Laplacian and the kernel of the training
points, computes every breakpoint of the LapSVM path in :math:`\lambda` with
:func:`semisvm.solvers._path.lapsvm_path` (Wang, Chen, Yeung & Lochovsky), and
predicts at any :math:`\lambda` on the path.  :math:`\lambda` is chosen by the
error on a validation set or by cross-validation over the labeled points; the
"refit" is only an evaluation of the path.  :func:`plot_path` draws the
coefficient paths and the validation error along :math:`\lambda` (the paper's
Figure 2).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import (
    Interval,
    Options,
    check_finite,
    split_labeled,
    validate_params,
)
from ..graph import graph_laplacian, knn_graph
from ..kernels import kernel_matrix, resolve_gamma
from ..solvers._path import LapSVMPathResult, _solve_path, lapsvm_path

__all__ = ["LapSVMPath", "plot_path", "path_error_pieces"]


# ------------------------------------------------------------ error along path
def _signs(N: np.ndarray, other: np.ndarray) -> np.ndarray:
    """Sign of N just inside a segment: a zero takes the sign of the other end."""
    s = np.sign(N)
    zero = s == 0
    s[zero] = np.sign(other[zero])
    return s


def path_error_pieces(
    path: LapSVMPathResult, KP: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Exact number of errors along the path, as a step function of :math:`\lambda`.

    On a segment the numerator :math:`\lambda f_\lambda(x) = \alpha^T P^T k(x) +
    \alpha_0` is linear in :math:`\lambda`, so each point changes side at most
    once per segment: the error count is piecewise constant and is found exactly
    by sorting those roots.  Covers :math:`[\lambda_{last}, \lambda^0]`.

    Parameters
    ----------
    path : LapSVMPathResult
    KP : ndarray of shape (m, l)
        ``k(x)^T P`` for the m evaluation points.
    y : ndarray of shape (m,)
        Their labels in ``{-1, +1}``.  A point is predicted ``+1`` iff
        :math:`f > 0`.

    Returns
    -------
    hi, lo : ndarray of shape (n_pieces,)
        Each piece is the interval ``(lo, hi)`` (decreasing order).
    errors : ndarray of int of shape (n_pieces,)
    """
    lams = path.lambdas
    N = path.numerators(KP, lams)
    pos = y > 0
    if lams.size == 1:
        err = int(((N[:, 0] > 0) != pos).sum())
        return lams[:1].copy(), lams[:1].copy(), np.array([err])
    his, los, errs = [], [], []
    for j in range(lams.size - 1):
        Na, Nb = N[:, j], N[:, j + 1]
        la, lb = lams[j], lams[j + 1]
        sa, sb = _signs(Na, Nb), _signs(Nb, Na)
        wrong_top = (sa > 0) != pos
        flip = sa * sb < 0
        roots = lb + (la - lb) * (-Nb[flip]) / (Na[flip] - Nb[flip])
        delta = np.where(wrong_top[flip], -1, 1)
        order = np.argsort(-roots, kind="stable")
        roots, delta = roots[order], delta[order]
        e = int(wrong_top.sum()) + np.r_[0, np.cumsum(delta)]
        bnd = np.r_[la, roots, lb]
        his.append(bnd[:-1])
        los.append(bnd[1:])
        errs.append(e)
    return np.concatenate(his), np.concatenate(los), np.concatenate(errs)


def _best_piece(hi: np.ndarray, lo: np.ndarray, err: np.ndarray) -> tuple[float, int]:
    """λ in the lowest-error piece; ties go to the widest piece in log λ."""
    best = err.min()
    cand = np.flatnonzero(err == best)
    width = np.log(hi[cand]) - np.log(lo[cand])
    k = cand[np.argmax(width)]
    return float(np.sqrt(hi[k] * lo[k])), int(best)


def _count_errors(path: LapSVMPathResult, KP: np.ndarray, y: np.ndarray, lams):
    lams = np.asarray(lams, dtype=np.float64)
    if path.tail == "none":
        lams = np.maximum(lams, path.lambdas[-1])
    N = path.numerators(KP, lams)
    return ((N > 0) != (y > 0)[:, None]).sum(axis=0)


# --------------------------------------------------------------------- estimator
class LapSVMPath(ClassifierMixin, BaseEstimator):
    r"""Laplacian SVM with its entire regularization path in :math:`\lambda`.

    Solves, for every :math:`\lambda > 0` at once,

    .. math::

        \min_{\beta, \beta_0} \sum_{i \le l} \max(0, 1 - y_i f(x_i))
            + \frac{\lambda}{2} \beta^T (\rho K + K L K) \beta,
        \qquad f(x) = \beta^T k(x) + \beta_0,

    i.e. LapSVM with :math:`\gamma_A = \lambda\rho/2`, :math:`\gamma_I =
    \lambda/2` (Belkin, Niyogi & Sindhwani's dual with :math:`C = 1`).  The dual
    coefficients :math:`\alpha(\lambda)` and :math:`\alpha_0 = \lambda\beta_0`
    are piecewise linear in :math:`\lambda`; the breakpoints are stored and
    :math:`f_\lambda(x) = (\alpha^T P^T k(x) + \alpha_0)/\lambda` is exact at any
    :math:`\lambda`.  The intrinsic penalty acts on :math:`K\beta` only (the bias
    is not penalised), as in the paper's Eq. (5), also with a normalized
    Laplacian.

    Parameters
    ----------
    rho : float, default=1e-3
        Ratio :math:`\gamma_A/\gamma_I` (paper's :math:`\rho`), fixed along the
        path.
    kernel : {'rbf', 'poly', 'linear'} or callable, default='rbf'
        Kernel, see :func:`semisvm.kernels.kernel_matrix`
        (rbf: :math:`\exp(-\gamma\|x - z\|^2)`).
    gamma : float or {'median', 'scale'}, default='median'
    degree : int, default=3
    coef0 : float, default=1.0
    kernel_params : dict, default=None
        Extra arguments of a callable kernel.
    n_neighbors : int, default=6
        Neighbours of the symmetric kNN graph (the paper uses 6).
    graph_weight : {'binary', 'heat'}, default='binary'
    normalize_laplacian : bool, default=True
        :math:`I - D^{-1/2}WD^{-1/2}` instead of :math:`D - W`.
    laplacian_power : int, default=1
        Use :math:`L^p`.
    lambda_min : float, default=None
        Stop the path at this :math:`\lambda`; ``None`` follows it until no
        labeled point is inside the margin (then the classifier no longer
        changes).
    max_events : int, default=None
        Guard on the number of events (``None``: ``max(100, 20 l)``).
    cv : int, default=None
        If given and no validation set is passed to ``fit``, choose
        :math:`\lambda` by ``cv``-fold stratified cross-validation over the
        labeled points (the held-out labeled points stay in the graph as
        unlabeled points).
    random_state : int, RandomState or None, default=None
        Shuffling of the cross-validation folds.
    tol : float, default=1e-10
        Relative tolerance that decides when a point is at the elbow.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``classes_[1]`` is the positive class (:math:`f > 0`).
    path_ : LapSVMPathResult
        The whole path (breakpoints, elbow sets, events, warnings).
    lambdas_ : ndarray of shape (n_breakpoints,)
        Breakpoints, decreasing.
    alphas_ : ndarray of shape (n_breakpoints, n_labeled)
    alpha0s_ : ndarray of shape (n_breakpoints,)
    n_events_ : int
    stop_reason_ : str
    lambda_ : float
        :math:`\lambda` used by default in ``predict``.
    selection_ : {'validation', 'cv', 'end_of_path'}
        How ``lambda_`` was chosen; without validation data or ``cv`` it is the
        end of the path (least regularised).
    selection_error_ : float or None
        Validation (or summed cross-validation) error rate at ``lambda_``.
    selection_curve_ : tuple of ndarray or None
        ``(hi, lo, errors)`` pieces of the selection error along the path.
    labeled_ : ndarray of int
        Indices of the labeled training points.
    gamma_ : float
    X_fit_ : ndarray of shape (n_samples, n_features)
    n_features_in_ : int

    References
    ----------
    G. Wang, T. Chen, D.-Y. Yeung and F. H. Lochovsky, "Solution path for
    semi-supervised classification with manifold regularization", ICDM 2006.

    Examples
    --------
    >>> from semisvm.datasets import make_two_moons
    >>> from semisvm.models._path import LapSVMPath
    >>> X, y, y_true = make_two_moons(200, n_labeled_per_class=1, random_state=0)
    >>> clf = LapSVMPath(gamma=2.0).fit(X, y)
    >>> clf.n_events_
    0
    >>> clf.predict(X[:3], lam=clf.lambdas_[0]).shape
    (3,)
    """

    _parameter_constraints: dict = {
        "rho": [Interval(numbers.Real, 0, None, closed="neither")],
        "kernel": [Options(("rbf", "poly", "linear")), "callable"],
        "gamma": [
            Interval(numbers.Real, 0, None, closed="neither"),
            Options(("median", "scale")),
        ],
        "degree": [Interval(numbers.Integral, 1, None)],
        "coef0": [Interval(numbers.Real, None, None)],
        "kernel_params": [None, "dict"],
        "n_neighbors": [Interval(numbers.Integral, 1, None)],
        "graph_weight": [Options(("binary", "heat"))],
        "normalize_laplacian": ["boolean"],
        "laplacian_power": [Interval(numbers.Integral, 1, None)],
        "lambda_min": [None, Interval(numbers.Real, 0, None)],
        "max_events": [None, Interval(numbers.Integral, 1, None)],
        "cv": [None, Interval(numbers.Integral, 2, None)],
        "random_state": ["random_state"],
        "tol": [Interval(numbers.Real, 0, 1e-3, closed="neither")],
    }

    def __init__(
        self,
        rho: float = 1e-3,
        *,
        kernel: str | Any = "rbf",
        gamma: float | str = "median",
        degree: int = 3,
        coef0: float = 1.0,
        kernel_params: dict | None = None,
        n_neighbors: int = 6,
        graph_weight: str = "binary",
        normalize_laplacian: bool = True,
        laplacian_power: int = 1,
        lambda_min: float | None = None,
        max_events: int | None = None,
        cv: int | None = None,
        random_state: Any = None,
        tol: float = 1e-10,
    ) -> None:
        self.rho = rho
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.n_neighbors = n_neighbors
        self.graph_weight = graph_weight
        self.normalize_laplacian = normalize_laplacian
        self.laplacian_power = laplacian_power
        self.lambda_min = lambda_min
        self.max_events = max_events
        self.cv = cv
        self.random_state = random_state
        self.tol = tol

    # ----------------------------------------------------------------- helpers
    def _kernel(self, X: Any, Z: Any = None) -> np.ndarray:
        return kernel_matrix(
            X,
            Z,
            kernel=self.kernel,
            gamma=self.gamma_,
            degree=self.degree,
            coef0=self.coef0,
            kernel_params=self.kernel_params,
            dtype=np.float64,
        )

    def _encode(self, y: Any, name: str) -> np.ndarray:
        y = np.asarray(y)
        known = np.isin(y, self.classes_)
        if not known.all():
            raise ValueError(
                f"{name} holds labels {np.unique(y[~known])[:5]!r} that are not among "
                f"the training classes {self.classes_!r}."
            )
        return np.where(y == self.classes_[1], 1.0, -1.0)

    # --------------------------------------------------------------------- fit
    def fit(self, X: Any, y: Any, X_val: Any = None, y_val: Any = None) -> LapSVMPath:
        """Compute the whole path and choose ``lambda_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Labeled and unlabeled training points.
        y : array-like of shape (n_samples,)
            Labels of two classes, ``-1`` for unlabeled points.
        X_val, y_val : array-like, default=None
            Labeled validation set; ``lambda_`` then minimises its error over the
            path (exactly, see :func:`path_error_pieces`).

        Returns
        -------
        self : LapSVMPath
        """
        validate_params(self.get_params(deep=False), self._parameter_constraints)
        X = validate_data(
            self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=True
        )
        check_finite(X, "X")
        y = np.asarray(y)
        if y.shape != (X.shape[0],):
            raise ValueError(
                f"y must have shape ({X.shape[0]},) like X, got {y.shape}."
            )
        labeled, classes, y_enc = split_labeled(y)
        if classes.size != 2:
            raise ValueError(
                f"LapSVMPath is a binary classifier; the labeled points hold "
                f"{classes.size} classes {classes!r}. Train one-vs-rest models "
                "instead."
            )
        if (X_val is None) != (y_val is None):
            raise ValueError("Pass both X_val and y_val, or neither.")
        self.classes_ = classes
        t = np.zeros(X.shape[0])
        t[labeled] = np.where(y_enc[labeled] == 1, 1.0, -1.0)

        kernel = self.kernel if isinstance(self.kernel, str) else "callable"
        self.gamma_ = resolve_gamma(X, self.gamma, kernel)
        K = self._kernel(X)
        W = knn_graph(X, self.n_neighbors, weight=self.graph_weight)
        L = graph_laplacian(
            W, normalized=self.normalize_laplacian, power=self.laplacian_power
        )
        path = lapsvm_path(
            K,
            L,
            t,
            rho=self.rho,
            lambda_min=self.lambda_min,
            max_events=self.max_events,
            tol=self.tol,
        )
        self.X_fit_ = X
        self.path_ = path
        self.labeled_ = path.labeled
        self.lambdas_ = path.lambdas
        self.alphas_ = path.alphas
        self.alpha0s_ = path.alpha0s
        self.n_events_ = path.n_events
        self.stop_reason_ = path.stop_reason
        self.lambda_ = float(path.lambdas[-1])
        self.selection_ = "end_of_path"
        self.selection_error_ = None
        self.selection_curve_ = None
        if X_val is not None:
            self.select_lambda(X_val, y_val)
        elif self.cv is not None:
            self._select_cv(t[path.labeled])
        return self

    def select_lambda(self, X_val: Any, y_val: Any) -> LapSVMPath:
        """Set ``lambda_`` to the validation-error minimiser over the whole path.

        The error is piecewise constant in lambda and is computed exactly; among
        equal minima the widest interval (in log lambda) wins and ``lambda_`` is
        its geometric midpoint.

        Parameters
        ----------
        X_val : array-like of shape (m, n_features)
        y_val : array-like of shape (m,)

        Returns
        -------
        self : LapSVMPath
        """
        check_is_fitted(self, "path_")
        X_val = validate_data(
            self,
            X_val,
            accept_sparse="csr",
            dtype=[np.float64, np.float32],
            reset=False,
        )
        check_finite(X_val, "X_val")
        yv = self._encode(y_val, "y_val")
        if yv.shape != (X_val.shape[0],):
            raise ValueError("X_val and y_val have different numbers of samples.")
        KP = self._kernel(X_val, self.X_fit_) @ self.path_.P
        hi, lo, err = path_error_pieces(self.path_, KP, yv)
        self.lambda_, best = _best_piece(hi, lo, err)
        self.selection_ = "validation"
        self.selection_error_ = best / yv.size
        self.selection_curve_ = (hi, lo, err)
        return self

    def _select_cv(self, y_l: np.ndarray) -> None:
        from sklearn.model_selection import StratifiedKFold

        n_min = int(min((y_l > 0).sum(), (y_l < 0).sum()))
        if n_min < self.cv:
            raise ValueError(
                f"cv={self.cv} folds need at least {self.cv} labeled points per "
                f"class; the smallest class has {n_min}. Lower cv or pass a "
                "validation set."
            )
        M = self.path_.M
        skf = StratifiedKFold(
            n_splits=self.cv, shuffle=True, random_state=self.random_state
        )
        folds = []
        for tr, va in skf.split(np.zeros(y_l.size), y_l):
            res = _solve_path(
                M[np.ix_(tr, tr)],
                y_l[tr],
                rho=self.rho,
                lambda_min=self.lambda_min,
                max_events=self.max_events,
                tol=self.tol,
                warn=False,
            )
            KP = M[np.ix_(va, tr)] * y_l[tr][None, :]
            hi, lo, _ = path_error_pieces(res, KP, y_l[va])
            folds.append((res, KP, y_l[va], np.r_[hi, lo]))
        bnd = np.unique(np.concatenate([f[3] for f in folds]))[::-1]
        if bnd.size == 1:
            cand_hi = cand_lo = bnd
        else:
            cand_hi, cand_lo = bnd[:-1], bnd[1:]
        mids = np.sqrt(cand_hi * cand_lo)
        total = sum(_count_errors(res, KP, yv, mids) for res, KP, yv, _ in folds)
        lam, best = _best_piece(cand_hi, cand_lo, np.asarray(total))
        self.lambda_ = max(lam, self.path_.lambda_end) if lam > 0 else lam
        self.selection_ = "cv"
        self.selection_error_ = best / y_l.size
        self.selection_curve_ = (cand_hi, cand_lo, np.asarray(total))

    # ----------------------------------------------------------------- predict
    def decision_function(self, X: Any, lam: Any = None) -> np.ndarray:
        r"""Decision values :math:`f_\lambda(x)` at one or several :math:`\lambda`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (m, n_features)
        lam : float or array-like of shape (k,), default=None
            Any :math:`\lambda > 0` on the path (default ``lambda_``).

        Returns
        -------
        ndarray of shape (m,) for a scalar ``lam``, else (m, k)
            Positive values predict ``classes_[1]``.
        """
        check_is_fitted(self, "path_")
        X = validate_data(
            self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False
        )
        check_finite(X, "X")
        lam = self.lambda_ if lam is None else lam
        return self.path_.decision_function(self._kernel(X, self.X_fit_), lam)

    def predict(self, X: Any, lam: Any = None) -> np.ndarray:
        """Class labels at ``lam`` (default ``lambda_``).

        Returns
        -------
        ndarray of shape (m,) for a scalar ``lam``, else (m, k)
        """
        f = self.decision_function(X, lam)
        return self.classes_[(f > 0).astype(int)]


# -------------------------------------------------------------------- plotting
def plot_path(
    estimator: LapSVMPath,
    X_val: Any = None,
    y_val: Any = None,
    ax: Any = None,
    *,
    points_per_segment: int = 8,
) -> Any:
    r"""Coefficient paths and validation error along :math:`\lambda` (log scale).

    As the paper's Figure 2: the dual coefficients :math:`\alpha_i(\lambda)` of
    the labeled points and, with a validation/test set, its error rate along the
    whole path (exact step function).  Breakpoints are marked by dotted lines,
    ``lambda_`` by a dashed line.

    Parameters
    ----------
    estimator : LapSVMPath
        A fitted estimator.
    X_val, y_val : array-like, default=None
        Points whose error is drawn along the path.
    ax : matplotlib Axes or sequence of two Axes, default=None
        One Axes: coefficients on it and the error on a twin y-axis.  Two Axes:
        coefficients on the first, error on the second.  ``None``: a new figure.
    points_per_segment : int, default=8
        Points drawn per segment (the coefficients are linear in lambda, not in
        log lambda).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    check_is_fitted(estimator, "path_")
    path = estimator.path_
    lams = path.lambdas
    has_val = X_val is not None
    if ax is None:
        nrows = 2 if has_val else 1
        fig, axes = plt.subplots(nrows, 1, sharex=True, figsize=(7, 3 + 2.5 * nrows))
        axes = np.atleast_1d(axes)
        ax_c = axes[0]
        ax_e = axes[1] if has_val else None
    elif isinstance(ax, list | tuple | np.ndarray):
        ax_c, ax_e = ax[0], ax[1]
        fig = ax_c.figure
    else:
        ax_c = ax
        ax_e = ax.twinx() if has_val else None
        fig = ax.figure

    top = lams[0] * 3.0
    bottom = lams[-1] / 3.0 if path.tail != "none" else lams[-1]
    grid = [np.geomspace(top, lams[0], points_per_segment)]
    for j in range(lams.size - 1):
        grid.append(np.linspace(lams[j], lams[j + 1], points_per_segment))
    if bottom < lams[-1]:
        grid.append(np.geomspace(lams[-1], bottom, points_per_segment))
    grid = np.unique(np.concatenate(grid))
    alpha, _ = path.coefficients(grid)
    ax_c.plot(grid, alpha, lw=1)
    ax_c.set_xscale("log")
    ax_c.set_ylabel(r"$\alpha_i(\lambda)$")
    ax_c.set_title(f"LapSVM path: {path.n_events} events, stop: {path.stop_reason}")
    for lam in lams:
        ax_c.axvline(lam, color="0.8", lw=0.5, ls=":")
    ax_c.axvline(estimator.lambda_, color="k", lw=1, ls="--")
    if has_val:
        X_val = validate_data(
            estimator,
            X_val,
            accept_sparse="csr",
            dtype=[np.float64, np.float32],
            reset=False,
        )
        yv = estimator._encode(y_val, "y_val")
        KP = estimator._kernel(X_val, estimator.X_fit_) @ path.P
        hi, lo, err = path_error_pieces(path, KP, yv)
        xs = np.r_[hi, lo[-1]]
        ys = np.r_[err, err[-1]] * 100.0 / yv.size
        ax_e.step(xs, ys, where="post", color="C3", lw=1.5)
        ax_e.set_xscale("log")
        ax_e.set_ylabel("validation error (%)")
        ax_e.axvline(estimator.lambda_, color="k", lw=1, ls="--")
        ax_e.set_xlabel(r"$\lambda$")
    ax_c.set_xlabel(r"$\lambda$")
    return fig
