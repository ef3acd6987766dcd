"""Exact transductive SVM estimator (branch and bound or random sampling)."""

from __future__ import annotations

import numbers
import time
import warnings

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted, validate_data

from .. import _defaults
from .._validation import (
    Interval,
    Options,
    check_finite,
    check_semi_supervised_targets,
    decode_labels,
    plain,
    resolve_seed,
    validate_params,
)
from ..solvers._tsvm import tsvm_branch_and_bound, tsvm_randomized
from ._problem import encode_targets, prediction_kernel, prepare_kernel

__all__ = ["ExactTSVM"]


class ExactTSVM(ClassifierMixin, BaseEstimator):
    r"""Exact L2-loss transductive SVM (global optimum with a certificate).

    Finds the labeling of the unlabeled points and the kernel machine that
    jointly minimise

    .. math::

        \tfrac12\|f\|_{\mathcal H}^2 + C\sum_{i\in L}\max(0, 1 - y_i f(x_i))^2
        + C^\star\sum_{j\in U}\max(0, 1 - y_j f(x_j))^2,
        \qquad f(x) = \sum_i \alpha_i k(x_i, x) + b,

    over :math:`y_U \in \{\pm1\}^u` with ``round(positive_fraction * u)``
    positives in ``U`` (``+- floor(balance_tol * u)``), either by branch and bound
    over the whole set or by Clarkson-style random sampling over branch and bound.
    Every fit returns a labeling that meets the balance constraint, its
    objective, a proven lower bound of the optimum (``lower_bound_``) and the
    relative gap between them (``gap_``); ``is_global_optimum_`` is ``True``
    only when the gap is closed by a proof (see Notes).  The search is an
    exponential one: the default budget (``time_limit=60`` seconds) stops it
    with the best labeling found and a ``ConvergenceWarning`` that reports the
    gap; ``verbose=1`` prints a solver log.

    More than two classes: one-vs-rest (one TSVM per class, its labeled
    fraction as ``positive_fraction``, the time budget shared), predictions and
    ``transduction_`` by the largest decision value; ``is_global_optimum_``
    holds when every binary problem is certified (the one-vs-rest combination
    itself is not a joint optimum of any multi-class objective).

    Inputs are converted to float64 (exact methods need the precision: the
    search compares objectives of neighbouring labelings).

    Parameters
    ----------
    method : {'randomized', 'branch_and_bound'}, default='randomized'
        ``'branch_and_bound'``: depth-first search over all balanced labelings
        of ``U`` (exponential in ``u`` in the worst case).  ``'randomized'``:
        branch and bound on samples of ``U`` (the incumbent's margin points
        plus points drawn at random, Clarkson's reweighting of violators),
        proofs by an exactly solved relaxation of a sample and, if needed, a
        branch and bound over the whole set started from the incumbent (see
        :func:`semisvm.solvers._tsvm.tsvm_randomized`).
    C : float, default=1.0
        Cost of the labeled squared hinge losses.
    C_star : float, default=1.0
        Cost of the unlabeled squared hinge losses.
    kernel : {'rbf', 'poly', 'linear'} or callable, default='rbf'
        Kernel (see :func:`semisvm.kernels.kernel_matrix`).
    gamma : float or {'knn', 'median', 'scale'}, default='knn'
        Kernel coefficient (``rbf``: :math:`\exp(-\gamma\|x-z\|^2)`); the
        rules are the library-wide ones (:func:`semisvm.kernels.resolve_gamma`,
        ``'knn'`` with the shared 10 neighbours), and the default is the shared
        ``semisvm._defaults.GAMMA`` of every estimator.
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=1.0
        Constant of the polynomial kernel.
    kernel_params : dict or None, default=None
        Extra arguments of a callable kernel.
    positive_fraction : float in (0, 1) or None, default=None
        Fraction of ``classes_[1]`` among the unlabeled points; ``None`` uses
        the labeled fraction.
    balance_tol : float in [0, 1), default=0.0
        Allowed deviation of the positive count, as a fraction of ``u``.
    sample_size : int or None, default=None
        Size of each random sample of ``U`` (``'randomized'``); ``None`` means
        ``min(u, 50)``.  Must not exceed the number of unlabeled points.
    max_iter : int, default=100
        Maximum number of sampling rounds (``'randomized'``).
    max_nodes : int or None, default=None
        Total branch-and-bound node budget over all rounds (per one-vs-rest
        problem with more than two classes).
    time_limit : float or None, default=60.0
        Wall-clock limit of the search in seconds (``None``: no limit).  When a
        limit stops the search, the best labeling found is kept,
        ``is_global_optimum_`` is ``False``, ``gap_`` says how far from
        optimal it can be, and a ``ConvergenceWarning`` is issued.
    random_state : int, RandomState instance or None, default=None
        Seeds the sampling; a fixed seed gives a reproducible fit.
    verbose : int, default=0
        ``1`` prints a solver log like a MIP solver's: time, rounds, nodes,
        incumbent objective, lower bound, relative gap (one line per sampling
        round; for the branch and bound, each new incumbent and every 5 s);
        ``2`` also logs the inner branch and bounds.
    n_jobs : int, default=None
        With more than two classes, the one-vs-rest problems run in parallel
        through joblib (local processes, or a Dask cluster under
        ``joblib.parallel_backend("dask")``), each with the whole ``time_limit``;
        ``None`` solves them one after the other and shares ``time_limit`` among
        them.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels; with two classes ``classes_[1]`` is the positive class.
    transduction_ : ndarray of shape (n_samples,)
        Label of every training point (the given labels on ``L``, the optimal
        labeling on ``U``).
    objective_ : float or ndarray of shape (n_classes,)
        TSVM objective of the returned labeling on the whole training set (per
        one-vs-rest problem with more than two classes).
    lower_bound_ : float or ndarray of shape (n_classes,)
        Proven lower bound of the optimal objective.
    gap_ : float
        Relative gap ``(objective_ - lower_bound_) / objective_`` (the largest
        over the one-vs-rest problems); 0 with a certificate.
    is_global_optimum_ : bool
        ``True`` only with a proof: the branch and bound finished, or (for
        ``'randomized'``) a proven lower bound reached the returned objective.
    termination_condition_ : str or list of str
        ``'complete'``, ``'certificate'``, ``'max_iter'``, ``'max_nodes'`` or
        ``'time_limit'``.
    n_rounds_ : int
        Sampling rounds (1 for ``'branch_and_bound'``).
    n_nodes_ : int
        Branch-and-bound nodes explored (summed over rounds).
    n_iter_ : int
        Same as ``n_rounds_``.
    weights_ : ndarray of shape (n_unlabeled,) or None
        Final sampling weights of the unlabeled points (``'randomized'``).
    history_ : list of dict
        Per-round records (``'randomized'``) or incumbent improvements.
    dual_coef_ : ndarray of shape (n_SV,) or (n_SV, n_classes)
        Coefficients :math:`\alpha_i` of the support vectors.
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors in the training set.
    support_vectors_ : ndarray of shape (n_SV, n_features)
    intercept_ : float or ndarray of shape (n_classes,)
        Bias :math:`b`.
    gamma_ : float or None
        Kernel coefficient used (``None`` for the linear and callable kernels).
    fit_time_ : float
        Seconds spent in the search (kernel matrix excluded).

    See Also
    --------
    semisvm.solvers._tsvm.tsvm_branch_and_bound : the search over arrays.
    semisvm.solvers._tsvm.tsvm_randomized : the random-sampling method.

    Notes
    -----
    Branch and bound (Chapelle, Sindhwani & Keerthi, 2006): depth-first over
    partial labelings of ``U``, lower bound = L2-SVM objective on the points
    labeled so far (raised by a dual bound on adding each remaining point and
    by a balance bound on labeling all of them), balance counts enforced,
    inner SVMs solved by warm-started primal Newton (Chapelle, 2007).  The
    incumbent starts from graph hints (label propagation on kNN graphs in the
    kernel's metric, improved by alternating minimisation), and the search
    branches on the point whose weaker child has the largest bound (the rule
    that proves an incumbent fastest).  See ``docs/tsvm.rst``.

    Random sampling (Esposito & Martín's STSVM, after Clarkson's Basis2): the
    TSVM solution depends only on the points inside its margin, so samples
    ``R`` are solved exactly and the points of ``U`` outside ``R`` that fall
    inside the margin (violators) get their sampling weight doubled.  The
    balance constraint is not local, so "a sample without violators" alone
    proves nothing; the certificate rests on a lower bound: the sample problem
    with every count of positives in ``R`` that a balanced labeling of ``U``
    allows is a relaxation of the whole problem, so its exact optimum bounds
    the optimum from below; when it reaches the returned objective, that
    labeling is optimal.  Failing that, a branch and bound over the whole set
    started from the incumbent gives the proof or the gap.  See
    :func:`~semisvm.solvers._tsvm.tsvm_randomized`.

    References
    ----------
    O. Chapelle, V. Sindhwani, S. S. Keerthi, "Branch and bound for
    semi-supervised support vector machines", NIPS 19, 2006.

    G. Esposito, M. Martín, "A randomized algorithm for the exact solution of
    transductive support vector machines", Applied Artificial Intelligence, 2015.

    O. Chapelle, "Training a support vector machine in the primal", Neural
    Computation 19(5), 2007.

    Examples
    --------
    >>> import numpy as np
    >>> from semisvm.models._tsvm import ExactTSVM
    >>> rng = np.random.RandomState(0)
    >>> X = np.r_[rng.randn(8, 2) + 3, rng.randn(8, 2) - 3]
    >>> y = np.full(16, -1)
    >>> y[0], y[8] = 1, 0
    >>> clf = ExactTSVM(method="branch_and_bound", gamma=0.2, C=10, C_star=10)
    >>> clf = clf.fit(X, y)
    >>> clf.transduction_.tolist() == [1] * 8 + [0] * 8
    True
    >>> bool(clf.is_global_optimum_)
    True
    """

    _parameter_constraints: dict = {
        "method": [Options(("randomized", "branch_and_bound"))],
        "C": [Interval(numbers.Real, 0, None, closed="neither")],
        "C_star": [Interval(numbers.Real, 0, None, closed="neither")],
        "kernel": [Options(("rbf", "poly", "linear")), "callable"],
        "gamma": [
            Interval(numbers.Real, 0, None, closed="neither"),
            Options(("knn", "median", "scale")),
        ],
        "degree": [Interval(numbers.Integral, 1, None)],
        "coef0": [Interval(numbers.Real, None, None)],
        "kernel_params": [None, "dict"],
        "positive_fraction": [None, Interval(numbers.Real, 0, 1, closed="neither")],
        "balance_tol": [Interval(numbers.Real, 0, 1, closed="left")],
        "sample_size": [None, Interval(numbers.Integral, 1, None)],
        "max_iter": [Interval(numbers.Integral, 1, None)],
        "max_nodes": [None, Interval(numbers.Integral, 1, None)],
        "time_limit": [None, Interval(numbers.Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
        "verbose": [Interval(numbers.Integral, 0, None), "boolean"],
        "n_jobs": [None, Interval(numbers.Integral, None, None)],
    }

    def __init__(
        self,
        *,
        method: str = "randomized",
        C: float = 1.0,
        C_star: float = 1.0,
        kernel="rbf",
        gamma: float | str = _defaults.GAMMA,
        degree: int = 3,
        coef0: float = 1.0,
        kernel_params: dict | None = None,
        positive_fraction: float | None = None,
        balance_tol: float = 0.0,
        sample_size: int | None = None,
        max_iter: int = 100,
        max_nodes: int | None = None,
        time_limit: float | None = 60.0,
        random_state=None,
        verbose: int = 0,
        n_jobs: int | None = None,
    ) -> None:
        self.method = method
        self.C = C
        self.C_star = C_star
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.positive_fraction = positive_fraction
        self.balance_tol = balance_tol
        self.sample_size = sample_size
        self.max_iter = max_iter
        self.max_nodes = max_nodes
        self.time_limit = time_limit
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs

    def _solve_class(self, K, t_int, c, u, time_limit):
        """One (one-vs-rest) transductive problem: class ``c`` against the rest.

        ``t_int``: the ±1/0 targets of that problem (a column of
        :attr:`~semisvm.models._problem.Targets.Y`).
        """
        if self.verbose and self.classes_.size > 2:
            print(f"[ExactTSVM] class {plain(self.classes_[c])!r} vs rest", flush=True)
        common = dict(
            C=float(self.C),
            C_star=float(self.C_star),
            positive_fraction=self.positive_fraction,
            balance_tol=float(self.balance_tol),
            max_nodes=self.max_nodes,
            time_limit=time_limit,
            verbose=int(self.verbose),
        )
        if self.method == "branch_and_bound" or u == 0:
            return tsvm_branch_and_bound(K, t_int, **common)
        return tsvm_randomized(
            K,
            t_int,
            sample_size=self.sample_size,
            max_iter=self.max_iter,
            random_state=resolve_seed(self.random_state),
            **common,
        )

    def fit(self, X, y) -> ExactTSVM:
        """Fit on labeled and unlabeled points.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training points (converted to float64).
        y : array-like of shape (n_samples,)
            Class labels: ints, strings or integer-valued floats, in an array, a
            list or a pandas Series (object, string, categorical or nullable
            dtype).  ``-1`` (or ``"-1"``), ``None``, ``NaN`` and ``pd.NA`` mark an
            unlabeled point, so a column of class names with blanks needs no
            recoding; the class names are kept in ``classes_`` and the
            predictions (:func:`semisvm._validation.decode_labels`).

        Returns
        -------
        self : ExactTSVM
        """
        validate_params(self.get_params(), self._parameter_constraints)
        y = decode_labels(y)  # None / NaN / pd.NA: unlabeled (sklearn refuses NaN)
        X, y = validate_data(
            self,
            X,
            y,
            dtype=np.float64,
            ensure_all_finite=False,
            ensure_min_samples=2,
            y_numeric=False,
        )
        check_finite(X, "X")
        targets = encode_targets(check_semi_supervised_targets(y))
        labeled, classes, y_enc = targets.labeled, targets.classes, targets.y_idx
        n_classes = classes.size
        if n_classes > 2 and self.positive_fraction is not None:
            raise ValueError(
                "positive_fraction applies to two classes only; with "
                f"{n_classes} classes each one-vs-rest problem uses its class's "
                "labeled fraction. Leave positive_fraction=None."
            )
        u = int(np.count_nonzero(~labeled))
        if (
            self.method == "randomized"
            and self.sample_size is not None
            and self.sample_size > u
            and u > 0
        ):
            raise ValueError(
                f"sample_size={self.sample_size} is larger than the number of "
                f"unlabeled points U (u={u})."
            )
        self.classes_ = classes
        K, self.gamma_ = prepare_kernel(self, X)
        # (class, its column of the one-vs-rest targets): one problem if binary
        tasks = [(1, 0)] if n_classes == 2 else [(c, c) for c in range(n_classes)]
        Y = targets.Y
        t0 = time.perf_counter()
        if self.n_jobs is None or len(tasks) == 1:
            results = []
            for k, (c, j) in enumerate(tasks):
                time_limit = self.time_limit
                if time_limit is not None:  # share what is left among the tasks
                    left = time_limit - (time.perf_counter() - t0)
                    time_limit = max(left / (len(tasks) - k), 1e-3)
                results.append(self._solve_class(K, Y[:, j], c, u, time_limit))
        else:
            # the one-vs-rest problems are independent: joblib runs them at once
            # (local processes, or a Dask cluster under parallel_backend("dask")),
            # each with the whole time_limit
            results = Parallel(n_jobs=self.n_jobs)(
                delayed(self._solve_class)(K, Y[:, j], c, u, self.time_limit)
                for c, j in tasks
            )
        self.fit_time_ = time.perf_counter() - t0
        self._store(results, X, labeled, y_enc, u)
        if not self.is_global_optimum_:
            stops = sorted({r.termination for r in results if not r.is_global_optimum})
            warnings.warn(
                f"ExactTSVM(method={self.method!r}) stopped on {', '.join(stops)} "
                f"(max_iter={self.max_iter}, max_nodes={self.max_nodes}, "
                f"time_limit={self.time_limit}) without a certificate of global "
                f"optimality; the best solution found is returned: objective "
                f"{np.max(self.objective_):.6g}, proven lower bound "
                f"{np.max(self.lower_bound_):.6g}, relative gap {self.gap_:.2%} "
                "(gap_). Raise time_limit / max_nodes / max_iter to close it.",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self

    def _store(self, results, X, labeled, y_enc, u) -> None:
        """Fitted attributes from the per-task results (one task if binary)."""
        alphas = np.column_stack([r.alpha for r in results])
        self.support_ = np.flatnonzero(np.any(alphas != 0, axis=1))
        self.support_vectors_ = X[self.support_]
        binary = len(results) == 1
        self.dual_coef_ = alphas[self.support_, 0] if binary else alphas[self.support_]
        b = np.array([r.b for r in results])
        self.intercept_ = float(b[0]) if binary else b
        obj = np.array([r.objective for r in results])
        low = np.array([r.lower_bound for r in results])
        self.objective_ = float(obj[0]) if binary else obj
        self.lower_bound_ = float(low[0]) if binary else low
        self.gap_ = float(max(r.gap for r in results))
        self.is_global_optimum_ = all(r.is_global_optimum for r in results)
        terms = [r.termination for r in results]
        self.termination_condition_ = terms[0] if binary else terms
        self.n_rounds_ = int(sum(r.n_rounds for r in results))
        self.n_iter_ = self.n_rounds_
        self.n_nodes_ = int(sum(r.n_nodes for r in results))
        self.weights_ = results[0].weights if binary else [r.weights for r in results]
        self.history_ = results[0].history if binary else [r.history for r in results]
        trans_enc = y_enc.copy()
        if u:
            if binary:
                trans_enc[~labeled] = (results[0].labels > 0).astype(np.intp)
            else:
                F = self._decision(X[~labeled])
                trans_enc[~labeled] = np.argmax(F, axis=1)
        self.transduction_ = self.classes_[trans_enc]

    def _decision(self, X: np.ndarray) -> np.ndarray:
        if self.support_.size == 0:
            F = np.zeros((X.shape[0], np.size(self.intercept_)))
            return F + self.intercept_
        return prediction_kernel(self, X, dtype=np.float64) @ self.dual_coef_ + (
            self.intercept_
        )

    def decision_function(self, X) -> np.ndarray:
        """Signed score :math:`f(x)`; positive means ``classes_[1]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            One column per class (one-vs-rest) with more than two classes.
        """
        check_is_fitted(self)
        X = validate_data(
            self, X, dtype=np.float64, reset=False, ensure_all_finite=False
        )
        check_finite(X, "X")
        return self._decision(X)

    def predict(self, X) -> np.ndarray:
        """Class labels (from ``classes_``) of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        f = self.decision_function(X)
        if f.ndim == 2:
            return self.classes_[np.argmax(f, axis=1)]
        return self.classes_[(f >= 0).astype(np.intp)]
