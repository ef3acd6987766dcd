r"""Exact transductive SVM (L2 losses): branch and bound, and random sampling.

Problem.  Given a Gram matrix :math:`K` over ``n = l + u`` points, labels
:math:`y_i \in \{\pm1\}` on the labeled set :math:`L` and the unlabeled set
:math:`U`, find

.. math::

    \min_{y_U \in \{\pm1\}^u,\ |\{j: y_j = +1\}| \in [p_{lo}, p_{hi}]}\;
    \min_{f \in \mathcal H, b}\; \tfrac12\|f\|_{\mathcal H}^2
    + C \sum_{i \in L} \max(0, 1 - y_i f(x_i))^2
    + C^\star \sum_{j \in U} \max(0, 1 - y_j f(x_j))^2 .

The inner problem is the L2-SVM of :mod:`semisvm.solvers._l2svm`; the balance
window is ``round(r u) +- floor(tol u)`` positives for a positive fraction ``r``.

* :func:`tsvm_branch_and_bound` — Chapelle, Sindhwani & Keerthi (2006).  A node is
  a partial labeling of :math:`U`; its lower bound is the L2-SVM objective on
  :math:`L` plus the points labeled so far (adding points can only raise it).
  Depth first; branch on the unlabeled point with the largest :math:`|f(x)|` and
  try the label :math:`\operatorname{sign} f(x)` first; prune when the bound
  reaches the best complete objective; once one class is full the remaining
  points are forced.  Two exact shortcuts: a child whose new point already lies
  outside the margin with its label reuses the parent's solution, and a node
  whose unlabeled points all lie outside the margin with a sign labeling that
  fits the balance is a leaf whose completion costs nothing (Observation 3.2 of
  the randomized paper).  The initial upper bound comes from alternating
  minimisation (solve the SVM, relabel :math:`U` by the balanced sign of
  :math:`f`, repeat).
* :func:`tsvm_randomized` — Clarkson's Basis2 over the branch and bound (the
  STSVM of the randomized paper, Algorithm 1): weights :math:`\mu_j = 1` on
  :math:`U`; each round draws :math:`R \subset U` of ``sample_size`` points
  without replacement with probability :math:`\propto \mu`, solves the branch and
  bound exactly on :math:`L \cup R` (balance scaled to :math:`|R|`), and finds the
  violators :math:`V = \{j \in U \setminus R : |f(x_j)| < 1\}`.  If :math:`V` is
  empty and the induced labeling of :math:`U` (``R`` from the branch and bound,
  the rest by :math:`\operatorname{sign} f`) meets the balance window, that
  labeling is returned with the certificate.  Otherwise :math:`\mu_j` doubles on
  :math:`V` and the best solution so far is kept by
  :math:`\mathrm{obj}_R + C^\star\sum_{j\in V}(1 - |f(x_j)|)^2` (balanced
  labelings first).  By default the incumbent's margin points are put into every
  sample (``keep_incumbent_margin``), the rest of it is drawn at random.

References
----------
O. Chapelle, V. Sindhwani, S. S. Keerthi, "Branch and bound for semi-supervised
support vector machines", NIPS 19, 2006.

G. Esposito, M. Martín, "A randomized algorithm for the exact solution of
transductive support vector machines", Applied Artificial Intelligence, 2015
(``/work/shared/papers/randomized-exact-tsvm-violator-spaces.txt``).

K. L. Clarkson, "Las Vegas algorithms for linear and integer programming when
the dimension is small", Journal of the ACM 42(2), 1995.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from sklearn.utils import check_random_state

from ._l2svm import L2SVMResult, add_point_bounds, l2svm_primal

__all__ = [
    "TSVMResult",
    "balance_bounds",
    "tsvm_branch_and_bound",
    "tsvm_randomized",
]


@dataclass(frozen=True)
class TSVMResult:
    """Outcome of :func:`tsvm_branch_and_bound` and :func:`tsvm_randomized`.

    Attributes
    ----------
    labels : ndarray of shape (u,)
        Labels in ``{-1, +1}`` of the unlabeled points (in the order of
        ``np.flatnonzero(y == 0)``).
    alpha : ndarray of shape (n,)
        Expansion coefficients of the decision function over all ``n`` points.
    b : float
        Bias.
    objective : float
        TSVM objective of ``labels`` on the whole set.
    is_global_optimum : bool
        Branch and bound: the search finished (no node or time limit hit).
        Randomized: the final sample has no violator and the induced labeling
        meets the balance window on the whole set.
    termination : str
        ``"complete"`` (branch and bound finished), ``"certificate"``,
        ``"max_iter"``, ``"max_nodes"``, ``"time_limit"`` or ``"callback"``.
    n_nodes : int
        Branch-and-bound nodes evaluated (summed over rounds).
    n_rounds : int
        Sampling rounds (1 for the plain branch and bound).
    weights : ndarray of shape (u,) or None
        Final sampling weights :math:`\\mu` (randomized method only).
    n_violators : int
        Violators of the returned solution among ``U`` (0 with a certificate).
    history : list of dict
        One record per round (randomized) or per improvement of the incumbent
        (branch and bound).
    """

    labels: np.ndarray
    alpha: np.ndarray
    b: float
    objective: float
    is_global_optimum: bool
    termination: str
    n_nodes: int
    n_rounds: int
    weights: np.ndarray | None = None
    n_violators: int = 0
    history: list = field(default_factory=list)


def balance_bounds(u: int, fraction: float, tol: float = 0.0) -> tuple[int, int]:
    """Window ``[lo, hi]`` for the number of positives among ``u`` points.

    ``round(fraction * u)`` (half up) plus or minus ``floor(tol * u)``, clipped to
    ``[0, u]``.
    """
    centre = int(math.floor(fraction * u + 0.5))
    slack = int(math.floor(tol * u + 1e-9))
    return max(0, centre - slack), min(u, centre + slack)


def _balanced_signs(f: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """Labels minimising the losses for fixed ``f`` under the count window.

    The loss difference between labels +1 and -1 is decreasing in ``f``, so the
    best labeling gives +1 to the ``k`` largest values, ``k`` the number of
    non-negative values clipped to ``[lo, hi]``.
    """
    k = int(np.clip(np.count_nonzero(f >= 0), lo, hi))
    out = -np.ones(f.size)
    if k:
        out[np.argsort(-f, kind="stable")[:k]] = 1.0
    return out


class _Search:
    """Depth-first branch and bound over a (sub)problem; plain data holder."""

    def __init__(
        self,
        K: np.ndarray,
        y: np.ndarray,
        cost: np.ndarray,
        U: np.ndarray,
        C_star: float,
        lo: int,
        hi: int,
        *,
        max_nodes: int | None,
        deadline: float | None,
        callback: Callable | None,
    ) -> None:
        self.K, self.y0, self.cost0, self.U = K, y, cost, U
        self.C_star, self.lo, self.hi = C_star, lo, hi
        self.n_neg_max = U.size - lo
        self.max_nodes, self.deadline, self.callback = max_nodes, deadline, callback
        self.n_nodes = 0
        self.best_obj = np.inf
        self.best_labels: np.ndarray | None = None
        self.best_sol: L2SVMResult | None = None
        self.history: list = []
        self.termination = "complete"

    # -- helpers ---------------------------------------------------------------
    def _solve(self, y, cost, warm: L2SVMResult | None) -> L2SVMResult:
        if warm is None:
            return l2svm_primal(self.K, y, cost)
        return l2svm_primal(self.K, y, cost, alpha0=warm.alpha, b0=warm.b, f0=warm.f)

    def _record(self, labels_U: np.ndarray, sol: L2SVMResult, how: str) -> None:
        if sol.objective < self.best_obj:
            self.best_obj = sol.objective
            self.best_labels = labels_U.copy()
            self.best_sol = sol
            self.history.append(
                {"nodes": self.n_nodes, "objective": sol.objective, "how": how}
            )

    def descend(self, labels: np.ndarray, warm: L2SVMResult | None) -> None:
        """Alternating minimisation from ``labels``: a valid upper bound."""
        y = self.y0.copy()
        cost = self.cost0.copy()
        cost[self.U] = self.C_star
        sol = warm
        for _ in range(50):
            y[self.U] = labels
            sol = self._solve(y, cost, sol)
            new = _balanced_signs(sol.f[self.U], self.lo, self.hi)
            if np.array_equal(new, labels):
                break
            labels = new
        self._record(y[self.U], sol, "initial")

    def _stop(self) -> bool:
        if self.max_nodes is not None and self.n_nodes >= self.max_nodes:
            self.termination = "max_nodes"
            return True
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            self.termination = "time_limit"
            return True
        return False

    def _prunable(self, obj: float) -> bool:
        return obj >= self.best_obj - 1e-12 * max(1.0, abs(self.best_obj))

    # -- the search ------------------------------------------------------------
    def run(self, root: L2SVMResult) -> None:
        U = self.U
        y_root = self.y0.copy()
        cost_root = self.cost0.copy()
        # stack entries: (y, cost, parent solution, point, label, n_pos, n_neg,
        # lower bound of the child)
        stack: list = [(y_root, cost_root, root, -1, 0.0, 0, 0, -np.inf)]
        while stack:
            if self._stop():
                return
            y, cost, parent, j, lab, n_pos, n_neg, lb = stack.pop()
            if self._prunable(lb):
                continue  # the incumbent improved since this child was pushed
            if j >= 0:
                y = y.copy()
                cost = cost.copy()
                y[j] = lab
                cost[j] = self.C_star
                if lab * parent.f[j] >= 1.0:
                    sol = parent  # the new point is outside the margin: same SVM
                else:
                    sol = self._solve(y, cost, parent)
            else:
                sol = parent
            self.n_nodes += 1
            if self._prunable(sol.objective):
                continue
            free = U[y[U] == 0]
            if free.size == 0:
                self._record(y[U], sol, "leaf")
                continue
            f_free = sol.f[free]
            if n_pos == self.hi or n_neg == self.n_neg_max:
                forced = -1.0 if n_pos == self.hi else 1.0
                y2 = y.copy()
                cost2 = cost.copy()
                y2[free] = forced
                cost2[free] = self.C_star
                if np.all(forced * f_free >= 1.0):
                    sol2 = sol
                else:
                    sol2 = self._solve(y2, cost2, sol)
                    self.n_nodes += 1
                if not self._prunable(sol2.objective):
                    self._record(y2[U], sol2, "forced")
                continue
            s = np.where(f_free >= 0, 1.0, -1.0)
            k_pos = int(np.count_nonzero(s > 0))
            if (
                np.all(s * f_free >= 1.0)
                and n_pos + k_pos <= self.hi
                and n_neg + free.size - k_pos <= self.n_neg_max
            ):
                # Observation 3.2: labeling the rest by sign f changes nothing.
                y2 = y.copy()
                y2[free] = s
                self._record(y2[U], sol, "outside_margin")
                continue
            # dual lower bounds on adding each free point with either label
            d_pos, d_neg = add_point_bounds(self.K, sol, cost, free, self.C_star)
            slack = 1e-10 * (1.0 + abs(sol.objective))
            bound = float(np.max(np.minimum(d_pos, d_neg)))
            need_pos = self.lo - n_pos  # positives still to place
            need_neg = (U.size - self.hi) - n_neg
            if need_pos > 0:
                bound = max(
                    bound, float(np.partition(d_pos, need_pos - 1)[need_pos - 1])
                )
            if need_neg > 0:
                bound = max(
                    bound, float(np.partition(d_neg, need_neg - 1)[need_neg - 1])
                )
            if self._prunable(sol.objective + bound - slack):
                continue
            k = int(np.argmax(np.abs(f_free)))
            jj = int(free[k])
            sj = s[k]
            # push the second choice first so that sign f(x_j) is explored first
            for lab_c in (-sj, sj):
                d = d_pos[k] if lab_c > 0 else d_neg[k]
                stack.append(
                    (
                        y,
                        cost,
                        sol,
                        jj,
                        lab_c,
                        n_pos + (lab_c > 0),
                        n_neg + (lab_c < 0),
                        sol.objective + d - slack,
                    )
                )
            if self.callback is not None and self.n_nodes % 1000 == 0:
                if self.callback(
                    {"nodes": self.n_nodes, "best_objective": self.best_obj}
                ):
                    self.termination = "callback"
                    return


def _branch_and_bound(
    K: np.ndarray,
    y: np.ndarray,
    *,
    C: float,
    C_star: float,
    lo: int,
    hi: int,
    hints: list | None = None,
    max_nodes: int | None = None,
    deadline: float | None = None,
    callback: Callable | None = None,
) -> _Search:
    """Branch and bound on ``K`` with ``y == 0`` marking the unlabeled points."""
    U = np.flatnonzero(y == 0)
    cost = np.where(y != 0, C, 0.0)
    search = _Search(
        K,
        y.astype(np.float64),
        cost,
        U,
        C_star,
        lo,
        hi,
        max_nodes=max_nodes,
        deadline=deadline,
        callback=callback,
    )
    root = l2svm_primal(K, search.y0, cost)
    if U.size == 0:
        search.n_nodes = 1
        search._record(np.zeros(0), root, "leaf")
        return search
    search.descend(_balanced_signs(root.f[U], lo, hi), root)
    for h in hints or []:
        search.descend(_balanced_signs(np.asarray(h, float), lo, hi), None)
    search.run(root)
    return search


def _check_problem(K: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    K = np.asarray(K, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape[0] != y.shape[0]:
        raise ValueError(
            f"K must be square and match y; got K {K.shape} and y {y.shape}."
        )
    if not np.isin(y, (-1.0, 0.0, 1.0)).all():
        raise ValueError("y must hold -1, +1 (labeled) or 0 (unlabeled).")
    if not ((y > 0).any() and (y < 0).any()):
        raise ValueError("Both classes need at least one labeled point.")
    return K, y


def _default_fraction(y: np.ndarray, positive_fraction: float | None) -> float:
    if positive_fraction is None:
        lab = y[y != 0]
        return float(np.mean(lab > 0))
    return float(positive_fraction)


def _draw_sample(
    rng, mu: np.ndarray, size: int, best: dict | None, keep: bool
) -> np.ndarray:
    """Sample ``R`` of ``size`` indices of ``U`` (sorted).

    With ``keep`` and an incumbent whose induced labeling meets the balance
    window, the incumbent's margin points (``|f| < 1``, at most ``size // 2``,
    smallest ``|f|`` first) enter ``R`` deterministically; the rest is drawn
    without replacement with probability proportional to ``mu``.
    """
    seed = np.zeros(0, dtype=np.intp)
    if keep and best is not None and best["balance_ok"]:
        a = np.abs(best["f_U"])
        cand = np.flatnonzero(a < 1.0)
        seed = cand[np.argsort(a[cand], kind="stable")[: size // 2]]
    rest = np.ones(mu.size, bool)
    rest[seed] = False
    p = np.where(rest, mu, 0.0)
    drawn = rng.choice(mu.size, size=size - seed.size, replace=False, p=p / p.sum())
    return np.sort(np.r_[seed, drawn])


def tsvm_branch_and_bound(
    K: np.ndarray,
    y: np.ndarray,
    *,
    C: float = 1.0,
    C_star: float = 1.0,
    positive_fraction: float | None = None,
    balance_tol: float = 0.0,
    max_nodes: int | None = None,
    time_limit: float | None = None,
    callback: Callable | None = None,
) -> TSVMResult:
    r"""Exact L2-loss transductive SVM by depth-first branch and bound.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Gram matrix over all points (converted to float64).
    y : ndarray of shape (n,)
        ``+1``/``-1`` for labeled points, ``0`` for unlabeled ones.
    C, C_star : float, default=1.0
        Costs of the labeled and unlabeled squared hinge losses.
    positive_fraction : float or None, default=None
        Target fraction ``r`` of positives among the unlabeled points; ``None``
        uses the labeled fraction.
    balance_tol : float, default=0.0
        The number of positives in ``U`` must lie in
        ``round(r u) +- floor(balance_tol u)``.
    max_nodes : int or None, default=None
        Stop after this many nodes and return the best labeling found.
    time_limit : float or None, default=None
        Stop after this many seconds and return the best labeling found.
    callback : callable or None, default=None
        Called every 1000 nodes with a dict ``{"nodes", "best_objective"}``;
        returning ``True`` stops the search.

    Returns
    -------
    result : TSVMResult
        ``is_global_optimum`` is ``True`` iff the search finished.

    Notes
    -----
    See the module docstring for the bound, the branching rule and the two
    exact shortcuts.  Worst case :math:`O(2^u)` nodes, each an L2-SVM solve
    warm-started from its parent (:func:`~semisvm.solvers._l2svm.l2svm_primal`).

    References
    ----------
    O. Chapelle, V. Sindhwani, S. S. Keerthi, "Branch and bound for
    semi-supervised support vector machines", NIPS 19, 2006.
    """
    K, y = _check_problem(K, y)
    u = int(np.count_nonzero(y == 0))
    lo, hi = balance_bounds(u, _default_fraction(y, positive_fraction), balance_tol)
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    s = _branch_and_bound(
        K,
        y,
        C=C,
        C_star=C_star,
        lo=lo,
        hi=hi,
        max_nodes=max_nodes,
        deadline=deadline,
        callback=callback,
    )
    sol = s.best_sol
    n_viol = int(np.count_nonzero(np.abs(sol.f[y == 0]) < 1.0))
    return TSVMResult(
        labels=s.best_labels,
        alpha=sol.alpha,
        b=sol.b,
        objective=sol.objective,
        is_global_optimum=s.termination == "complete",
        termination=s.termination,
        n_nodes=s.n_nodes,
        n_rounds=1,
        weights=None,
        n_violators=n_viol,
        history=s.history,
    )


def tsvm_randomized(
    K: np.ndarray,
    y: np.ndarray,
    *,
    C: float = 1.0,
    C_star: float = 1.0,
    positive_fraction: float | None = None,
    balance_tol: float = 0.0,
    sample_size: int | None = None,
    sample_balance: str = "incumbent",
    max_iter: int = 100,
    max_nodes: int | None = None,
    time_limit: float | None = None,
    random_state=None,
    callback: Callable | None = None,
    keep_incumbent_margin: bool = True,
) -> TSVMResult:
    r"""Exact L2-loss transductive SVM by random sampling (Clarkson's Basis2).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Gram matrix over all points (converted to float64).
    y : ndarray of shape (n,)
        ``+1``/``-1`` for labeled points, ``0`` for unlabeled ones.
    C, C_star, positive_fraction, balance_tol
        As in :func:`tsvm_branch_and_bound`; the balance window of a sample
        ``R`` is ``round(r |R|) +- floor(balance_tol |R|)``.
    sample_size : int or None, default=None
        ``|R|``; ``None`` means ``min(u, 50)``.  Must not exceed ``u``.
    sample_balance : {'incumbent', 'scaled'}, default='incumbent'
        Count of positives imposed on a sample ``R``.  ``'scaled'``: the window
        ``round(r |R|) +- floor(balance_tol |R|)`` (the design note's literal
        reading).  ``'incumbent'``: the number of positives that ``R`` holds in
        the balanced labeling of ``U`` obtained by ranking the best decision
        function so far (the ``round(r u)`` largest values positive; the first
        round uses the SVM on ``L``), widened by the same tolerance.  With
        ``'scaled'`` the sample count rarely equals the optimum's count in
        ``R`` (hypergeometric fluctuation), so the induced labeling seldom
        passes both tests; ``'incumbent'`` imposes the count the optimum has
        once the incumbent is right.
    max_iter : int, default=100
        Maximum number of rounds.
    max_nodes : int or None, default=None
        Node limit of each branch and bound; a round that hits it cannot give
        the certificate.
    time_limit : float or None, default=None
        Wall-clock limit of the whole run, in seconds.
    random_state : int, RandomState instance or None, default=None
        Seeds the sampling (the run is reproducible for a fixed seed).
    callback : callable or None, default=None
        Called after each round with that round's record (a dict); returning
        ``True`` stops the run.
    keep_incumbent_margin : bool, default=True
        Put the incumbent's margin points (``|f| < 1``; at most
        ``sample_size // 2``, smallest ``|f|`` first) into every sample once an
        incumbent meets the balance window, and draw only the rest at random.
        This is Clarkson's idea of keeping the points that made earlier samples
        fail (his recursive algorithm keeps the violators): once the incumbent
        is the optimum its basis is in ``R`` and the next round certifies.  The
        certificate does not depend on how ``R`` was chosen.  ``False`` gives
        the plain Basis2 sampling.

    Returns
    -------
    result : TSVMResult
        ``labels`` and ``alpha, b`` of the certified labeling, or of the best one
        by the corrected score; ``objective`` is always re-evaluated on the whole
        set (one warm-started L2-SVM solve).

    Notes
    -----
    One round (Algorithm 1 of the randomized paper): draw ``R`` with
    probability :math:`\propto\mu` without replacement; ``BB`` on :math:`L\cup R`
    gives :math:`(\mathrm{obj}_R, y_R, f)`; violators
    :math:`V = \{j\in U\setminus R: |f(x_j)| < 1\}`; certificate if
    :math:`V = \emptyset` and :math:`y_R` with :math:`\operatorname{sign} f` on
    :math:`U\setminus R` meets the balance window; else :math:`\mu_V \leftarrow
    2\mu_V` and the incumbent is the minimiser of :math:`\mathrm{obj}_R +
    C^\star\sum_{j\in V}(1-|f(x_j)|)^2` among the rounds whose induced
    labeling meets the balance window (any round while there is none).  With
    ``keep_incumbent_margin`` the incumbent's margin points are part of ``R``.

    Without a balance constraint the certificate is a proof (Observations
    3.1–3.3 of the paper: points outside the margin do not change the SVM).  The
    balance constraint, however, is not local — the sample is solved under the
    *scaled* count ``round(r |R|)`` — so with it the certificate is the paper's
    criterion rather than a proof; ``sample_size == u`` is exact.

    References
    ----------
    G. Esposito, M. Martín, "A randomized algorithm for the exact solution of
    transductive support vector machines", Applied Artificial Intelligence, 2015.

    K. L. Clarkson, "Las Vegas algorithms for linear and integer programming
    when the dimension is small", Journal of the ACM 42(2), 1995.
    """
    K, y = _check_problem(K, y)
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    L = np.flatnonzero(y != 0)
    U = np.flatnonzero(y == 0)
    u = U.size
    r_frac = _default_fraction(y, positive_fraction)
    lo, hi = balance_bounds(u, r_frac, balance_tol)
    if sample_size is None:
        sample_size = min(u, 50)
    if sample_size > u:
        raise ValueError(
            f"sample_size={sample_size} is larger than the number of unlabeled "
            f"points u={u}."
        )
    rng = check_random_state(random_state)
    mu = np.ones(u)
    if sample_balance not in ("incumbent", "scaled"):
        raise ValueError(
            f"sample_balance must be 'incumbent' or 'scaled', got {sample_balance!r}."
        )
    lo_R, hi_R = balance_bounds(sample_size, r_frac, balance_tol)
    slack_R = hi_R - balance_bounds(sample_size, r_frac, 0.0)[1]
    if sample_balance == "incumbent":
        root = l2svm_primal(K[np.ix_(L, L)], y[L], np.full(L.size, C))
        f_guess = K[np.ix_(U, L)] @ root.alpha + root.b
    best: dict | None = None
    history: list = []
    n_nodes = 0
    termination = "max_iter"
    n_rounds = 0
    for n_rounds in range(1, max_iter + 1):  # noqa: B007 - reported
        if sample_size == u:
            R = np.arange(u)
        else:
            R = _draw_sample(rng, mu, sample_size, best, keep_incumbent_margin)
        sub = np.r_[L, U[R]]
        y_sub = y[sub]
        if sample_balance == "incumbent":
            if best is not None:
                f_guess = best["f_U"]
            centre = int(np.count_nonzero(_balanced_signs(f_guess, lo, hi)[R] > 0))
            lo_R = max(0, centre - slack_R)
            hi_R = min(sample_size, centre + slack_R)
        hints = None
        if best is not None:
            hints = [best["f_U"][R]]
        s = _branch_and_bound(
            K[np.ix_(sub, sub)],
            y_sub,
            C=C,
            C_star=C_star,
            lo=lo_R,
            hi=hi_R,
            hints=hints,
            max_nodes=max_nodes,
            deadline=deadline,
        )
        n_nodes += s.n_nodes
        sol = s.best_sol
        supp = np.flatnonzero(sol.alpha)
        f_U = K[np.ix_(U, sub[supp])] @ sol.alpha[supp] + sol.b
        in_R = np.zeros(u, bool)
        in_R[R] = True
        V = (~in_R) & (np.abs(f_U) < 1.0)
        labels = np.where(f_U >= 0, 1.0, -1.0)
        labels[R] = s.best_labels
        n_pos = int(np.count_nonzero(labels > 0))
        balance_ok = lo <= n_pos <= hi
        n_viol = int(np.count_nonzero(V))
        exact_round = s.termination == "complete"
        score = sol.objective + C_star * float(np.sum((1.0 - np.abs(f_U[V])) ** 2))
        record = {
            "round": n_rounds,
            "objective_R": sol.objective,
            "score": score,
            "n_violators": n_viol,
            "n_positive": n_pos,
            "balance_ok": balance_ok,
            "n_nodes": s.n_nodes,
            "exact": exact_round,
            "time": time.perf_counter() - t0,
        }
        history.append(record)
        certified = exact_round and n_viol == 0 and balance_ok
        # balanced labelings first, then the corrected score
        if (
            certified
            or best is None
            or (not balance_ok, score) < (not best["balance_ok"], best["score"])
        ):
            alpha = np.zeros(y.size)
            alpha[sub] = sol.alpha
            best = {
                "score": score,
                "labels": labels,
                "alpha": alpha,
                "b": sol.b,
                "f_U": f_U,
                "n_viol": n_viol,
                "balance_ok": balance_ok,
            }
        if certified:
            termination = "certificate"
            break
        mu[V] *= 2.0
        if not exact_round:
            termination = s.termination
            break
        if callback is not None and callback(record):
            termination = "callback"
            break
    # the objective of the returned labeling on the whole set (warm start)
    y_full = y.copy()
    y_full[U] = best["labels"]
    cost = np.where(y != 0, C, C_star)
    f0 = np.empty(y.size)
    f0[U] = best["f_U"]
    supp = np.flatnonzero(best["alpha"])
    f0[L] = K[np.ix_(L, supp)] @ best["alpha"][supp] + best["b"]
    full = l2svm_primal(K, y_full, cost, alpha0=best["alpha"], b0=best["b"], f0=f0)
    return TSVMResult(
        labels=best["labels"],
        alpha=full.alpha,
        b=full.b,
        objective=full.objective,
        is_global_optimum=termination == "certificate",
        termination=termination,
        n_nodes=n_nodes,
        n_rounds=n_rounds,
        weights=mu,
        n_violators=best["n_viol"],
        history=history,
    )
