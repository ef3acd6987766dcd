r"""Laplacian SVM as an ordinary SVC on the semi-supervised (deformed) kernel."""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.svm import SVC
from sklearn.utils.validation import check_is_fitted, validate_data

from .. import _defaults
from .._validation import (
    Interval,
    check_finite,
    check_numeric_frame,
    check_semi_supervised_targets,
    decode_labels,
    validate_params,
)
from ._deformed import SemiSupervisedKernel
from ._problem import encode_targets

__all__ = ["LapSVC"]


class LapSVC(ClassifierMixin, BaseEstimator):
    r"""Laplacian SVM = scikit-learn's SVC on the semi-supervised kernel.

    Fits a :class:`~semisvm.SemiSupervisedKernel` on all points of ``X``
    (labeled and unlabeled) and then a LIBSVM ``SVC(kernel="precomputed",
    C=1/(2 gamma_a_))`` on the deformed Gram matrix of the labeled points, with
    ``gamma_a_`` the raw weight that ``gamma_a`` means under ``regularization``.
    For binary problems this is exactly the Laplacian SVM

    .. math::

        \min_{f = g + b}\ \sum_{i \le l} \max(0, 1 - y_i f(x_i))
        + \gamma_A \|g\|_K^2 + \gamma_I\, \mathbf g^\top L \mathbf g,

    the problem :func:`semisvm.solvers.lapsvm_dual` solves through its dual (see
    the Notes of :class:`~semisvm.SemiSupervisedKernel` for the
    derivation of ``C = 1/(2 gamma_a_)`` and ``c = gamma_a_ / gamma_i_``), and
    the model of ``LapSVM(solver='dual', loss='hinge')`` with the same
    ``gamma_a``, ``gamma_i`` and graph (and ``class_balance=None``).

    Parameters
    ----------
    kernel : {'rbf', 'poly', 'linear'} or callable, default='rbf'
        Base kernel.
    gamma : float or {'knn', 'median', 'scale'}, default='knn'
        Base-kernel parameter; ``rbf`` is :math:`\exp(-\gamma\|x-z\|^2)`.
    degree : int, default=3
    coef0 : float, default=1.0
    kernel_params : dict, default=None
    n_neighbors : int, default=10
        Must be smaller than ``n_samples``.
        Neighbours of the symmetric kNN graph over all points.
    graph_weight : {'auto', 'binary', 'heat', 'local'}, default='auto'
    heat_t : float, default=None
    normalize_laplacian : bool, default=False
    laplacian_power : int or 'auto', default='auto'
        Integer power p of the Laplacian, :math:`L^p`; ``'auto'`` as in
        :class:`~semisvm.LapSVM` without the labels, which this kernel does not
        see: 3 when the intrinsic dimension is at least 16, else 1
        (:func:`semisvm.graph.auto_laplacian_power`); the value used is
        ``laplacian_power_``.
    gamma_a : float, default=1e-6
        Ambient regularisation (> 0), read as ``regularization`` says; the SVC
        gets ``C = 1 / (2 gamma_a_)``.  The library-wide default
        ``semisvm._defaults.GAMMA_A``, meaning what it means in
        :class:`~semisvm.LapSVM`.
    gamma_i : float, default=1.0
        Intrinsic regularisation (>= 0), read as ``regularization`` says; ``0``
        gives a plain SVC trained on the labeled points only.  The library-wide
        default ``semisvm._defaults.GAMMA_I``.
    regularization : {'normalized', 'paper'}, default='normalized'
        As for :class:`~semisvm.LapSVM` (``SolverOptions.regularization``):
        ``'normalized'`` reads ``gamma_a``, ``gamma_i`` as :math:`\lambda_A,
        \lambda_I` of the objective with the loss averaged over the l labeled
        points and the graph term averaged over the n points and divided by the
        mean degree, i.e. :math:`\gamma_A = l\lambda_A`, :math:`\gamma_I =
        l\lambda_I\rho^p/(n\bar d^{\,p})`; ``'paper'`` reads them as the raw
        :math:`\gamma_A, \gamma_I` of the objective above (the reading of
        version 0.1.0).
    tol : float, default=1e-3
        LIBSVM stopping tolerance.
    max_iter : int, default=-1
        LIBSVM iteration cap (-1: none).

    Attributes
    ----------
    kernel_ : SemiSupervisedKernel
        The fitted deformed kernel.
    svc_ : sklearn.svm.SVC
        The SVC trained on the labeled points with the precomputed kernel.
    classes_ : ndarray of shape (n_classes,)
    labeled_indices_ : ndarray of int
        Rows of the training ``X`` that were labeled.
    transduction_ : ndarray of shape (n_samples,)
        Labels of the training points: the given label for labeled points, the
        prediction for unlabeled ones.
    n_iter_ : ndarray
        LIBSVM iterations (``svc_.n_iter_``).
    gamma_a_, gamma_i_ : float
        The raw weights :math:`\gamma_A, \gamma_I` of the objective above.
    n_features_in_ : int

    See Also
    --------
    semisvm.SemiSupervisedKernel : the kernel alone, for other machines.
    semisvm.solvers.lapsvm_dual : dual LapSVM on arrays.

    Notes
    -----
    More than two classes are handled as in SVC (one-vs-one), all sharing the
    same deformed kernel; the dual LapSVM of :func:`semisvm.solvers.lapsvm_dual`
    uses one-vs-rest instead, so only binary models coincide exactly.

    References
    ----------
    V. Sindhwani, P. Niyogi, M. Belkin. Beyond the point cloud: from transductive
    to semi-supervised learning. ICML 2005.

    M. Belkin, P. Niyogi, V. Sindhwani. Manifold regularization. JMLR 7, 2006.

    Examples
    --------
    >>> import numpy as np
    >>> from semisvm.datasets import make_two_moons
    >>> from semisvm.models._ssk import LapSVC
    >>> X, y, y_true = make_two_moons(200, noise=0.05, random_state=0)
    >>> clf = LapSVC(gamma=2.0, n_neighbors=6, normalize_laplacian=False,
    ...              gamma_a=0.01, gamma_i=10.0, regularization="paper").fit(X, y)
    >>> float(np.mean(clf.transduction_ == y_true))
    1.0
    """

    _parameter_constraints: dict = {
        **SemiSupervisedKernel._parameter_constraints,
        "tol": [Interval(numbers.Real, 0.0, None, closed="neither")],
        "max_iter": [Interval(numbers.Integral, -1, None, closed="left")],
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
        tol: float = 1e-3,
        max_iter: int = -1,
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
        self.tol = tol
        self.max_iter = max_iter

    def fit(self, X: Any, y: Any, *, adjacency: Any = None) -> LapSVC:
        """Fit the deformed kernel on all of ``X`` and the SVC on the labeled part.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Labeled and unlabeled training points.
        y : array-like of shape (n_samples,)
            Class labels: ints, strings or integer-valued floats, in an array, a
            list or a pandas Series (object, string, categorical or nullable
            dtype).  ``-1`` (or ``"-1"``), ``None``, ``NaN`` and ``pd.NA`` mark an
            unlabeled point, so a column of class names with blanks needs no
            recoding; the class names are kept in ``classes_`` and the
            predictions (:func:`semisvm._validation.decode_labels`).
        adjacency : {array-like, sparse matrix} of shape (n_samples, n_samples), \
                default=None
            A graph to use instead of the kNN graph.

        Returns
        -------
        self : LapSVC
        """
        validate_params(self.get_params(deep=False), self._parameter_constraints)
        if isinstance(self.kernel, str):
            check_numeric_frame(X)
            if y is not None:  # None / NaN / pd.NA: unlabeled (sklearn refuses NaN)
                y = decode_labels(y)
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
        elif y is None:
            raise ValueError(
                "LapSVC requires y to be passed, but the target y is None."
            )
        y = check_semi_supervised_targets(y)
        if len(y) != X.shape[0]:
            raise ValueError(f"y has {len(y)} entries but X has {X.shape[0]} rows.")
        t = encode_targets(y)
        labeled, classes, y_enc = t.labeled, t.classes, t.y_idx
        kernel_params = {
            k: getattr(self, k) for k in SemiSupervisedKernel._parameter_constraints
        }
        ssk = SemiSupervisedKernel(**kernel_params).fit(X, adjacency=adjacency)
        lab = np.flatnonzero(labeled)
        K_ll = ssk.gram_fit(lab)
        # the raw weights for l labeled points (their ratio is ssk.c_)
        self.gamma_a_, self.gamma_i_ = ssk._raw_weights(
            ssk._laplacian_operator,
            X.shape[0],
            ssk.graph_scale_,
            weight_sum=float(lab.size),
        )
        svc = SVC(
            kernel="precomputed",
            C=1.0 / (2.0 * self.gamma_a_),
            tol=self.tol,
            max_iter=self.max_iter,
        )
        svc.fit(K_ll, y_enc[lab])

        self.kernel_ = ssk
        self.svc_ = svc
        self.classes_ = classes
        self.labeled_indices_ = lab
        if not isinstance(self.kernel, str):
            self.n_features_in_ = ssk.n_features_in_
        self.n_iter_ = svc.n_iter_
        pred = np.asarray(svc.predict(ssk.gram_fit(None, lab)), dtype=np.intp)
        pred[lab] = y_enc[lab]
        self.transduction_ = classes[pred]
        return self

    def _gram(self, X: Any) -> np.ndarray:
        check_is_fitted(self)
        if isinstance(self.kernel, str):
            check_numeric_frame(X)
            X = validate_data(
                self,
                X,
                accept_sparse="csr",
                dtype=[np.float64, np.float32],
                reset=False,
            )
            check_finite(X, "X")
        return self.kernel_.gram(X, self.kernel_.X_fit_[self.labeled_indices_])

    def _predict_enc(self, X: Any) -> np.ndarray:
        return np.asarray(self.svc_.predict(self._gram(X)), dtype=np.intp)

    def decision_function(self, X: Any) -> np.ndarray:
        """Signed distance to the separating surface(s).

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)

        Returns
        -------
        d : ndarray of shape (n_queries,) or (n_queries, n_classes)
            Positive for ``classes_[1]`` in the binary case; SVC's one-vs-rest
            shaped scores otherwise.
        """
        check_is_fitted(self)
        return self.svc_.decision_function(self._gram(X))

    def predict(self, X: Any) -> np.ndarray:
        """Class labels of the rows of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)

        Returns
        -------
        y : ndarray of shape (n_queries,)
        """
        check_is_fitted(self)
        return self.classes_[self._predict_enc(X)]

    def __sklearn_tags__(self):  # noqa: D105
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
