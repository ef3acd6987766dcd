"""The result object every iterative solver returns."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["SolveResult"]


@dataclass(frozen=True)
class SolveResult:
    """Outcome of a LapSVM / LapRLS solver.

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
        Why each column stopped: ``"tol"``, ``"max_iter"``, ``"stability"``,
        ``"validation"``, ``"mixed"``, ``"error_vectors"``, ``"direct"``,
        ``"callback"``.
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
