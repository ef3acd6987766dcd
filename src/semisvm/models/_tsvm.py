"""Exact transductive SVM estimator (branch and bound or random sampling)."""

from __future__ import annotations

import numbers
import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import (
    Interval,
    Options,
    check_finite,
    split_labeled,
    validate_params,
)
from ..kernels import kernel_matrix, resolve_gamma
from ..solvers._tsvm import tsvm_branch_and_bound, tsvm_randomized

__all__ = ["ExactTSVM"]


class ExactTSVM(ClassifierMixin, BaseEstimator):
    r"""Exact (globally optimal) L2-loss transductive SVM, binary.

    Finds the labeling of the unlabeled points and the kernel machine that
    jointly minimise

    .. math::

        \tfrac12\|f\|_{\mathcal H}^2 + C\sum_{i\in L}\max(0, 1 - y_i f(x_i))^2
        + C^\star\sum_{j\in U}\max(0, 1 - y_j f(x_j))^2,
        \qquad f(x) = \sum_i \alpha_i k(x_i, x) + b,

    over :math:`y_U \in \{\pm1\}^u` with ``round(positive_fraction * u)``
    positives in ``U`` (``+- floor(balance_tol * u)``), either by branch and bound
    over the whole set or by Clarkson-style random sampling over branch and bound.

    Inputs are converted to float64 (exact methods need the precision: the
    search compares objectives of neighbouring labelings).

    Parameters
    ----------
    method : {'randomized', 'branch_and_bound'}, default='randomized'
        ``'branch_and_bound'``: depth-first search over all balanced labelings
        of ``U`` (exponential in ``u`` in the worst case).  ``'randomized'``:
        branch and bound on random samples of ``U`` until no point outside the
        sample lies inside the margin; each sample holds the current best
        solution's margin points plus points drawn at random (see
        :func:`semisvm.solvers._tsvm.tsvm_randomized`).  It certifies quickly
        when few unlabeled points lie inside the margin at the optimum (e.g. a
        large ``C_star``), and rarely when that number approaches
        ``sample_size``.
    C : float, default=1.0
        Cost of the labeled squared hinge losses.
    C_star : float, default=1.0
        Cost of the unlabeled squared hinge losses.
    kernel : {'rbf', 'poly', 'linear'} or callable, default='rbf'
        Kernel (see :func:`semisvm.kernels.kernel_matrix`).
    gamma : float or {'scale', 'median'}, default='scale'
        Kernel coefficient (``rbf``: :math:`\exp(-\gamma\|x-z\|^2)`).
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
    sample_balance : {'incumbent', 'scaled'}, default='incumbent'
        Positive count imposed on a sample (see
        :func:`semisvm.solvers._tsvm.tsvm_randomized`).
    max_iter : int, default=100
        Maximum number of sampling rounds (``'randomized'``).
    max_nodes : int or None, default=None
        Node limit of each branch and bound.
    time_limit : float or None, default=None
        Wall-clock limit of the search in seconds.  When a limit stops the
        search, the best solution found is kept and ``is_global_optimum_`` is
        ``False``.
    random_state : int, RandomState instance or None, default=None
        Seeds the sampling; a fixed seed gives a reproducible fit.
    verbose : int, default=0
        ``> 0`` prints one line per sampling round (or every 1000 nodes).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        Class labels; ``classes_[1]`` is the positive class.
    transduction_ : ndarray of shape (n_samples,)
        Label of every training point (the given labels on ``L``, the optimal
        labeling on ``U``).
    objective_ : float
        TSVM objective of ``transduction_`` on the whole training set.
    is_global_optimum_ : bool
        ``True`` only with a certificate: the branch and bound finished, or (for
        ``'randomized'``) the last sample has no violator and the induced
        labeling meets the balance constraint on the whole set.
    termination_condition_ : str
        ``'complete'``, ``'certificate'``, ``'max_iter'``, ``'max_nodes'``,
        ``'time_limit'`` or ``'callback'``.
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
    dual_coef_ : ndarray of shape (n_SV,)
        Coefficients :math:`\alpha_i` of the support vectors.
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors in the training set.
    support_vectors_ : ndarray of shape (n_SV, n_features)
    intercept_ : float
        Bias :math:`b`.
    gamma_ : float
        Kernel coefficient used.
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
    labeled so far (raised by a dual bound on adding each remaining point),
    branching on the most confident point with its predicted label first,
    balance counts enforced, inner SVMs solved by warm-started primal Newton
    (Chapelle, 2007).

    Random sampling (Esposito & Martín's STSVM, after Clarkson's Basis2): the
    TSVM solution depends only on the points inside its margin, so samples
    ``R`` are solved exactly and the points of ``U`` outside ``R`` that fall
    inside the margin (violators) get their sampling weight doubled, until a
    sample has no violator.  The balance constraint is not local, so with it
    the certificate is the paper's criterion, not a proof; see
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
            Options(("scale", "median")),
        ],
        "degree": [Interval(numbers.Integral, 1, None)],
        "coef0": [Interval(numbers.Real, None, None)],
        "kernel_params": [None, "dict"],
        "positive_fraction": [None, Interval(numbers.Real, 0, 1, closed="neither")],
        "balance_tol": [Interval(numbers.Real, 0, 1, closed="left")],
        "sample_size": [None, Interval(numbers.Integral, 1, None)],
        "sample_balance": [Options(("incumbent", "scaled"))],
        "max_iter": [Interval(numbers.Integral, 1, None)],
        "max_nodes": [None, Interval(numbers.Integral, 1, None)],
        "time_limit": [None, Interval(numbers.Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
        "verbose": [Interval(numbers.Integral, 0, None), "boolean"],
    }

    def __init__(
        self,
        method: str = "randomized",
        *,
        C: float = 1.0,
        C_star: float = 1.0,
        kernel="rbf",
        gamma: float | str = "scale",
        degree: int = 3,
        coef0: float = 1.0,
        kernel_params: dict | None = None,
        positive_fraction: float | None = None,
        balance_tol: float = 0.0,
        sample_size: int | None = None,
        sample_balance: str = "incumbent",
        max_iter: int = 100,
        max_nodes: int | None = None,
        time_limit: float | None = None,
        random_state=None,
        verbose: int = 0,
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
        self.sample_balance = sample_balance
        self.max_iter = max_iter
        self.max_nodes = max_nodes
        self.time_limit = time_limit
        self.random_state = random_state
        self.verbose = verbose

    def _kernel(self, X: np.ndarray, Z: np.ndarray | None = None) -> np.ndarray:
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

    def fit(self, X, y) -> ExactTSVM:
        """Fit on labeled and unlabeled points.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training points (converted to float64).
        y : array-like of shape (n_samples,)
            Labels of two classes; ``-1`` marks unlabeled points.

        Returns
        -------
        self : ExactTSVM
        """
        validate_params(self.get_params(), self._parameter_constraints)
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
        labeled, classes, y_enc = split_labeled(y)
        if classes.size != 2:
            raise ValueError(
                "ExactTSVM is binary only: the labeled points hold "
                f"{classes.size} classes {classes.tolist()}; use a one-vs-rest "
                "wrapper for more than two classes."
            )
        u = int(np.count_nonzero(~labeled))
        if (
            self.method == "randomized"
            and self.sample_size is not None
            and self.sample_size > u
        ):
            raise ValueError(
                f"sample_size={self.sample_size} is larger than the number of "
                f"unlabeled points U (u={u})."
            )
        self.classes_ = classes
        self.gamma_ = (
            resolve_gamma(X, self.gamma, self.kernel)
            if isinstance(self.kernel, str)
            else np.nan
        )
        K = self._kernel(X)
        t_int = np.where(labeled, np.where(y_enc == 1, 1.0, -1.0), 0.0)
        verbose = int(self.verbose)

        def callback(info: dict) -> bool:
            if verbose:
                print(
                    "[ExactTSVM] "
                    + ", ".join(
                        f"{k}={v:.6g}" if isinstance(v, float) else f"{k}={v}"
                        for k, v in info.items()
                    )
                )
            return False

        common = dict(
            C=float(self.C),
            C_star=float(self.C_star),
            positive_fraction=self.positive_fraction,
            balance_tol=float(self.balance_tol),
            max_nodes=self.max_nodes,
            time_limit=self.time_limit,
            callback=callback,
        )
        t0 = time.perf_counter()
        if self.method == "branch_and_bound":
            res = tsvm_branch_and_bound(K, t_int, **common)
        else:
            res = tsvm_randomized(
                K,
                t_int,
                sample_size=self.sample_size,
                sample_balance=self.sample_balance,
                max_iter=self.max_iter,
                random_state=self.random_state,
                **common,
            )
        self.fit_time_ = time.perf_counter() - t0
        if not res.is_global_optimum:
            warnings.warn(
                f"ExactTSVM(method={self.method!r}) stopped on "
                f"{res.termination!r} (max_iter={self.max_iter}, max_nodes="
                f"{self.max_nodes}, time_limit={self.time_limit}) without a "
                "certificate of global optimality; the best solution found is "
                "returned. Increase max_iter / sample_size or the limits.",
                ConvergenceWarning,
                stacklevel=2,
            )
        trans_enc = y_enc.copy()
        trans_enc[~labeled] = (res.labels > 0).astype(np.intp)
        self.transduction_ = classes[trans_enc]
        self.objective_ = float(res.objective)
        self.is_global_optimum_ = bool(res.is_global_optimum)
        self.termination_condition_ = res.termination
        self.n_rounds_ = int(res.n_rounds)
        self.n_iter_ = self.n_rounds_
        self.n_nodes_ = int(res.n_nodes)
        self.weights_ = res.weights
        self.history_ = res.history
        self.support_ = np.flatnonzero(res.alpha)
        self.dual_coef_ = res.alpha[self.support_]
        self.support_vectors_ = X[self.support_]
        self.intercept_ = float(res.b)
        return self

    def decision_function(self, X) -> np.ndarray:
        """Signed score :math:`f(x)`; positive means ``classes_[1]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if self.support_.size == 0:
            return np.full(X.shape[0], self.intercept_)
        return self._kernel(X, self.support_vectors_) @ self.dual_coef_ + (
            self.intercept_
        )

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
        return self.classes_[(f >= 0).astype(np.intp)]
