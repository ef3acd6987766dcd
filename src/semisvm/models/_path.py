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

from .. import _defaults
from .._validation import (
    Interval,
    Options,
    check_finite,
    check_n_neighbors,
    check_numeric_frame,
    check_semi_supervised_targets,
    decode_labels,
    plain,
    resolve_seed,
    validate_params,
)
from ..solvers._path import (
    LapSVMPathResult,
    _replace,
    _solve_path,
    translating_matrix,
)
from ._problem import (
    encode_targets,
    one_vs_rest,
    prediction_kernel,
    prepare_graph,
    prepare_kernel,
)

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


def encode_binary(y: Any, classes: np.ndarray, name: str) -> np.ndarray:
    """Labels ``y`` of a two-class problem as +1 (``classes[1]``) / -1, with an
    error naming ``name`` for a label outside ``classes``."""
    y = np.asarray(y)
    known = np.isin(y, classes)
    if not known.all():
        raise ValueError(
            f"{name} holds labels {plain(np.unique(y[~known])[:5])!r} that are "
            f"not among the training classes {plain(classes)!r}."
        )
    return np.where(y == classes[1], 1.0, -1.0)


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
    gamma : float or {'knn', 'median', 'scale'}, default='knn'
        ``'median'``: :math:`1/\gamma` is the median squared distance between
        points; ``'scale'``: ``1 / (n_features X.var())``.
    degree : int, default=3
    coef0 : float, default=1.0
    kernel_params : dict, default=None
        Extra arguments of a callable kernel.
    n_neighbors : int, default=10
        Neighbours of the symmetric kNN graph (the paper uses 6); smaller than
        ``n_samples``.
    graph_weight : {'auto', 'binary', 'heat', 'local'}, default='auto'
    heat_t : float, default=None
        Width of the heat weights; ``None`` uses the mean edge length.
    normalize_laplacian : bool, default=False
        :math:`I - D^{-1/2}WD^{-1/2}` instead of :math:`D - W`.
    laplacian_power : int or 'auto', default='auto'
        Integer power p of the Laplacian, :math:`L^p`; ``'auto'`` as in
        :class:`~semisvm.LapSVM` (:func:`semisvm.graph.auto_laplacian_power`);
        the value used is ``laplacian_power_``.
    lambda_min : float, default=None
        Stop the path at this :math:`\lambda`; ``None`` follows it until no
        labeled point is inside the margin (then the classifier no longer
        changes) or, with labels the kernel cannot separate, down to the
        numerical floor (``stop_reason_ == 'lambda_floor'``, see
        :class:`~semisvm.solvers.LapSVMPathResult`).
    max_events : int, default=None
        Guard on the number of events (``None``: ``max(100, 20 l)``).
    cv : int or None, default=5
        Without a validation set passed to ``fit``, ``lambda_`` is chosen by
        ``min(cv, m)``-fold stratified cross-validation over the labeled points,
        ``m`` being the labeled count of the smaller class (the held-out labeled
        points stay in the graph as unlabeled points; each fold's path is exact,
        so the cross-validation error is minimised over all of :math:`\lambda`
        between the fold paths' breakpoints).  With ``cv=None`` or fewer than
        two labeled points in a class, the rule is the geometric midpoint
        :math:`\sqrt{\lambda^0 \lambda_{last}}` of the computed path (never
        its end, the least regularised and most overfitted solution).
    random_state : int, RandomState or None, default=None
        Shuffling of the cross-validation folds.
    tol : float, default=1e-10
        Relative tolerance that decides when a point is at the elbow.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        With two classes ``classes_[1]`` is the positive class (:math:`f > 0`).
        With more, one path per class (class against the rest, unlabeled points
        ``-1`` staying unlabeled in every problem) and ``predict`` takes the
        largest :math:`f`.
    paths_ : list of LapSVMPathResult
        One path (two classes) or one per class.  They share one translating
        matrix factorisation (:math:`M` does not depend on the labels).
    path_ : LapSVMPathResult
        Two classes only: ``paths_[0]``, the whole path (breakpoints, elbow
        sets, events, warnings).
    lambdas_ : ndarray of shape (n_breakpoints,)
        Two classes only: breakpoints, decreasing.
    alphas_ : ndarray of shape (n_breakpoints, n_labeled)
        Two classes only.
    alpha0s_ : ndarray of shape (n_breakpoints,)
        Two classes only.
    n_events_ : int or ndarray of shape (n_classes,)
    stop_reason_ : str or list of str
    lambda_ : float or ndarray of shape (n_classes,)
        :math:`\lambda` used by default in ``predict`` (one per class with more
        than two classes).
    selection_ : {'validation', 'cv', 'midpoint'}
        How ``lambda_`` was chosen (see ``cv``).
    selection_error_ : float, ndarray or None
        Validation (or summed cross-validation) error rate at ``lambda_``
        (per class with more than two classes; ``None`` for the midpoint rule).
    selection_curve_ : tuple of ndarray, list of them, or None
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
            Options(("knn", "median", "scale")),
        ],
        "degree": [Interval(numbers.Integral, 1, None)],
        "coef0": [Interval(numbers.Real, None, None)],
        "kernel_params": [None, "dict"],
        "n_neighbors": [Interval(numbers.Integral, 1, None)],
        "graph_weight": [Options(("auto", "binary", "heat", "local"))],
        "heat_t": [None, Interval(numbers.Real, 0, None, closed="neither")],
        "normalize_laplacian": ["boolean"],
        "laplacian_power": [Interval(numbers.Integral, 1, None), Options(("auto",))],
        "lambda_min": [None, Interval(numbers.Real, 0, None)],
        "max_events": [None, Interval(numbers.Integral, 1, None)],
        "cv": [None, Interval(numbers.Integral, 2, None)],
        "random_state": ["random_state"],
        "tol": [Interval(numbers.Real, 0, 1e-3, closed="neither")],
    }

    def __init__(
        self,
        *,
        rho: float = 1e-3,
        kernel: str | Any = "rbf",
        gamma: float | str = _defaults.GAMMA,
        degree: int = 3,
        coef0: float = 1.0,
        kernel_params: dict | None = None,
        n_neighbors: int = _defaults.N_NEIGHBORS,
        graph_weight: str = _defaults.GRAPH_WEIGHT,
        heat_t: float | None = None,
        normalize_laplacian: bool = _defaults.NORMALIZE_LAPLACIAN,
        laplacian_power: int | str = _defaults.LAPLACIAN_POWER,
        lambda_min: float | None = None,
        max_events: int | None = None,
        cv: int | None = 5,
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
        self.heat_t = heat_t
        self.normalize_laplacian = normalize_laplacian
        self.laplacian_power = laplacian_power
        self.lambda_min = lambda_min
        self.max_events = max_events
        self.cv = cv
        self.random_state = random_state
        self.tol = tol

    # --------------------------------------------------------------------- fit
    def fit(self, X: Any, y: Any, X_val: Any = None, y_val: Any = None) -> LapSVMPath:
        """Compute the whole path (one per class for more than two) and choose ``lambda_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Labeled and unlabeled training points.
        y : array-like of shape (n_samples,)
            Class labels: ints, strings or integer-valued floats, in an array, a
            list or a pandas Series (object, string, categorical or nullable
            dtype).  ``-1`` (or ``"-1"``), ``None``, ``NaN`` and ``pd.NA`` mark an
            unlabeled point, so a column of class names with blanks needs no
            recoding; the class names are kept in ``classes_`` and the
            predictions (:func:`semisvm._validation.decode_labels`).
        X_val, y_val : array-like, default=None
            Labeled validation set; ``lambda_`` then minimises its error over the
            path (exactly, see :func:`path_error_pieces`).

        Returns
        -------
        self : LapSVMPath
        """
        validate_params(self.get_params(deep=False), self._parameter_constraints)
        check_numeric_frame(X)
        y = decode_labels(y)  # None / NaN / pd.NA: unlabeled (sklearn refuses NaN)
        X, y = validate_data(
            self,
            X,
            y,
            accept_sparse="csr",
            dtype=[np.float64, np.float32],
            ensure_min_samples=2,
            y_numeric=False,
        )
        check_finite(X, "X")
        y = check_semi_supervised_targets(y)
        t = encode_targets(y)
        labeled, classes, y_enc = t.labeled, t.classes, t.y_idx
        check_n_neighbors(self.n_neighbors, X.shape[0])
        if (X_val is None) != (y_val is None):
            raise ValueError("Pass both X_val and y_val, or neither.")
        self.classes_ = classes
        lab = np.flatnonzero(labeled)

        K, g = prepare_kernel(self, X)
        K = np.asarray(K, dtype=np.float64)
        self.gamma_ = 1.0 if g is None else g
        L, _, power, dim = prepare_graph(self, X, K, g, fewest_labels=t.fewest_labels)
        self.laplacian_power_, self.intrinsic_dimension_ = power, dim
        L = L.tocsr() if hasattr(L, "tocsr") else L
        # M = J K (rho I + L K)^{-1} J^T does not depend on the labels: one LU
        # serves every one-vs-rest problem, P_c = P_1 diag(t_c)
        P1, M = translating_matrix(K, L, lab, np.ones(lab.size), self.rho)
        targets = list(one_vs_rest(classes[y_enc[lab]], classes).T)
        paths = []
        for t in targets:
            res = _solve_path(
                M,
                t,
                rho=self.rho,
                lambda_min=self.lambda_min,
                max_events=self.max_events,
                tol=self.tol,
            )
            paths.append(_replace(res, P=P1 * t[None, :], labeled=lab))
        self.X_fit_ = X
        self.paths_ = paths
        self.labeled_ = lab
        self.n_events_ = (
            paths[0].n_events
            if len(paths) == 1
            else np.array([p.n_events for p in paths])
        )
        self.stop_reason_ = (
            paths[0].reason if len(paths) == 1 else [p.reason for p in paths]
        )
        if len(paths) == 1:
            self.path_ = paths[0]
            self.lambdas_ = self.path_.lambdas
            self.alphas_ = self.path_.alphas
            self.alpha0s_ = self.path_.alpha0s
        if X_val is not None:
            self.select_lambda(X_val, y_val)
        else:
            choices = [
                self._select_cv(M, t, p) for t, p in zip(targets, paths, strict=True)
            ]
            self._store_selection(choices)
        return self

    def _store_selection(self, choices: list) -> None:
        lams, errs, curves, how = zip(*choices, strict=True)
        if len(choices) == 1:
            self.lambda_ = lams[0]
            self.selection_error_ = errs[0]
            self.selection_curve_ = curves[0]
        else:
            self.lambda_ = np.asarray(lams)
            self.selection_error_ = (
                None if errs[0] is None else np.asarray(errs, dtype=np.float64)
            )
            self.selection_curve_ = list(curves)
        self.selection_ = how[0]

    def select_lambda(self, X_val: Any, y_val: Any) -> LapSVMPath:
        """Set ``lambda_`` to the validation-error minimiser over the whole path.

        The error is piecewise constant in lambda and is computed exactly; among
        equal minima the widest interval (in log lambda) wins and ``lambda_`` is
        its geometric midpoint.  With more than two classes each one-vs-rest
        path gets its own ``lambda_`` from its own (class vs rest) error.

        Parameters
        ----------
        X_val : array-like of shape (m, n_features)
        y_val : array-like of shape (m,)

        Returns
        -------
        self : LapSVMPath
        """
        check_is_fitted(self, "paths_")
        X_val = validate_data(
            self,
            X_val,
            accept_sparse="csr",
            dtype=[np.float64, np.float32],
            reset=False,
        )
        check_finite(X_val, "X_val")
        y_val = np.asarray(y_val)
        if y_val.shape != (X_val.shape[0],):
            raise ValueError("X_val and y_val have different numbers of samples.")
        known = np.isin(y_val, self.classes_)
        if not known.all():
            raise ValueError(
                f"y_val holds labels {plain(np.unique(y_val[~known])[:5])!r} that are "
                f"not among the training classes {plain(self.classes_)!r}."
            )
        Kv = prediction_kernel(self, X_val, dtype=np.float64)
        Yv = one_vs_rest(y_val, self.classes_)
        choices = []
        for path, yv in zip(self.paths_, Yv.T, strict=True):
            hi, lo, err = path_error_pieces(path, Kv @ path.P, yv)
            lam, best = _best_piece(hi, lo, err)
            choices.append((lam, best / yv.size, (hi, lo, err), "validation"))
        self._store_selection(choices)
        return self

    def _select_cv(self, M: np.ndarray, y_l: np.ndarray, path: LapSVMPathResult):
        """``(lambda, error, curve, how)`` by cross-validation, else the midpoint rule."""
        n_min = int(min((y_l > 0).sum(), (y_l < 0).sum()))
        if self.cv is None or n_min < 2:
            lams = path.lambdas
            lam = float(np.sqrt(lams[0] * lams[-1]))
            return lam, None, None, "midpoint"
        from sklearn.model_selection import StratifiedKFold

        skf = StratifiedKFold(
            n_splits=min(self.cv, n_min),
            shuffle=True,
            random_state=resolve_seed(self.random_state),
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
        total = np.asarray(
            sum(_count_errors(res, KP, yv, mids) for res, KP, yv, _ in folds)
        )
        lam, best = _best_piece(cand_hi, cand_lo, total)
        lam = max(lam, path.lambda_end)
        return lam, best / y_l.size, (cand_hi, cand_lo, total), "cv"

    # ----------------------------------------------------------------- predict
    def decision_function(self, X: Any, lam: Any = None) -> np.ndarray:
        r"""Decision values :math:`f_\lambda(x)` at one or several :math:`\lambda`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (m, n_features)
        lam : float or array-like of shape (k,), default=None
            Any :math:`\lambda > 0` on the path (default ``lambda_``).  With
            more than two classes, a single float (or ``None``: each class at
            its own ``lambda_``).

        Returns
        -------
        ndarray
            Two classes: shape (m,) for a scalar ``lam``, else (m, k); positive
            values predict ``classes_[1]``.  More classes: (m, n_classes)
            one-vs-rest scores.
        """
        check_is_fitted(self, "paths_")
        check_numeric_frame(X)
        X = validate_data(
            self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False
        )
        check_finite(X, "X")
        Kt = prediction_kernel(self, X, dtype=np.float64)
        if len(self.paths_) == 1:
            lam = self.lambda_ if lam is None else lam
            return self.path_.decision_function(Kt, lam)
        if lam is None:
            lams = self.lambda_
        elif np.ndim(lam) == 0:
            lams = np.full(len(self.paths_), float(lam))
        else:
            raise ValueError(
                "With more than two classes, lam must be a single float or None "
                f"(each class at its own lambda_); got an array of shape {np.shape(lam)}."
            )
        return np.column_stack(
            [
                p.decision_function(Kt, float(lm))
                for p, lm in zip(self.paths_, lams, strict=True)
            ]
        )

    def predict(self, X: Any, lam: Any = None) -> np.ndarray:
        """Class labels at ``lam`` (default ``lambda_``).

        Returns
        -------
        ndarray of shape (m,) for a scalar ``lam``, else (m, k)
        """
        f = self.decision_function(X, lam)
        if len(self.paths_) == 1:
            return self.classes_[(f > 0).astype(int)]
        return self.classes_[np.argmax(f, axis=1)]

    def __sklearn_tags__(self):  # noqa: D105
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


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

    check_is_fitted(estimator, "paths_")
    if len(estimator.paths_) != 1:
        raise ValueError(
            "plot_path draws a two-class path; this estimator has "
            f"{len(estimator.paths_)} one-vs-rest paths. Fit it on two classes."
        )
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
    pieces = [np.geomspace(top, lams[0], points_per_segment)]
    for j in range(lams.size - 1):
        pieces.append(np.linspace(lams[j], lams[j + 1], points_per_segment))
    if bottom < lams[-1]:
        pieces.append(np.geomspace(lams[-1], bottom, points_per_segment))
    grid = np.unique(np.concatenate(pieces))
    alpha, _ = path.coefficients(grid)
    ax_c.plot(grid, alpha, lw=1)
    ax_c.set_xscale("log")
    ax_c.set_ylabel(r"$\alpha_i(\lambda)$")
    ax_c.set_title(f"LapSVM path: {path.n_events} events, stop: {path.reason}")
    for lam in lams:
        ax_c.axvline(lam, color="0.8", lw=0.5, ls=":")
    ax_c.axvline(estimator.lambda_, color="k", lw=1, ls="--")
    if has_val and ax_e is not None:
        X_val = validate_data(
            estimator,
            X_val,
            accept_sparse="csr",
            dtype=[np.float64, np.float32],
            reset=False,
        )
        yv = encode_binary(y_val, estimator.classes_, "y_val")
        KP = prediction_kernel(estimator, X_val, dtype=np.float64) @ path.P
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
