"""Shared machinery of the manifold-regularized estimators (LapSVM, LapRLS).

Parameters, numerics and fitted state are kept apart: ``__init__`` stores its
arguments; ``fit`` validates them and runs the fit path of
:mod:`semisvm.models._problem`, :mod:`~semisvm.models._model` and
:mod:`~semisvm.models._graphwidth` (plain functions over the data and a
:class:`~semisvm.models._params.FitParams`), and only then writes the ``*_``
attributes from the :class:`~semisvm.models._model.FittedModel` it returns.
"""

from __future__ import annotations

import numbers
import time
import warnings
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import (
    Interval,
    Options,
    check_finite,
    check_numeric_frame,
    decode_labels,
    labeled_mask,
    validate_params,
)
from ..graph import resolve_graph_weight
from ..kernels._distributed import (
    check_distributed_input,
    distributed_kernel_dot,
    is_distributed_array,
)
from ._options import SolverOptions, check_options, resolved_options
from ._problem import (
    encode_targets,
    fitted_kernel_params,
    prediction_kernel,
)
from ._scale import (
    decision_in_blocks,
)

__all__ = [
    "ManifoldClassifierMixin",
    "OperatorCache",
    "KERNEL_CONSTRAINTS",
]

KERNEL_CONSTRAINTS: dict[str, list] = {
    "kernel": [Options(("rbf", "poly", "linear", "precomputed")), "callable"],
    "gamma": [
        Interval(numbers.Real, 0, None, closed="neither"),
        Options(("knn", "median", "scale")),
    ],
    "degree": [Interval(numbers.Integral, 1, None)],
    "coef0": [Interval(numbers.Real, None, None)],
    "kernel_params": [None, "dict"],
    "n_neighbors": [Interval(numbers.Integral, 1, None)],
    "graph_weight": [Options(("auto", "binary", "heat", "local"))],
    "normalize_laplacian": ["boolean"],
    "laplacian_power": [Interval(numbers.Integral, 1, None), Options(("auto",))],
}


#: parameters that determine K (first group) and the Laplacian (second group)
_KERNEL_PARAMS = ("kernel", "gamma", "degree", "coef0", "kernel_params", "n_neighbors")
_GRAPH_PARAMS = (
    "graph_weight",
    "heat_t",
    "normalize_laplacian",
    "laplacian_power",
    "graph_method",
    "graph_pca",
)


class OperatorCache:
    r"""K and L of one training set, shared by many fits of the fitting core.

    Many fits on the same points with different labels or weights (the folds
    and the :math:`(\gamma_A, \gamma_I)` grid of
    :class:`~semisvm.model_selection.LapSVMCV`) need the same kernel and the
    same graph: neither depends on ``y``, ``gamma_a`` or ``gamma_i``.  Pass
    the same cache to each fit, ``est.fit(X, y, operator_cache=cache)``; a fit
    then reuses the operators that an earlier fit on the same ``X`` object with
    the same kernel and graph parameters built (dense operators, no user
    ``adjacency``), and computes exactly what it would compute otherwise.  The arrays are shared
    read-only.  With ``laplacian_power="auto"`` the power depends on the labels
    too (:func:`~semisvm.graph.auto_laplacian_power`: whether every class has
    :data:`~semisvm.graph._dimension.MID_LABELS` of them): graph entries are
    keyed by the power they resolved, and a fit is served the entry of the
    power it would resolve.

    Attributes
    ----------
    hits, misses : int
        Lookups answered from the cache and operators built.
    """

    def __init__(self, labeled: Any = None) -> None:
        self._X: Any = None
        self._entries: dict = {}
        self._factors: list = []
        self.labeled = None if labeled is None else np.asarray(labeled)
        self.hits = 0
        self.misses = 0

    def factors(self, K: Any, L: Any) -> Any:
        """The shared factorizations of a cached (K, L) pair
        (:class:`~semisvm.models._factorized.RatioFactors`), or None when no
        labeled superset was given or (K, L) is not from this cache."""
        if self.labeled is None or L is None or not isinstance(K, np.ndarray):
            return None
        for K2, L2, F in self._factors:
            if K2 is K and L2 is L:
                return F
        if not any(v[0] is K and v[1] is L for v in self._entries.values()):
            return None
        from ._factorized import RatioFactors

        F = RatioFactors(K, L, self.labeled)
        self._factors.append((K, L, F))
        return F

    @property
    def n_factorizations(self) -> int:
        """LU factorizations of :math:`I + rLK` computed so far."""
        return sum(F.n_factorizations for _, _, F in self._factors)

    @staticmethod
    def _keys(est: Any) -> tuple[tuple, tuple]:
        kk = tuple(repr(getattr(est, p, None)) for p in _KERNEL_PARAMS)
        opts = resolved_options(est).get_params()
        graph = {**opts, **est.get_params(deep=False)}
        return kk, tuple(repr(graph.get(p)) for p in _GRAPH_PARAMS)

    def _power(self, est: Any, kk: tuple, gk: tuple, fewest: int | None) -> Any:
        """The power a fit of ``est`` would resolve: its number, or ``"auto"``'s
        rule on the intrinsic dimension an entry of the same graph parameters
        measured (it does not depend on the labels) and the fit's ``fewest``
        labels per class; None when no such entry exists."""
        from ..graph import auto_laplacian_power

        if not isinstance(est.laplacian_power, str):
            return int(est.laplacian_power)
        for (k2, g2), val in self._entries.items():
            if k2 == kk and g2 is not None and g2[:-1] == gk:
                return auto_laplacian_power(val[6], fewest)  # nan: 1
        return None

    def get(
        self, est: Any, X: Any, need_graph: bool, fewest: int | None = None
    ) -> tuple | None:
        """``(K, L, gamma_, graph_scale, graph_weight, laplacian_power_,
        intrinsic_dimension_)`` or None (``fewest``: the fit's fewest labels
        per class, which ``laplacian_power="auto"`` reads)."""
        if X is not self._X:
            self.misses += 1
            return None
        kk, gk = self._keys(est)
        hit = None
        if need_graph:
            power = self._power(est, kk, gk, fewest)
            if power is not None:
                hit = self._entries.get((kk, (*gk, power)))
        else:
            hit = self._entries.get((kk, None))
        if hit is None and not need_graph:  # K of a graph entry, without its graph
            for (k2, g2), val in self._entries.items():
                if k2 == kk and g2 is not None:
                    weight = resolve_graph_weight(est.graph_weight, 1.0)
                    hit = (val[0], None, val[2], 1.0, weight, 1, float("nan"))
                    break
        if hit is None:
            self.misses += 1
        else:
            self.hits += 1
        return hit

    def put(self, est: Any, X: Any, need_graph: bool, value: tuple) -> None:
        """Store the operators of ``est`` on ``X`` (one training set per cache);
        a graph entry is keyed by its resolved power too (``value[5]``)."""
        if X is not self._X:
            self._X = X
            self._entries = {}
        K = value[0]
        if isinstance(K, np.ndarray):
            K.flags.writeable = False  # shared: no solver may write into it
        kk, gk = self._keys(est)
        self._entries[(kk, (*gk, int(value[5])) if need_graph else None)] = value


class ManifoldClassifierMixin(ClassifierMixin, BaseEstimator):
    """Base class: validation, kernel/graph building, one-vs-rest targets, prediction.

    Subclasses set ``_parameter_constraints`` and implement ``_solve(K, L, Y, ...)``.
    """

    _parameter_constraints: dict[str, list] = {
        **KERNEL_CONSTRAINTS,
        "gamma_a": [
            Interval(numbers.Real, 0, None, closed="neither"),
            Options(("auto",)),
        ],
        "gamma_i": [Interval(numbers.Real, 0, None, closed="left"), Options(("auto",))],
        "verbose": [Interval(numbers.Integral, 0, None), "boolean"],
        "class_weight": [None, Options(("balanced",)), "dict"],
        # the expert options (their values: OPTION_CONSTRAINTS, checked in fit)
        "options": [None, SolverOptions],
    }

    def set_params(self, **params: Any) -> Any:
        """Set the parameters; ``options__name=value`` sets one option.

        With ``options=None`` (every default), ``options__name=value`` first
        gives the estimator a new :class:`~semisvm.SolverOptions`, so that
        scikit-learn's ``GridSearchCV`` can search an option on a default
        estimator.

        Parameters
        ----------
        **params
            Estimator parameters, and ``options__<option>`` for the options.

        Returns
        -------
        self
        """
        if any(k.startswith("options__") for k in params) and (
            params.get("options", getattr(self, "options", None)) is None
        ):
            params = {**params, "options": SolverOptions()}
        return super().set_params(**params)

    # ------------------------------------------------------------------ fit
    def _validate_fit_input(
        self, X: Any, y: Any, X_val: Any = None
    ) -> tuple[Any, np.ndarray, Any]:
        """The parameters, the options, X, y and X_val checked; y's labels decoded."""
        validate_params(self.get_params(deep=False), self._parameter_constraints)
        check_options(self)
        if is_distributed_array(X):
            X, y = check_distributed_input(X, y, kernel=self.kernel)
            self.n_features_in_ = X.shape[1]
            encode_targets(y)
            return X, y, X_val
        check_numeric_frame(X)
        # None / NaN / pd.NA mark unlabeled rows (validate_data refuses NaN)
        y = decode_labels(y)
        X, y = validate_data(
            self,
            X,
            y,
            accept_sparse="csr",
            dtype=[np.float64, np.float32],
            ensure_min_samples=2,
            ensure_all_finite=False,
            y_numeric=False,
        )
        check_finite(X, "X")
        encode_targets(y)  # validates the labels (unlabeled rows excluded)
        if X_val is not None:
            X_val = self._check_new_X(X_val, "X_val")
        return X, np.asarray(y), X_val

    def _check_new_X(self, X: Any, name: str = "X") -> Any:
        """Points to evaluate: as many features as the training points, finite."""
        X = validate_data(
            self,
            X,
            accept_sparse="csr",
            dtype=[np.float64, np.float32],
            reset=False,
            ensure_all_finite=False,
        )
        check_finite(X, name)
        return X

    #: fitted attributes only some fits set (removed when a refit does not)
    _OPTIONAL_ATTRIBUTES = (
        "coarse_start_",
        "graph_method_",
        "n_components_",
        "cluster_plan_",
        "block_decision_",
        "operator_selection_",
    )

    def _store(self, model: Any, t_fit: float, cluster_plan: dict | None = None) -> Any:
        """Set the fitted attributes of ``model`` (a
        :class:`~semisvm.models._model.FittedModel`) and emit its warnings."""
        for name in self._OPTIONAL_ATTRIBUTES:
            self.__dict__.pop(name, None)
        for name, value in model.attributes.items():
            setattr(self, name, value)
        if cluster_plan is not None:
            self.cluster_plan_ = cluster_plan
        times: dict[str, float] = dict(model.attributes["fit_times_"])
        # the entries sum to the whole fit: validation, targets, weights, the
        # output adaptation are 'other'
        total = time.perf_counter() - t_fit
        times["other"] = max(total - sum(times.values()), 0.0) + times.get("other", 0.0)
        self.fit_times_ = times
        for category, message in model.warnings:
            warnings.warn(message, category, stacklevel=3)
        return self

    def _labels_from_scores(self, F: np.ndarray) -> np.ndarray:
        if F.shape[1] == 1:
            return self.classes_[(F[:, 0] > 0).astype(int)]
        return self.classes_[np.argmax(F, axis=1)]

    # ---------------------------------------------------------- prediction
    def decision_function(self, X: Any) -> np.ndarray:
        """Values of :math:`f(x) = \\sum_i \\alpha_i k(x_i, x) + b`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            With ``kernel='precomputed'``: the (n_samples, n_train) test kernel.

        Returns
        -------
        ndarray of shape (n_samples,) for two classes (positive means
        ``classes_[1]``), else (n_samples, n_classes) one-vs-rest scores.
        """
        F = self._batched_decision(X)
        return F[:, 0] if F.shape[1] == 1 else F

    def _batched_decision(self, X: Any, validate: bool = True) -> np.ndarray:
        """Scores in row blocks of X (bounded memory; same values as one block)."""
        if validate:
            check_is_fitted(self, "dual_coef_")
            check_numeric_frame(X)
            X = self._check_new_X(X)
        if self.kernel == "precomputed" and X.shape[1] != self.dual_coef_.shape[0]:
            raise ValueError(
                "With kernel='precomputed', X must be the kernel between the test "
                f"and the {self.dual_coef_.shape[0]} training points; got shape "
                f"{X.shape}."
            )
        block_decision = getattr(self, "block_decision_", None)
        if block_decision is not None:  # kernel_approximation='blocks'
            return block_decision(X) + self.intercept_
        centers = getattr(self, "landmarks_", None)
        if centers is None:
            centers = self.X_fit_
        if is_distributed_array(centers):
            # training points on the cluster: each worker multiplies its own columns
            return (
                distributed_kernel_dot(
                    X, centers, self.dual_coef_, **fitted_kernel_params(self)
                )
                + self.intercept_
            )

        return decision_in_blocks(
            X,
            centers,
            self.dual_coef_,
            self.intercept_,
            lambda A, B: prediction_kernel(self, A, B),
            precomputed=self.kernel == "precomputed",
        )

    def predict(self, X: Any) -> np.ndarray:
        """Class labels: sign of f for two classes, the largest one-vs-rest score else."""
        F = self.decision_function(X)
        if F.ndim == 1:
            F = F[:, None]
        return self._labels_from_scores(F)

    def predict_log_proba(self, X: Any) -> np.ndarray:
        r"""Log of :meth:`predict_proba` (computed stably).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        from ._adaptive import log_proba_from_scores

        F = self.decision_function(X)
        F = F[:, None] if F.ndim == 1 else F
        return log_proba_from_scores(F, self.proba_slope_)

    def predict_proba(self, X: Any) -> np.ndarray:
        r"""Class probabilities from the outputs: a documented mapping, not a model.

        :math:`\sigma(a f(x))` for two classes (column 1 is ``classes_[1]``),
        :math:`\mathrm{softmax}_c(a f_c(x))` over the one-vs-rest outputs otherwise,
        with one slope :math:`a > 0` (``proba_slope_``) fitted by maximum likelihood
        on the labeled training points against Platt's smoothed targets (see
        :mod:`semisvm.models._adaptive`).  The most probable class is the one
        :meth:`predict` returns.  With few labels treat the values as scores
        calibrated on the labeled points only; for probabilities calibrated on
        held-out labeled rows use
        :class:`semisvm.model_selection.LabeledCalibratedClassifierCV` (scikit-learn's
        ``CalibratedClassifierCV`` would treat the ``-1`` rows as a class).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Rows sum to 1.
        """
        P = np.exp(self.predict_log_proba(X))
        return P / P.sum(axis=1, keepdims=True)

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Mean accuracy on the labeled rows of ``(X, y)`` (``y == -1`` rows ignored).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            True labels; ``-1``, ``None``, ``NaN`` and ``pd.NA`` mark unlabeled
            rows, which are not scored.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        float
            Accuracy over the rows with ``y != -1``.

        Raises
        ------
        ValueError
            If every row of ``y`` is ``-1`` (nothing to score).
        """
        from sklearn.metrics import accuracy_score
        from sklearn.utils import _safe_indexing

        mask = labeled_mask(y)
        if not mask.any():
            raise ValueError(
                "score: y has no labeled row (every y is -1), so there is nothing to "
                "score; pass the true labels of the rows to evaluate."
            )
        if mask.all():
            return float(
                accuracy_score(y, self.predict(X), sample_weight=sample_weight)
            )
        rows = np.flatnonzero(mask)
        sw = None if sample_weight is None else np.asarray(sample_weight)[rows]
        return float(
            accuracy_score(
                np.asarray(y)[rows],
                self.predict(_safe_indexing(X, rows)),
                sample_weight=sw,
            )
        )

    def __sklearn_tags__(self):  # noqa: D105
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags
