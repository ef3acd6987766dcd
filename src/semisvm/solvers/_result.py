"""The result objects of the solvers: one base class, one stop-reason field.

Every solver returns a frozen dataclass derived from :class:`SolverResult`, whose
one field ``reason`` says why the run stopped, in the vocabulary of
:data:`STOP_REASONS` (one string, or one string per one-vs-rest column for the
solvers that treat C columns at once).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["STOP_REASONS", "SolveResult", "SolverResult"]

#: Every stop reason a solver reports, and what it means.
STOP_REASONS: dict[str, str] = {
    # iterative solvers (PCG, Newton, low-rank Newton, dual QP)
    "tol": "the stopping quantity fell below tol (confirmed on the true residual)",
    "max_iter": "the iteration cap was reached",
    "precision": "the arithmetic cannot resolve tol (the true criterion stalled)",
    "error_vectors": "the set of error vectors stopped changing (exact optimum)",
    "direct": "solved by one direct factorisation (exact optimum)",
    # data-based early stopping (PCG hooks, semisvm.solvers._early_stopping)
    "stability": "the unlabeled points' predicted labels stopped changing",
    "validation": "the validation error stopped improving",
    "mixed": "both stability and validation",
    "callback": "the user's callback asked to stop",
    # the regularization path
    "empty_L": "no labeled point left inside the margin",
    "no_more_events": "the last segment reaches lambda = 0 without event",
    "lambda_min": "the path reached lambda_min",
    "lambda_floor": "the next event lies below the numerical floor of lambda",
    "max_events": "the max_events guard was reached",
}


@dataclass(frozen=True, kw_only=True)
class SolverResult:
    """Base of every solver result.

    Attributes
    ----------
    reason : str or list of str
        Why the solver stopped, a key of :data:`STOP_REASONS`; one per column for
        the solvers that fit C one-vs-rest columns at once.
    """

    reason: str | list[str]


@dataclass(frozen=True, kw_only=True)
class SolveResult(SolverResult):
    """Outcome of a LapSVM / LapRLS solver (C one-vs-rest columns).

    Attributes
    ----------
    alpha : ndarray of shape (n, C)
        Expansion coefficients, one column per one-vs-rest problem.
    b : ndarray of shape (C,)
        Biases.
    n_iter : ndarray of shape (C,)
        Iterations used by each column.
    converged : ndarray of bool of shape (C,)
    reason : list of str
        Why each column stopped (:data:`STOP_REASONS`): ``"tol"``, ``"max_iter"``,
        ``"precision"``, ``"stability"``, ``"validation"``, ``"mixed"``,
        ``"error_vectors"``, ``"direct"``, ``"callback"``.
    objective : ndarray of shape (C,)
        Final objective value of each column.
    history : dict of lists
        Per-iteration records when asked for (objective, gradient norms, errors).
    n_ls_iter : ndarray of shape (C,)
        Total line-search steps (intervals visited) per column.
    n_products : ndarray of shape (C,) or None
        K-vector products spent on each column (PCG: one per iteration, plus the
        preconditioner's setup and the true-residual checks of the stopping rule).
    preconditioner : str or None
        Name of the PCG preconditioner used.
    """

    alpha: np.ndarray
    b: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray
    reason: list
    objective: np.ndarray
    history: dict = field(default_factory=dict)
    n_ls_iter: np.ndarray | None = None
    n_products: np.ndarray | None = None
    preconditioner: str | None = None
