r"""Exact transductive SVM (L2 losses): branch and bound, and random sampling.

Problem.  Given a Gram matrix :math:`K` over ``n = l + u`` points, labels
:math:`y_i \in \{\pm1\}` on the labeled set :math:`L` and the unlabeled set
:math:`U`, find

.. math::

    J^\star = \min_{y_U \in \{\pm1\}^u,\ |\{j: y_j = +1\}| \in [p_{lo}, p_{hi}]}\;
    \min_{f \in \mathcal H, b}\; \tfrac12\|f\|_{\mathcal H}^2
    + C \sum_{i \in L} \max(0, 1 - y_i f(x_i))^2
    + C^\star \sum_{j \in U} \max(0, 1 - y_j f(x_j))^2 .

The inner problem is the L2-SVM of :mod:`semisvm.solvers._l2svm`; the balance
window is ``round(r u) +- floor(tol u)`` positives for a positive fraction ``r``.

:func:`tsvm_branch_and_bound` (Chapelle, Sindhwani & Keerthi 2006) bounds each
partial labeling of :math:`U` below by the L2-SVM on the points labeled so far,
with reduced-cost fixing (:class:`_Search`); stopped early, its open nodes bound
:math:`J^\star` below.  :func:`tsvm_randomized` runs Clarkson's Basis2 over it
(Esposito & Martín, Algorithm 1) with a *relaxed* sample problem whose optimum
is a lower bound, which makes its certificate a proof (:class:`_RandomizedRun`).

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

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve
from sklearn.utils import check_random_state

from ._l2svm import L2SVMResult, add_point_bounds, l2svm_primal
from ._result import SolverResult
from ._targets import as_targets

__all__ = [
    "TSVM_STOP_REASONS",
    "TSVMResult",
    "balance_bounds",
    "tsvm_branch_and_bound",
    "tsvm_randomized",
]

#: relative tolerance of the randomized certificate (rounding of Newton solves)
CERTIFICATE_RTOL = 1e-9


#: Stop reasons of the exact TSVM solvers (``TSVMResult.reason``); the shared
#: vocabulary :data:`semisvm.solvers._result.STOP_REASONS` has ``max_iter`` and
#: ``callback`` with the same meaning.
TSVM_STOP_REASONS: dict[str, str] = {
    "complete": "the branch and bound finished: the incumbent is optimal (proof)",
    "inexact": "the branch and bound finished, but inner SVM solves that did not "
    "converge leave leaves unresolved (no proof; gap reported)",
    "certificate": "a proven lower bound reached the incumbent (proof)",
    "max_iter": "the sampling-round cap was reached (no proof; gap reported)",
    "max_nodes": "the node budget was reached (no proof; gap reported)",
    "time_limit": "the wall-clock limit was reached (no proof; gap reported)",
    "callback": "the user's callback asked to stop (no proof; gap reported)",
}


@dataclass(frozen=True, kw_only=True)
class TSVMResult(SolverResult):
    """Outcome of :func:`tsvm_branch_and_bound` and :func:`tsvm_randomized`.

    A :class:`~semisvm.solvers._result.SolverResult`: its one stop field
    ``reason`` is a key of :data:`TSVM_STOP_REASONS`; ``termination`` is the
    same string (the name this result used before).  Keyword-only.

    Attributes
    ----------
    reason : str
        Why the search stopped: ``"complete"`` (branch and bound finished),
        ``"certificate"``, ``"max_iter"``, ``"max_nodes"``, ``"time_limit"`` or
        ``"callback"`` (:data:`TSVM_STOP_REASONS`).
    labels : ndarray of shape (u,)
        Labels in ``{-1, +1}`` of the unlabeled points (in the order of
        ``np.flatnonzero(y == 0)``); always inside the balance window.
    alpha : ndarray of shape (n,)
        Expansion coefficients of the decision function over all ``n`` points.
    b : float
        Bias.
    objective : float
        TSVM objective of ``labels`` on the whole set (an upper bound of the
        optimum :math:`J^\\star`).
    is_global_optimum : bool
        ``True`` only with a proof: the branch and bound finished, or the
        randomized lower bound reached ``objective`` (the argument:
        ``semisvm.solvers._tsvm._RandomizedRun``).
    n_nodes : int
        Branch-and-bound nodes evaluated (summed over rounds).
    n_rounds : int
        Sampling rounds (1 for the plain branch and bound).
    weights : ndarray of shape (u,) or None
        Final sampling weights :math:`\\mu` (randomized method only).
    n_violators : int
        Randomized method: violators (points of ``U`` outside the sample inside
        its solution's margin) of the sample solution the returned labeling
        was built from; 0 for the branch and bound.
    history : list of dict
        One record per round (randomized) or per improvement of the incumbent
        (branch and bound).
    lower_bound : float
        Proven lower bound of :math:`J^\\star` (equal to ``objective`` with a
        certificate, up to rounding).
    """

    reason: str  # one problem: one stop reason (the base allows a list)
    labels: np.ndarray
    alpha: np.ndarray
    b: float
    objective: float
    is_global_optimum: bool
    n_nodes: int
    n_rounds: int
    weights: np.ndarray | None = None
    n_violators: int = 0
    history: list = field(default_factory=list)
    lower_bound: float = 0.0

    @property
    def termination(self) -> str:
        """Same as :attr:`reason`."""
        return self.reason

    @property
    def gap(self) -> float:
        """Relative gap ``(objective - lower_bound) / objective`` (0 when proven)."""
        return _rel_gap(self.objective, self.lower_bound)


def _rel_gap(upper: float, lower: float) -> float:
    if not np.isfinite(upper):
        return np.inf
    return max(0.0, upper - lower) / max(abs(upper), 1e-300)


class _Progress:
    """MIP-solver-like progress log on stdout (``verbose > 0``)."""

    def __init__(self, verbose: int, t0: float, title: str) -> None:
        self.verbose = int(verbose)
        self.t0 = t0
        self.title = title
        self.last = t0
        self.header_done = False

    def line(
        self,
        mark: str,
        rounds: int,
        nodes: int,
        upper: float,
        lower: float,
        info="",
        open_nodes: int | None = None,
    ) -> None:
        """One log line: ``mark`` (``*`` = new incumbent), elapsed seconds,
        rounds, nodes explored, incumbent (upper bound), proven lower bound,
        relative gap, open nodes (``-`` outside a branch and bound), info."""
        if not self.verbose:
            return
        now = time.perf_counter()
        if not self.header_done:
            print(f"[ExactTSVM] {self.title}", flush=True)
            print(
                f"  {'':1} {'time_s':>8} {'rounds':>6} {'nodes':>10} "
                f"{'incumbent':>13} {'lower_bnd':>13} {'gap':>9} {'open':>7}  info",
                flush=True,
            )
            self.header_done = True
        self.last = now
        left = "-" if open_nodes is None else str(open_nodes)
        print(
            f"  {mark:1} {now - self.t0:8.2f} {rounds:6d} {nodes:10d} "
            f"{upper:13.6g} {lower:13.6g} {_rel_gap(upper, lower):9.3%} "
            f"{left:>7}  {info}",
            flush=True,
        )

    def due(self, interval: float) -> bool:
        return bool(self.verbose) and time.perf_counter() - self.last >= interval


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
    r"""Depth-first branch and bound over a (sub)problem; plain data holder.

    Reduced-cost fixing (the node bound).  At a node with solution value
    :math:`J_N` (the L2-SVM on :math:`L` plus the labeled part of :math:`U`) and
    incumbent :math:`J_{inc}`, :func:`~semisvm.solvers._l2svm.add_point_bounds`
    gives for each free point :math:`j` and label :math:`s` a
    :math:`\delta_j(s) \ge 0` with "node + :math:`(x_j, s)`" costing at least
    :math:`J_N + \delta_j(s)` (weak duality).  Every completion of the node that
    labels :math:`j` with :math:`s` contains the problem "node + :math:`(x_j,
    s)`" (more non-negative terms only raise the minimum), so it costs at least
    :math:`J_N + \delta_j(s)`.  If that reaches :math:`J_{inc}`, no completion
    improving the incumbent gives :math:`j` the label :math:`s`: :math:`j` is
    fixed to :math:`-s`.  All such points are fixed at once and the node's SVM
    re-solved with them; its value, now including the losses of the fixed points
    that lie inside the margin, is a lower bound of every *improving* completion
    of the node, and completions that do not improve cost at least
    :math:`J_{inc}`; the node's bound is therefore still valid for
    :math:`\min(J_{inc}, \cdot)`, which is what pruning and the open-node bound
    use (the open-node bound is capped by the incumbent).  When the fixed labels
    alone break the balance window the node has no improving completion and is
    dropped; when both labels of a point are excluded, likewise.  The incumbent
    only decreases, so a fixing stays valid for the rest of the search.  Tested
    against brute force (``tests/test_tsvm.py``, fixing on and off) and by the
    property tests.
    """

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
        progress: _Progress | None = None,
        branch: str = "confident",
        fixing: bool = True,
    ) -> None:
        self.K, self.y0, self.cost0, self.U = K, y, cost, U
        self.C_star, self.lo, self.hi = C_star, lo, hi
        self.n_neg_max = U.size - lo
        self.max_nodes, self.deadline, self.callback = max_nodes, deadline, callback
        self.progress = progress
        self.n_nodes = 0
        self.best_obj = np.inf
        self.best_labels: np.ndarray | None = None
        self.best_sol: L2SVMResult | None = None
        self.history: list = []
        self.termination = "complete"
        self.root_obj = 0.0
        self.stack: list = []
        self.branch = branch
        self.fixing = fixing
        self.n_fixed = 0  # labels fixed by reduced costs
        self.started = False  # run() called: the stack holds the open nodes
        # lower bounds of leaves whose SVM did not converge (see lower_bound)
        self.unresolved: list[float] = []
        # upper bound of lambda_max of the centred K_UU (balance bound), or None
        self.lam: float | None = None

    # -- helpers ---------------------------------------------------------------
    def _solve(self, y, cost, warm: L2SVMResult | None) -> L2SVMResult:
        """The node's L2-SVM; when Newton stops unconverged (its objective is
        then above the node's optimum: no bound), one cold retry with a larger
        step budget.  Callers use ``objective`` as a bound only if
        ``converged``."""
        if warm is None:
            res = l2svm_primal(self.K, y, cost)
        else:
            res = l2svm_primal(self.K, y, cost, alpha0=warm.alpha, b0=warm.b, f0=warm.f)
        if not res.converged:
            res = l2svm_primal(self.K, y, cost, max_iter=1000)
        return res

    def _record(self, labels_U: np.ndarray, sol: L2SVMResult, how: str) -> None:
        if sol.objective < self.best_obj:
            self.best_obj = sol.objective
            self.best_labels = labels_U.copy()
            self.best_sol = sol
            self.history.append(
                {"nodes": self.n_nodes, "objective": sol.objective, "how": how}
            )
            if self.progress is not None:
                self.progress.line(
                    "*",
                    1,
                    self.n_nodes,
                    self.best_obj,
                    self.open_bound(),
                    how,
                    len(self.stack),
                )

    def incumbent(self) -> tuple[np.ndarray, L2SVMResult]:
        """The best labeling of U and its L2-SVM (the first descent records one)."""
        assert self.best_labels is not None and self.best_sol is not None
        return self.best_labels, self.best_sol

    def open_bound(self) -> float:
        """Smallest lower bound over the open nodes (``best_obj`` if none).

        Before the search starts (the initial incumbents), the root's value:
        the SVM on the labeled points, a lower bound of every completion."""
        if not self.started:
            return min(self.root_obj, self.best_obj)
        bounds = [e[7] for e in self.stack]
        if not bounds:
            return self.best_obj if np.isfinite(self.best_obj) else self.root_obj
        return min(self.best_obj, max(self.root_obj, min(bounds)))

    def lower_bound(self) -> float:
        """Proven lower bound of the (sub)problem's optimum.

        Leaves whose SVM did not converge (``unresolved``: their recorded value
        may exceed their labeling's optimum) keep the bound they had."""
        low = min(self.unresolved, default=np.inf)
        if self.termination == "complete":
            return min(self.best_obj, low)
        return min(self.open_bound(), max(low, self.root_obj))

    def proven(self) -> bool:
        """The search finished and no unresolved leaf lies below the incumbent."""
        return self.termination == "complete" and not any(
            not self._prunable(v) for v in self.unresolved
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
        assert sol is not None  # the loop ran
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

    def _fix(self, y, cost, sol, free, f_free, d_pos, d_neg, slack, n_pos, n_neg):
        """Reduced-cost fixing: returns ``True`` when the node was replaced.

        A completion giving ``j`` the label ``-1`` costs at least
        ``sol.objective + d_neg[j]`` (:func:`add_point_bounds`, and adding the
        other points only raises it); when that reaches the incumbent, every
        completion that could still improve it labels ``j`` positive (and
        symmetrically).  All such points are fixed at once, the SVM re-solved
        with them (a stronger bound for the node: the fixed points inside the
        margin raise the objective) and the node pushed back; it is dropped
        when the fixed labels break the balance window.
        """
        to_pos = self._prunable_vec(sol.objective + d_neg - slack)
        to_neg = self._prunable_vec(sol.objective + d_pos - slack)
        if (to_pos & to_neg).any():
            return True  # both labels of a point are too costly: prune
        fix = to_pos | to_neg
        if not fix.any():
            return False
        lab = np.where(to_pos[fix], 1.0, -1.0)
        n_pos2 = n_pos + int(np.count_nonzero(lab > 0))
        n_neg2 = n_neg + int(np.count_nonzero(lab < 0))
        if n_pos2 > self.hi or n_neg2 > self.n_neg_max:
            return True  # no improving completion fits the balance window
        y2 = y.copy()
        cost2 = cost.copy()
        idx = free[fix]
        y2[idx] = lab
        cost2[idx] = self.C_star
        if np.all(lab * f_free[fix] >= 1.0):
            sol2 = sol  # all outside the margin with their label: same SVM
        else:
            sol2 = self._solve(y2, cost2, sol)
        self.n_fixed += idx.size
        # the re-solved value bounds the node only when Newton converged;
        # otherwise the node's own value still does
        lb2 = sol2.objective if sol2.converged else sol.objective
        self.stack.append((y2, cost2, sol2, -1, 0.0, n_pos2, n_neg2, lb2 - slack))
        return True

    def _branch_inexact(self, y, cost, sol, n_pos, n_neg, lb) -> None:
        """A node whose SVM did not converge: its value bounds nothing, so it is
        neither pruned nor fixed; a complete labeling is recorded (its objective
        at an achievable ``(alpha, b)`` is an upper bound), otherwise both
        children are pushed with the parent's bound ``lb``."""
        free = self.U[y[self.U] == 0]
        if free.size == 0:
            self._record(y[self.U], sol, "leaf")
            self.unresolved.append(lb)
            return
        for lab_c, ok in (
            (-1.0, n_neg < self.n_neg_max),
            (1.0, n_pos < self.hi),
        ):
            if ok:
                self.stack.append(
                    (
                        y,
                        cost,
                        sol,
                        int(free[0]),
                        lab_c,
                        n_pos + (lab_c > 0),
                        n_neg + (lab_c < 0),
                        lb,
                    )
                )

    def _prunable_vec(self, obj: np.ndarray) -> np.ndarray:
        return obj >= self.best_obj - 1e-12 * max(1.0, abs(self.best_obj))

    # -- the search ------------------------------------------------------------
    def run(self, root: L2SVMResult) -> None:
        U = self.U
        y_root = self.y0.copy()
        cost_root = self.cost0.copy()
        # stack entries: (y, cost, parent solution, point, label, n_pos, n_neg,
        # lower bound of the child)
        stack = self.stack
        stack.append((y_root, cost_root, root, -1, 0.0, 0, 0, -np.inf))
        self.started = True
        while stack:
            if self._stop():
                return
            if self.progress is not None and self.progress.due(5.0):
                self.progress.line(
                    " ",
                    1,
                    self.n_nodes,
                    self.best_obj,
                    self.open_bound(),
                    "",
                    len(stack),
                )
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
            if not sol.converged:  # no bound from this node: branch, keep lb
                self._branch_inexact(y, cost, sol, n_pos, n_neg, lb)
                continue
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
                    if not sol2.converged:  # the node's value still bounds it
                        self.unresolved.append(sol.objective)
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
            if self.lam is not None and sol.converged:
                # labeling all free points: the balance (needs the node's exact
                # optimum, whose dual value is sol.objective)
                m = free.size
                bound = max(
                    bound,
                    balance_bound(
                        f_free,
                        max(self.lo - n_pos, m - (self.n_neg_max - n_neg)),
                        self.hi - n_pos,
                        self.lam,
                        self.C_star,
                    ),
                )
            if self._prunable(sol.objective + bound - slack):
                continue
            if self.fixing and self._fix(
                y, cost, sol, free, f_free, d_pos, d_neg, slack, n_pos, n_neg
            ):
                continue
            if self.branch == "bound":
                # the weaker child's bound is largest (ties: least confident):
                # both children's bounds rise, which is what a proof needs
                k = int(np.lexsort((np.abs(f_free), -np.minimum(d_pos, d_neg)))[0])
            elif self.branch == "margin":  # least confident: raises bounds fast
                k = int(np.argmin(np.abs(f_free)))
            else:  # most confident: good labelings early
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
                        max(sol.objective + d, sol.objective + bound) - slack,
                    )
                )
            if self.callback is not None and self.n_nodes % 1000 == 0:
                if self.callback(
                    {
                        "nodes": self.n_nodes,
                        "best_objective": self.best_obj,
                        "lower_bound": self.open_bound(),
                    }
                ):
                    self.termination = "callback"
                    return
        if any(not self._prunable(v) for v in self.unresolved):
            self.termination = "inexact"  # finished, but not a proof


#: largest ``u`` for which the balance bound's eigenvalue is computed (dense
#: ``eigvalsh`` of the ``u x u`` centred Gram matrix, once per search)
BALANCE_BOUND_MAX_U = 2500


def centred_top_eigenvalue(K_UU: np.ndarray) -> float:
    r"""Upper bound of :math:`\lambda_{\max}(H K_{UU} H)`, :math:`H = I - \mathbf
    1\mathbf 1^\top / u` (the largest value of :math:`c^\top K c / \|c\|^2` over
    :math:`c \perp \mathbf 1`).

    LAPACK's symmetric eigensolver is backward stable: the computed eigenvalues
    are those of a matrix within :math:`O(u\,\epsilon)\|K\|` of :math:`HKH`; the
    returned value adds :math:`10^{-10}\,(\operatorname{tr} K + 1)`, far above
    that error, so it is an upper bound.
    """
    u = K_UU.shape[0]
    if u < 2:
        return 0.0
    A = K_UU - K_UU.mean(axis=0, keepdims=True)
    A = A - A.mean(axis=1, keepdims=True)
    A = 0.5 * (A + A.T)
    lam = float(np.linalg.eigvalsh(A)[-1])
    return max(lam, 0.0) + 1e-10 * (float(np.trace(K_UU)) + 1.0)


def balance_bound(
    f_free: np.ndarray, p_lo: int, p_hi: int, lam: float, C_star: float
) -> float:
    r"""Lower bound on the cost of labeling *all* free points of a node.

    Setting.  A node's L2-SVM (labeled points plus the points of ``U`` fixed so
    far, set :math:`A`) has optimum :math:`J_N`, dual solution
    :math:`\alpha^\star` and decision values :math:`f = K\alpha^\star + b^\star`.
    Its completions label the :math:`m` free points :math:`F` with
    :math:`s \in \{\pm1\}^m` holding :math:`P \in [p_{lo}, p_{hi}]` positives
    (the balance window minus the positives already fixed).

    Claim.  Every such completion costs at least :math:`J_N + \min_{P}
    B_P`, where, with :math:`\mu = (2P - m)/m`, :math:`\|c\|^2 = m(1 - \mu^2)`,
    :math:`T_P` the sum of the :math:`P` largest :math:`f_j` and
    :math:`S = \sum_F f_j`,

    .. math::

        B_P = \frac{\bigl(\|c\|^2 - (2T_P - S) + \mu S\bigr)_+^2}
                   {2\|c\|^2\,(\lambda + 1/(2C^\star))},

    :math:`\lambda \ge \lambda_{\max}(H K_{UU} H)` (:func:`centred_top_eigenvalue`).

    Proof (weak duality with the balance inside the dual step).  The dual of
    the L2-SVM on :math:`A \cup F` is :math:`D(\alpha) = \sum_i y_i\alpha_i -
    \frac12\alpha^\top K\alpha - \sum_i \alpha_i^2/(4C_i)` over
    :math:`\sum_i\alpha_i = 0`, :math:`y_i\alpha_i \ge 0`; every feasible
    :math:`\alpha` gives :math:`D(\alpha) \le` the completion's optimum, and
    :math:`D_A(\alpha^\star) = J_N` (strong duality of the node's QP).  Take
    :math:`\alpha = (\alpha^\star, \tau c)` with :math:`c = s - \mu\mathbf 1`,
    :math:`\tau \ge 0`.  It is feasible: :math:`\sum_F c_j = P - (m - P) - m\mu
    = 0`, and :math:`s_j c_j = 1 - \mu s_j \ge 0` since :math:`|\mu| \le 1`.
    Expanding, with :math:`(K\alpha^\star)_j = f_j - b^\star` and
    :math:`\sum c_j = 0`,

    .. math::

        D(\alpha^\star, \tau c) = J_N + \tau\bigl(\textstyle\sum_F s_jc_j -
        c^\top f_F\bigr) - \tfrac{\tau^2}{2}\bigl(c^\top K_{FF}c +
        \|c\|^2/(2C^\star)\bigr),

    and :math:`\sum_F s_j c_j = m - \mu(2P - m) = \|c\|^2`.  Zero-extended to
    :math:`U`, :math:`c \perp \mathbf 1`, so :math:`c^\top K_{FF} c \le
    \lambda\|c\|^2`; and :math:`c^\top f_F = \sum s_j f_j - \mu S \le (2T_P - S)
    - \mu S` (the :math:`P` largest values get the positive labels).  Maximising
    the resulting concave quadratic over :math:`\tau \ge 0` gives :math:`B_P`;
    the minimum over the feasible counts covers every completion.  It adds the
    *balance* to the relaxation: a node whose free points all sit near
    :math:`f = 0` must move many of them, whatever their labels, while the
    one-point bounds of :func:`~semisvm.solvers._l2svm.add_point_bounds` see
    one point at a time.  Tested against brute force in
    ``tests/test_tsvm_bounds.py``.

    Parameters
    ----------
    f_free : ndarray of shape (m,)
        Decision values of the node's solution at the free points.
    p_lo, p_hi : int
        Feasible numbers of positives among the free points.
    lam : float
        Upper bound of the largest eigenvalue of the centred :math:`K_{UU}`.
    C_star : float

    Returns
    -------
    bound : float
        :math:`\min_P B_P \ge 0` (``inf`` when no count is feasible).
    """
    m = f_free.size
    p_lo, p_hi = max(p_lo, 0), min(p_hi, m)
    if m == 0 or p_lo > p_hi:
        return np.inf if p_lo > p_hi else 0.0
    S = float(f_free.sum())
    if p_lo == p_hi:  # a strict window: one count (the common case, fast)
        return _one_count_bound(f_free, p_lo, S, lam, C_star)
    cs = np.r_[0.0, np.cumsum(np.sort(f_free)[::-1])]
    P = np.arange(p_lo, p_hi + 1)
    mu = (2.0 * P - m) / m
    c2 = 4.0 * P * (m - P) / m
    a = np.maximum(c2 - (2.0 * cs[P] - S) + mu * S, 0.0)
    ok = c2 > 0  # P = 0 or m: c = 0, the step is void
    B = np.zeros(P.size)
    B[ok] = a[ok] ** 2 / (2.0 * c2[ok] * (lam + 0.5 / C_star))
    return float(B.min())


def _one_count_bound(
    f_free: np.ndarray, P: int, S: float, lam: float, C_star: float
) -> float:
    """:math:`B_P` of the one count ``P`` of a strict window (``S``: sum of f_free)."""
    m = f_free.size
    if P == 0 or P == m:
        return 0.0
    top = float(-np.partition(-f_free, P - 1)[:P].sum())
    mu = (2.0 * P - m) / m
    c2 = 4.0 * P * (m - P) / m
    a = max(c2 - (2.0 * top - S) + mu * S, 0.0)
    return a * a / (2.0 * c2 * (lam + 0.5 / C_star))


#: neighbourhood sizes of the graph hints (kNN graphs in the kernel's metric)
GRAPH_HINT_KS = (3, 5, 8, 12, 20)


def _graph_hints(
    K: np.ndarray, y: np.ndarray, ks: tuple[int, ...] = GRAPH_HINT_KS
) -> list[np.ndarray]:
    r"""Harmonic-function scores of the unlabeled points, one per graph.

    A *heuristic* for the incumbent only (it never enters a bound).  For each
    ``k`` in ``ks``: the symmetric binary ``k``-nearest-neighbour graph in the
    kernel's own metric :math:`d(i, j)^2 = K_{ii} + K_{jj} - 2K_{ij}` (so any
    kernel, callable or precomputed, works), its Laplacian :math:`L = D - W`
    and the harmonic function of Zhu, Ghahramani & Lafferty (2003),

    .. math::

        h_U = -(L_{UU} + \epsilon I)^{-1} L_{UL}\, y_L ,\qquad \epsilon = 10^{-8},

    which propagates the labels along the data manifold (:math:`\epsilon`
    keeps components without a labeled point at ``h = 0``).  The caller turns
    each score into a balanced labeling and improves it by alternating
    minimisation.  Local TSVM heuristics started from the supervised SVM stop
    in poor minima on two moons (error 16-41% on the benchmark problems of
    ``benchmarks/tsvm/bench_exact_small.py``); the graph hints start at the
    global optimum there, which leaves the branch and bound only the proof.

    Returns
    -------
    scores : list of ndarray of shape (u,)
        One score per ``k`` (``k < n``), in the order of ``np.flatnonzero(y == 0)``.
    """
    n = K.shape[0]
    U = np.flatnonzero(y == 0)
    L = np.flatnonzero(y != 0)
    ks = tuple(k for k in ks if k < n)
    if U.size == 0 or not ks:
        return []
    kmax = max(ks)
    d = np.diag(K)
    nbrs = np.empty((n, kmax), dtype=np.intp)
    for start in range(0, n, 512):  # blocks of rows: O(512 n) memory
        rows = slice(start, min(n, start + 512))
        D2 = d[rows, None] + d[None, :] - 2.0 * K[rows]
        D2[np.arange(D2.shape[0]), np.arange(rows.start, rows.stop)] = np.inf
        part = np.argpartition(D2, kmax - 1, axis=1)[:, :kmax]
        order = np.argsort(np.take_along_axis(D2, part, axis=1), axis=1, kind="stable")
        nbrs[rows] = np.take_along_axis(part, order, axis=1)
    out = []
    for k in ks:
        heads = np.repeat(np.arange(n), k)
        W = sp.csr_matrix((np.ones(n * k), (heads, nbrs[:, :k].ravel())), shape=(n, n))
        W = W.maximum(W.T)
        Lap = sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W
        Lap = Lap.tocsr()
        A = Lap[U][:, U] + 1e-8 * sp.identity(U.size, format="csr")
        rhs = -(Lap[U][:, L] @ y[L])
        h = np.atleast_1d(spsolve(A.tocsc(), rhs))
        if np.all(np.isfinite(h)):
            out.append(h)
    return out


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
    progress: _Progress | None = None,
    root_descent: bool = True,
    branch: str = "confident",
    fixing: bool = True,
    graph_hints: bool = False,
    balance: bool = True,
) -> _Search:
    r"""Branch and bound on ``K`` with ``y == 0`` marking the unlabeled points.

    The initial upper bound comes from alternating minimisation started at the
    root's balanced sign labeling (``root_descent``) and at each hint.
    ``branch='confident'`` branches on the free point of largest :math:`|f|`
    (finds good labelings early); ``'margin'`` on the smallest; ``'bound'`` on
    the point whose weaker child has the largest dual bound
    :math:`\min(\delta_j(+1), \delta_j(-1))` (ties: smallest :math:`|f|`),
    the rule for proving a good incumbent optimal (two moons, 100 points,
    defaults of :class:`~semisvm.models._tsvm.ExactTSVM`, proof of the optimal
    labeling: 21,565 nodes against 24,443 with ``'margin'`` and 231,818 with
    ``'confident'``).  ``graph_hints`` adds the labelings of
    :func:`_graph_hints` to the initial upper bound.
    """
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
        progress=progress,
        branch=branch,
        fixing=fixing,
    )
    if balance and 2 <= U.size <= BALANCE_BOUND_MAX_U:
        search.lam = centred_top_eigenvalue(K[np.ix_(U, U)])
    root = search._solve(search.y0, cost, None)
    # the root's value bounds every completion only when it is the optimum
    # (0 always does: the objective is non-negative)
    search.root_obj = root.objective if root.converged else 0.0
    if U.size == 0:
        search.n_nodes = 1
        search._record(np.zeros(0), root, "leaf")
        return search
    if root_descent or not hints:
        search.descend(_balanced_signs(root.f[U], lo, hi), root)
    for h in hints or []:
        # a hint is a labeling of U, or (labeling, L2SVMResult to warm-start)
        h, warm = h if isinstance(h, tuple) else (h, None)
        search.descend(_balanced_signs(np.asarray(h, float), lo, hi), warm)
    if graph_hints:
        for h in _graph_hints(K, search.y0):
            search.descend(_balanced_signs(h, lo, hi), root)
    search.run(root)
    return search


def _check_problem(K: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """K as float64 and y in the solvers' target convention (one column)."""
    K = np.asarray(K, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be square; got K {K.shape}.")
    Y = as_targets(y, K.shape[0], name="y")
    if Y.shape[1] != 1:
        raise ValueError(
            f"The TSVM solvers solve one problem: y must have shape ({K.shape[0]},) "
            f"or ({K.shape[0]}, 1), got {Y.shape}."
        )
    y = Y[:, 0]
    if not np.isfinite(K).all():
        raise ValueError("K contains NaN or infinity.")
    if not ((y > 0).any() and (y < 0).any()):
        raise ValueError("Both classes need at least one labeled point.")
    return K, y


def _check_limits(max_nodes, time_limit) -> None:
    if max_nodes is not None and max_nodes < 1:
        raise ValueError(f"max_nodes must be a positive integer, got {max_nodes}.")
    if time_limit is not None and not time_limit > 0:
        raise ValueError(f"time_limit must be positive seconds, got {time_limit}.")


def _default_fraction(y: np.ndarray, positive_fraction: float | None) -> float:
    if positive_fraction is None:
        lab = y[y != 0]
        return float(np.mean(lab > 0))
    return float(positive_fraction)


def _draw_sample(
    rng,
    mu: np.ndarray,
    size: int,
    margin_f: np.ndarray | None,
    keep: bool,
    extra: np.ndarray | None = None,
) -> np.ndarray:
    """Sample ``R`` of ``size`` indices of ``U`` (sorted).

    With ``keep``, the incumbent's margin points (``|f| < 1``, at most
    ``size // 2``, smallest ``|f|`` first) and then the points of ``extra`` (in
    order, at most ``size // 4``) enter ``R`` deterministically; the rest is
    drawn without replacement with probability proportional to ``mu``.
    """
    seed = np.zeros(0, dtype=np.intp)
    if keep and margin_f is not None:
        a = np.abs(margin_f)
        cand = np.flatnonzero(a < 1.0)
        seed = cand[np.argsort(a[cand], kind="stable")[: size // 2]]
    if keep and extra is not None and extra.size:
        more = extra[~np.isin(extra, seed)][: size // 4]
        seed = np.r_[seed, more].astype(np.intp)
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
    verbose: int = 0,
    graph_hints: bool = True,
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
        Called every 1000 nodes with a dict ``{"nodes", "best_objective",
        "lower_bound"}``; returning ``True`` stops the search.
    verbose : int, default=0
        ``> 0`` prints a progress log (each new incumbent, and the state every
        5 s: nodes, incumbent, lower bound, relative gap).
    graph_hints : bool, default=True
        Add the graph hints (:func:`_graph_hints`) to the initial upper bound
        and branch on the free point whose weaker child has the largest bound
        (``False``: the root labeling only, most confident point first, as
        Chapelle et al.).  Either way the result is exact when the search
        finishes.

    Returns
    -------
    result : TSVMResult
        ``is_global_optimum`` is ``True`` iff the search finished; otherwise
        ``lower_bound`` is the smallest bound of the open nodes.

    Notes
    -----
    A node is a partial labeling of :math:`U`; its lower bound is the L2-SVM
    objective on :math:`L` plus the points labeled so far (adding points can only
    raise it), strengthened by reduced-cost fixing (:class:`_Search`).  Depth
    first; branch on the unlabeled point with the largest :math:`|f(x)|` and try
    the label :math:`\operatorname{sign} f(x)` first; prune when the bound reaches
    the best complete objective; once one class is full the remaining points are
    forced.  Two exact shortcuts: a child whose new point already lies outside
    the margin with its label reuses the parent's solution, and a node whose
    unlabeled points all lie outside the margin with a sign labeling that fits
    the balance is a leaf whose completion costs nothing (Observation 3.2 of the
    randomized paper).  The initial upper bound comes from alternating
    minimisation (solve the SVM, relabel :math:`U` by the balanced sign of
    :math:`f`, repeat).  Worst case :math:`O(2^u)` nodes, each an L2-SVM solve
    warm-started from its parent (:func:`~semisvm.solvers._l2svm.l2svm_primal`).

    References
    ----------
    O. Chapelle, V. Sindhwani, S. S. Keerthi, "Branch and bound for
    semi-supervised support vector machines", NIPS 19, 2006.
    """
    K, y = _check_problem(K, y)
    _check_limits(max_nodes, time_limit)
    u = int(np.count_nonzero(y == 0))
    lo, hi = balance_bounds(u, _default_fraction(y, positive_fraction), balance_tol)
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    progress = _Progress(
        verbose, t0, f"branch and bound, u={u}, positives in [{lo}, {hi}]"
    )
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
        progress=progress,
        graph_hints=graph_hints,
        branch="bound" if graph_hints else "confident",
    )
    best_labels, sol = s.incumbent()
    lower = s.lower_bound()
    progress.line(" ", 1, s.n_nodes, s.best_obj, lower, s.termination, len(s.stack))
    return TSVMResult(
        labels=best_labels,
        alpha=sol.alpha,
        b=sol.b,
        objective=sol.objective,
        is_global_optimum=s.proven(),
        reason=s.termination,
        n_nodes=s.n_nodes,
        n_rounds=1,
        weights=None,
        n_violators=0,
        history=s.history,
        lower_bound=float(lower),
    )


def _full_descent(
    K: np.ndarray,
    y: np.ndarray,
    cost: np.ndarray,
    U: np.ndarray,
    lo: int,
    hi: int,
    labels: np.ndarray,
    alpha0: np.ndarray | None,
    b0: float | None,
    max_steps: int = 20,
) -> tuple[np.ndarray, L2SVMResult]:
    """Alternating minimisation on the whole set from a balanced ``labels``.

    Returns the best (labels, L2-SVM solution) pair met; every pair has a
    labeling inside ``[lo, hi]`` and its exact full objective.
    """
    yy = y.copy()
    best_lab, best = None, None
    sol = None
    for _ in range(max_steps):
        yy[U] = labels
        if sol is None and alpha0 is not None:
            supp = np.flatnonzero(alpha0)
            f0 = K[:, supp] @ alpha0[supp] + b0
            sol = l2svm_primal(K, yy, cost, alpha0=alpha0, b0=b0, f0=f0)
        elif sol is None:
            sol = l2svm_primal(K, yy, cost)
        else:
            sol = l2svm_primal(K, yy, cost, alpha0=sol.alpha, b0=sol.b, f0=sol.f)
        if best is None or sol.objective < best.objective:
            best_lab, best = labels.copy(), sol
        new = _balanced_signs(sol.f[U], lo, hi)
        if np.array_equal(new, labels):
            break
        labels = new
    assert best_lab is not None and best is not None, "max_steps >= 1"
    return best_lab, best


def _check_sampling(u: int, sample_size: int | None, max_iter: int) -> int:
    """``sample_size`` (default ``min(u, 50)``) and ``max_iter`` checked."""
    if sample_size is None:
        sample_size = min(u, 50)
    if sample_size > u:
        raise ValueError(
            f"sample_size={sample_size} is larger than the number of unlabeled "
            f"points u={u}."
        )
    if sample_size < 1 and u > 0:
        raise ValueError(f"sample_size must be at least 1, got {sample_size}.")
    if max_iter < 1:
        raise ValueError(f"max_iter must be at least 1, got {max_iter}.")
    return sample_size


def tsvm_randomized(
    K: np.ndarray,
    y: np.ndarray,
    *,
    C: float = 1.0,
    C_star: float = 1.0,
    positive_fraction: float | None = None,
    balance_tol: float = 0.0,
    sample_size: int | None = None,
    max_iter: int = 100,
    max_nodes: int | None = None,
    time_limit: float | None = None,
    random_state=None,
    callback: Callable | None = None,
    keep_incumbent_margin: bool = True,
    full_search_after: int | None = 2,
    verbose: int = 0,
    graph_hints: bool = True,
) -> TSVMResult:
    r"""Exact L2-loss transductive SVM by random sampling (Clarkson's Basis2).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Gram matrix over all points (converted to float64).
    y : ndarray of shape (n,)
        ``+1``/``-1`` for labeled points, ``0`` for unlabeled ones.
    C, C_star, positive_fraction, balance_tol
        As in :func:`tsvm_branch_and_bound`.
    sample_size : int or None, default=None
        ``|R|``; ``None`` means ``min(u, 50)``.  Must not exceed ``u``.
    max_iter : int, default=100
        Maximum number of rounds.
    max_nodes : int or None, default=None
        Total branch-and-bound node budget over all rounds.
    time_limit : float or None, default=None
        Wall-clock limit of the whole run, in seconds.
    random_state : int, RandomState instance or None, default=None
        Seeds the sampling (the run is reproducible for a fixed seed).
    callback : callable or None, default=None
        Called with each round's record (a dict); ``True`` stops the run.
    keep_incumbent_margin : bool, default=True
        Put the incumbent's margin points (``|f| < 1`` on the whole set; at most
        ``sample_size // 2``, smallest ``|f|`` first) into every sample, the rest
        drawn at random (Clarkson: once the incumbent is optimal its basis is in
        ``R``); the certificate does not depend on ``R``.  ``False``: plain Basis2.
    full_search_after : int or None, default=2
        After this many rounds in a row without a better incumbent, or after
        the last round, the branch and bound over the whole set (``None``:
        never) runs from the incumbent for the rest of the budget: it proves the
        incumbent (or a better labeling) optimal, or its smallest open-node
        bound becomes the lower bound.
    verbose : int, default=0
        ``> 0`` prints one log line per round (time, rounds, nodes, incumbent,
        lower bound, relative gap, violators) and the whole-set branch and
        bound's log (a line every 5 s and at each new incumbent); ``> 1`` also
        the sample searches' logs.
    graph_hints : bool, default=True
        Start from the best balanced labeling that alternating minimisation on
        the whole set reaches from the graph hints (:func:`_graph_hints`:
        harmonic label propagation on kNN graphs in the kernel's metric).
        Only the incumbent depends on it, never a bound.

    Returns
    -------
    result : TSVMResult
        The incumbent (always inside the balance window, ``objective``
        evaluated on the whole set), the proven ``lower_bound`` and
        ``is_global_optimum``.

    Notes
    -----
    One round: draw ``R`` with probability :math:`\propto\mu` without
    replacement (plus the incumbent's margin points); solve the relaxed sample
    problem :math:`P_R` (positives in ``R`` anywhere in
    :math:`[\max(0, p_{lo} - (u - r)), \min(r, p_{hi})]`) by branch and bound,
    warm-started with the incumbent's labels on ``R``; raise the lower bound to
    its optimum; violators :math:`V = \{j\in U\setminus R: |f(x_j)| < 1\}` get
    :math:`\mu_V \leftarrow 2\mu_V`; the labeling (``R`` from the branch and
    bound, :math:`\operatorname{sign} f` elsewhere, the least confident points
    flipped to meet the balance window) is improved by alternating
    minimisation on the whole set and replaces the incumbent when better.  The
    run stops with a certificate when incumbent and lower bound meet (module
    docstring: why this is a proof, and why it includes Clarkson's "no
    violator and balanced" rule), or when ``max_iter``, ``max_nodes``,
    ``time_limit`` or ``callback`` stops it; the incumbent is then the best
    labeling found and ``lower_bound`` tells how far from optimal it can be.
    Proofs are attempted only when Clarkson's rule fires on a searched sample
    (no violator, induced labeling balanced); the searched sample's count
    window is centred on the guiding labeling's count in ``R`` (fast, but not
    a relaxation: its optimum is never used as a bound).  After
    ``full_search_after`` rounds in a row without a better incumbent (failed
    proofs, or samples whose violators keep the rule from firing) the
    whole-set branch and bound takes over.

    *Why the paper's rule alone is not a proof*: the balance constraint scaled
    to the sample is not a restriction of the whole problem, so "no violator"
    does not give monotonicity; the smallest counterexamples (:math:`u = 2`,
    :math:`|R| = 1`) are tests (``tests/test_tsvm_clarkson_rule.py``) and the
    argument is in ``docs/tsvm.rst`` ("The paper's rule is not a proof").  The library
    never certifies from the scaled window: the sample problem used as a bound
    is :math:`P_R` with the relaxed window (:class:`_RandomizedRun` proves its
    optimum is at most :math:`J^\star`), and the certificate is the comparison
    of an exactly evaluated balanced incumbent with that bound.

    The relaxed window is wide when ``r`` is small against ``u`` (no balance
    constraint in the sample at all when ``r <= min(p_lo, u - p_hi)``), so
    with a strict balance constraint whose unconstrained sample optimum is
    unbalanced, the lower bound may stay below the optimum: the result is then
    "best found", with its gap.

    References
    ----------
    G. Esposito, M. Martín, "A randomized algorithm for the exact solution of
    transductive support vector machines", Applied Artificial Intelligence, 2015.

    K. L. Clarkson, "Las Vegas algorithms for linear and integer programming
    when the dimension is small", Journal of the ACM 42(2), 1995.
    """
    K, y = _check_problem(K, y)
    _check_limits(max_nodes, time_limit)
    t0 = time.perf_counter()
    u = int(np.count_nonzero(y == 0))
    sample_size = _check_sampling(u, sample_size, max_iter)
    rng = check_random_state(random_state)
    if u == 0:
        res = tsvm_branch_and_bound(K, y, C=C, C_star=C_star)
        return dataclasses.replace(
            res, reason="certificate", n_rounds=0, weights=np.ones(0)
        )
    run = _RandomizedRun(
        K,
        y,
        C=C,
        C_star=C_star,
        positive_fraction=positive_fraction,
        balance_tol=balance_tol,
        sample_size=sample_size,
        max_iter=max_iter,
        max_nodes=max_nodes,
        deadline=None if time_limit is None else t0 + time_limit,
        t0=t0,
        rng=rng,
        callback=callback,
        keep_incumbent_margin=keep_incumbent_margin,
        full_search_after=full_search_after,
        verbose=verbose,
        graph_hints=graph_hints,
    )
    return run.run()


@dataclass
class _Sample:
    """One round's sample ``R`` and its searched solution (phase 1)."""

    R: np.ndarray  # indices into U
    sub: np.ndarray  # L then U[R], indices into the whole set
    K_sub: np.ndarray
    search: _Search  # the branch and bound on L u R
    f_U: np.ndarray  # its decision values on U
    V: np.ndarray  # violators: outside R, inside the margin (bool over U)
    n_viol: int
    n_pos: int  # positives of the induced labeling of U
    balance_ok: bool  # the induced labeling is inside the balance window


class _RandomizedRun:
    r"""State of one run of :func:`tsvm_randomized`, one method per phase.

    A round (:meth:`run`) is: :meth:`_draw` the sample, :meth:`_search` it
    (fast, under the guiding labeling's count in ``R``: not a bound),
    :meth:`_improve_incumbent` on the whole set, :meth:`_prove` on the relaxed
    sample problem when Clarkson's rule fires (the only sample bound), and,
    when the proofs stall, :meth:`_search_whole_set`; then :meth:`_log` and
    the weight update.  The bounds: ``lower`` only ever takes the root SVM on
    ``L``, optima (or open-node bounds) of relaxed problems :math:`P_R` and of
    the whole-set branch and bound, each capped by the incumbent.

    *The method* (the STSVM of the randomized paper, Algorithm 1).  Weights
    :math:`\mu_j = 1` on :math:`U`; each round draws :math:`R \subset U` of
    ``sample_size`` points (the guiding solution's margin points first), solves
    the sample by branch and bound on :math:`L \cup R` under the count of
    positives the guiding labeling has in :math:`R` (a fast search, *not* a
    bound), doubles :math:`\mu` on the violators :math:`V = \{j \in U \setminus
    R : |f(x_j)| < 1\}`, and turns the sample solution into a balanced labeling
    of the whole :math:`U` (improved by alternating minimisation on the whole
    set: the incumbent).  When Clarkson's rule fires (no violator, balanced), the
    *relaxed* sample problem below is solved exactly: its optimum is a lower
    bound.  If such rounds stop improving the incumbent (failed proofs, or
    samples with violators that never let the rule fire), a branch and bound
    over the whole set started from the incumbent finishes the proof or leaves
    its open-node bound.

    *Why the certificate is sound.*  Let :math:`|R| = r`.  The *relaxed sample
    problem* :math:`P_R` is the TSVM on :math:`L \cup R` whose number of
    positives in :math:`R` may be anything in

    .. math::

        [\max(0, p_{lo} - (u - r)),\ \min(r, p_{hi})],

    the set of counts that the restriction to :math:`R` of a feasible labeling
    of :math:`U` can have (the other :math:`u - r` points hold between 0 and
    :math:`u - r` positives).  (i) *Lower bound*: the restriction of an optimal
    labeling :math:`y^\star` of the full problem to :math:`R` is feasible for
    :math:`P_R`, and for every :math:`f` the full objective with :math:`y^\star`
    is at least the objective of :math:`P_R` with :math:`y^\star_R` (the dropped
    terms are non-negative); so :math:`\mathrm{opt}(P_R) \le J^\star` (and so is
    any lower bound of :math:`\mathrm{opt}(P_R)` from an unfinished search).
    (ii) *Upper bound*: the incumbent is a labeling of :math:`U` inside the
    balance window whose full objective :math:`J_{inc}` is evaluated exactly, so
    :math:`J^\star \le J_{inc}`.  The run is certified when :math:`J_{inc} \le
    \max_R \mathrm{opt}(P_R)` up to a relative ``1e-9`` (rounding of two Newton
    solves).  This covers Clarkson's stopping rule: if the sample solution
    :math:`f` has no violator and the labeling (:math:`y_R`,
    :math:`\operatorname{sign} f` on :math:`U \setminus R`) meets the balance
    window, then that labeling with the same :math:`f` has zero loss on
    :math:`U \setminus R`, so its full objective is at most
    :math:`\mathrm{opt}(P_R) \le J^\star`: it is optimal.  With a narrower count
    window on :math:`R` (e.g. one scaled to :math:`|R|`, or centred on the
    incumbent's count in :math:`R`) (i) fails and "no violators" proves nothing;
    such windows are not used.
    """

    def __init__(
        self,
        K,
        y,
        *,
        C,
        C_star,
        positive_fraction,
        balance_tol,
        sample_size,
        max_iter,
        max_nodes,
        deadline,
        t0,
        rng,
        callback,
        keep_incumbent_margin,
        full_search_after,
        verbose,
        graph_hints=True,
    ) -> None:
        self.K, self.y, self.C, self.C_star = K, y, C, C_star
        self.L = L = np.flatnonzero(y != 0)
        self.U = U = np.flatnonzero(y == 0)
        self.u = u = U.size
        self.lo, self.hi = lo, hi = balance_bounds(
            u, _default_fraction(y, positive_fraction), balance_tol
        )
        self.r = r = sample_size
        self.max_iter, self.max_nodes, self.deadline = max_iter, max_nodes, deadline
        self.t0, self.rng, self.callback = t0, rng, callback
        self.keep = keep_incumbent_margin
        self.full_search_after = full_search_after
        self.verbose = verbose
        self.mu = np.ones(u)
        self.progress = _Progress(
            verbose,
            t0,
            f"randomized (Clarkson), u={u}, r={r}, positives in [{lo}, {hi}]",
        )
        # the relaxation's window: every count of positives in R that the
        # restriction of a balanced labeling of U can have
        self.lo_X, self.hi_X = max(0, lo - (u - r)), min(r, hi)
        self.slack_R = int(math.floor(balance_tol * r + 1e-9))
        self.cost = np.where(y != 0, C, C_star)
        root = l2svm_primal(K[np.ix_(L, L)], y[L], np.full(L.size, C))
        # the SVM on L alone: a lower bound (when solved to optimality)
        self.lower = root.objective if root.converged else 0.0
        self.guide_f = K[np.ix_(U, L)] @ root.alpha + root.b  # steers the windows
        self.guide_key = (True, np.inf)  # (unbalanced, corrected score) of the guide
        self.inc_labels: np.ndarray | None = None
        self.inc: L2SVMResult | None = None
        self.inc_viol = 0
        self.history: list = []
        self.n_nodes = 0
        self.n_rounds = 0
        self.n_proofs = 0
        self.proof_seed: np.ndarray | None = None
        self.stall = 0  # rounds since the incumbent last improved
        self.n_full = 0
        self.certified = False
        self.termination = "max_iter"
        if graph_hints:
            self._graph_incumbent()

    def _graph_incumbent(self) -> None:
        """Initial incumbent: alternating minimisation on the whole set from
        each graph hint (:func:`_graph_hints`); the best balanced labeling is
        kept.  A heuristic: it only sets the upper bound."""
        for h in _graph_hints(self.K, self.y):
            lab, sol = _full_descent(
                self.K,
                self.y,
                self.cost,
                self.U,
                self.lo,
                self.hi,
                _balanced_signs(h, self.lo, self.hi),
                None,
                None,
                max_steps=20,
            )
            if sol.objective < self.upper():
                self.inc_labels, self.inc, self.inc_viol = lab, sol, 0
        if self.inc is not None:
            self.guide_f = self.inc.f[self.U]
            self.guide_key = (False, self.inc.objective)

    # -- helpers -----------------------------------------------------------------
    def upper(self) -> float:
        return np.inf if self.inc is None else self.inc.objective

    def _budget(self) -> int | None:
        if self.max_nodes is None:
            return None
        return max(1, self.max_nodes - self.n_nodes)

    def _inner_progress(self, what: str) -> _Progress | None:
        # the whole-set search may run for the rest of the budget: its log (a
        # line every 5 s and at each new incumbent) is shown from verbose=1
        if self.verbose > 1 or (self.verbose and what == "whole set"):
            return _Progress(
                max(1, self.verbose - 1), self.t0, f"round {self.n_rounds}: {what}"
            )
        return None

    def _gap_closed(self) -> bool:
        return _rel_gap(self.upper(), self.lower) <= CERTIFICATE_RTOL

    def _bb(self, K_sub, y_sub, lo, hi, hints, what, **kw) -> _Search:
        s = _branch_and_bound(
            K_sub,
            y_sub,
            C=self.C,
            C_star=self.C_star,
            lo=lo,
            hi=hi,
            hints=hints,
            max_nodes=self._budget(),
            deadline=self.deadline,
            progress=self._inner_progress(what),
            **kw,
        )
        self.n_nodes += s.n_nodes
        return s

    def _limit_reached(self) -> str | None:
        if self.n_rounds >= self.max_iter:
            return "max_iter"
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            return "time_limit"
        if self.max_nodes is not None and self.n_nodes >= self.max_nodes:
            return "max_nodes"
        return None

    # -- the phases of a round ------------------------------------------------------
    def _draw(self) -> np.ndarray:
        """``R``: the incumbent's margin points and the relaxation's violators
        (``keep_incumbent_margin``), the rest drawn with probability ``∝ mu``."""
        if self.r == self.u:
            return np.arange(self.u)
        seed_f = self.guide_f if self.guide_key[0] is False else None
        return _draw_sample(
            self.rng, self.mu, self.r, seed_f, self.keep, self.proof_seed
        )

    def _search(self, R: np.ndarray) -> _Sample:
        """(1) Search the sample under the count the reference labeling has in
        ``R`` (fast; not a relaxation, so never used as a bound)."""
        K, y, U, L, u = self.K, self.y, self.U, self.L, self.u
        sub = np.r_[L, U[R]]
        K_sub = K[np.ix_(sub, sub)]
        ref = _balanced_signs(self.guide_f, self.lo, self.hi)
        hints = [ref[R]] if self.inc_labels is None else [ref[R], self.inc_labels[R]]
        centre = int(np.count_nonzero(ref[R] > 0))
        s = self._bb(
            K_sub,
            y[sub],
            max(self.lo_X, centre - self.slack_R),
            min(self.hi_X, centre + self.slack_R),
            hints,
            "search",
        )
        best_labels, sol = s.incumbent()
        supp = np.flatnonzero(sol.alpha)
        f_U = K[np.ix_(U, sub[supp])] @ sol.alpha[supp] + sol.b
        in_R = np.zeros(u, bool)
        in_R[R] = True
        V = (~in_R) & (np.abs(f_U) < 1.0)
        n_viol = int(np.count_nonzero(V))
        induced = np.where(f_U >= 0, 1.0, -1.0)
        induced[R] = best_labels
        n_pos = int(np.count_nonzero(induced > 0))
        balance_ok = self.lo <= n_pos <= self.hi
        score = sol.objective + self.C_star * float(np.sum((1.0 - np.abs(f_U[V])) ** 2))
        if (not balance_ok, score) < self.guide_key:
            self.guide_f, self.guide_key = f_U, (not balance_ok, score)
        return _Sample(R, sub, K_sub, s, f_U, V, n_viol, n_pos, balance_ok)

    def _improve_incumbent(self, smp: _Sample) -> bool:
        """(2) A balanced labeling near the induced one, improved by alternating
        minimisation on the whole set; skipped while the sample solution leaves
        many violators (those full solves are large).  Returns ``improved``."""
        if not (smp.balance_ok or smp.n_viol <= self.r):
            return False
        (best_labels, sol), R = smp.search.incumbent(), smp.R
        pref = smp.f_U.copy()
        pref[R] = best_labels * (1.0 + np.abs(smp.f_U[R]))
        alpha_sub = np.zeros(self.y.size)
        alpha_sub[smp.sub] = sol.alpha
        cand_labels, cand = _full_descent(
            self.K,
            self.y,
            self.cost,
            self.U,
            self.lo,
            self.hi,
            _balanced_signs(pref, self.lo, self.hi),
            alpha_sub,
            sol.b,
            max_steps=5,
        )
        if cand.objective < self.upper():
            self.inc_labels, self.inc, self.inc_viol = cand_labels, cand, smp.n_viol
            return True
        return False

    def _prove(self, smp: _Sample) -> _Search | None:
        """(3) When Clarkson's rule fires on the searched sample (no violator,
        balanced), solve the relaxation :math:`P_R` exactly: its optimum (or
        open-node bound) is a lower bound of :math:`J^\\star`.  Its violators,
        the only points that can raise its optimum, seed the next samples."""
        if not (smp.search.proven() and smp.n_viol == 0 and smp.balance_ok):
            return None
        self.n_proofs += 1
        R, U = smp.R, self.U
        assert self.inc_labels is not None  # a balanced sample set the incumbent
        p = self._bb(
            smp.K_sub,
            self.y[smp.sub],
            self.lo_X,
            self.hi_X,
            [smp.search.incumbent()[0], self.inc_labels[R]],
            "proof",
        )
        self.lower = max(self.lower, min(p.lower_bound(), self.upper()))
        _, ps = p.incumbent()
        pp = np.flatnonzero(ps.alpha)
        a_P = np.abs(self.K[np.ix_(U, smp.sub[pp])] @ ps.alpha[pp] + ps.b)
        a_P[R] = np.inf
        seed = np.flatnonzero(a_P < 1.0)
        self.proof_seed = seed[np.argsort(a_P[seed], kind="stable")]
        self.mu[self.proof_seed] *= 2.0
        return p

    def _search_whole_set(self) -> tuple[_Search, bool]:
        """(4) The relaxations do not close the gap: branch and bound over the
        whole set from the incumbent (least confident first), for the rest of
        the budget.  Returns the search and ``improved``.  Without an
        incumbent (no sample gave a balanced labeling) it starts like the plain
        branch and bound: alternating minimisation from the root, most
        confident points first (the margin rule finds no good labeling there:
        two moons, u = 198, gap 91% after 40 s against a proof in 4 s)."""
        no_inc = self.inc is None  # the samples never gave a balanced labeling
        full = self._bb(
            self.K,
            self.y,
            self.lo,
            self.hi,
            None if no_inc else [(self.inc_labels, self.inc)],
            "whole set",
            root_descent=no_inc,
            branch="confident" if no_inc else "bound",
        )
        self.n_full += 1
        improved = False
        if full.best_obj < self.upper():
            self.inc_labels, self.inc, self.inc_viol = (
                full.best_labels,
                full.best_sol,
                0,
            )
            improved = True
        self.lower = max(self.lower, min(full.lower_bound(), self.upper()))
        return full, improved

    def _log(self, smp: _Sample, improved: bool) -> dict:
        """(5) The round's record (``history``, ``callback``) and log line."""
        obj_R = smp.search.incumbent()[1].objective
        record = {
            "round": self.n_rounds,
            "objective_R": obj_R,
            "lower_bound": self.lower,
            "incumbent": self.upper(),
            "gap": _rel_gap(self.upper(), self.lower),
            "n_violators": smp.n_viol,
            "n_positive": smp.n_pos,
            "balance_ok": smp.balance_ok,
            "n_nodes": self.n_nodes,
            "proofs": self.n_proofs,
            "whole_set_searches": self.n_full,
            "time": time.perf_counter() - self.t0,
        }
        self.history.append(record)
        self.progress.line(
            "*" if improved else " ",
            self.n_rounds,
            self.n_nodes,
            self.upper(),
            self.lower,
            f"obj_R={obj_R:.6g} violators={smp.n_viol} positives={smp.n_pos}"
            f"{'' if smp.balance_ok else ' (unbalanced)'} proofs={self.n_proofs}"
            f"{' whole-set search' if self.n_full else ''}",
        )
        return record

    # -- the loop ------------------------------------------------------------------
    def run(self) -> TSVMResult:
        while True:
            stop = self._limit_reached()
            if stop is not None:
                self.termination = stop
                break
            self.n_rounds += 1
            smp = self._search(self._draw())
            improved = self._improve_incumbent(smp)
            last = smp.search
            exact = last.termination == "complete"
            p = self._prove(smp)
            if p is not None:
                last, exact = p, p.termination == "complete"
            self.stall = 0 if improved else self.stall + 1
            self.certified = self._gap_closed()
            if (
                not self.certified
                and exact
                and self.full_search_after is not None
                and (
                    self.stall >= self.full_search_after
                    or self.n_rounds >= self.max_iter
                )
            ):
                last, improved_full = self._search_whole_set()
                improved = improved or improved_full
                self.certified = self._gap_closed()
                exact = last.termination == "complete"
            record = self._log(smp, improved)
            if self.certified:
                self.termination = "certificate"
                break
            self.mu[smp.V] *= 2.0
            if not exact:  # a search stopped at a limit: that limit stops the run
                self.termination = last.termination
                break
            if self.callback is not None and self.callback(record):
                self.termination = "callback"
                break
        return self._result()

    def _result(self) -> TSVMResult:
        if self.inc is None:  # stopped before any incumbent: one balanced labeling
            self.inc_labels, self.inc = _full_descent(
                self.K,
                self.y,
                self.cost,
                self.U,
                self.lo,
                self.hi,
                _balanced_signs(self.guide_f, self.lo, self.hi),
                None,
                None,
                max_steps=1,
            )
        inc = self.inc
        assert self.inc_labels is not None  # set with inc
        lower = min(self.lower, inc.objective) if self.certified else self.lower
        self.progress.line(
            " ", self.n_rounds, self.n_nodes, inc.objective, lower, self.termination
        )
        return TSVMResult(
            labels=self.inc_labels,
            alpha=inc.alpha,
            b=inc.b,
            objective=inc.objective,
            is_global_optimum=self.certified,
            reason=self.termination,
            n_nodes=self.n_nodes,
            n_rounds=self.n_rounds,
            weights=self.mu,
            n_violators=self.inc_viol,
            history=self.history,
            lower_bound=float(min(lower, inc.objective)),
        )
