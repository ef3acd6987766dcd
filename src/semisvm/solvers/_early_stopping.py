r"""The paper's data-based stopping rules as PCG callbacks (Melacci & Belkin 2011, Sec. 4.1).

:func:`semisvm.solvers.lapsvm_pcg` calls every hook after each iteration with the
state ``{"iteration", "Ka", "b", "alpha", "active", ...}``.  A hook returns
``False`` / ``None`` (go on), ``True`` (stop every active column) or a boolean
mask over the columns (stop those); the stop reason is the hook's ``reason``.
The rules below are such hooks, checked every :math:`\theta` iterations
(the stability rule's ``'half'`` window every :math:`\theta/2`):

* **stability**: the fraction of unlabeled points whose predicted label changed
  since the reference check is below :math:`\eta` (``stability_tol``), and, with
  ``stability_value_tol``, the outputs on U moved by less than that fraction of
  their norm (a guard against stopping before the labels have diffused);
  the reference is the previous check (``window='last'``, the paper), or
  (``'half'``) the outputs at half the iterations so far: the stability rule
  then checks every :math:`\theta/2` iterations from :math:`2\theta` on, each
  check over the second half of the run (a window that grows with the run, and
  a column unstable at one check waits :math:`\theta/2`, not :math:`\theta`,
  for the next);
* **validation**: the error on the labeled validation set did not improve by at
  least one example since the best so far;
* **mixed**: both.

A user ``callback`` is the same kind of hook (reason ``"callback"``), so early
stopping and ``verbose`` output are built on one mechanism.

**Deterministic decisions.**  A predicted label is negative only when the output
is below :math:`-\delta\max_i |f_i|` (``dead_zone`` :math:`\delta`, per column;
:attr:`~semisvm.solvers._tolerances.Tolerances.sign_dead_zone` of the kernel's
dtype), so that outputs equal to 0 up to the rounding of the products (summation
order, threads, a cluster's partial sums) get the same label everywhere; error
and change counts are integers, compared exactly.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from ._tolerances import tolerances

__all__ = ["EARLY_STOPPING_RULES", "DataStoppingRule", "UserCallback"]

EARLY_STOPPING_RULES = ("stability", "validation", "mixed")

_DEAD_ZONE = tolerances(np.float64).sign_dead_zone


def predicted_labels(F: np.ndarray, dead_zone: float = _DEAD_ZONE) -> np.ndarray:
    """±1 labels of outputs ``F`` (per column): -1 only below ``-dead_zone max|F|``.

    With ``dead_zone = 0`` this is ``sign(F)`` with ``sign(0) = +1``.
    """
    F = np.asarray(F)
    cut = dead_zone * np.abs(F).max(axis=0, initial=0.0)
    return np.where(F < -cut, -1.0, 1.0)


def validation_error(
    K_val: Any,
    alpha: np.ndarray,
    b: np.ndarray,
    Y_val: np.ndarray,
    dead_zone: float = _DEAD_ZONE,
) -> np.ndarray:
    """Error rate per column of the labels of K_val alpha + b against ±1 targets."""
    F = np.asarray(K_val @ alpha) + b
    return np.mean(predicted_labels(F, dead_zone) != Y_val, axis=0)


class DataStoppingRule:
    """One of :data:`EARLY_STOPPING_RULES` as a PCG hook (module docstring).

    Parameters
    ----------
    rule : {'stability', 'validation', 'mixed'}
    theta : int
        Check period.
    unlabeled : ndarray of int
        Rows of the unlabeled points.
    n_columns : int
    stability_tol, stability_value_tol, window :
        See :func:`semisvm.solvers.lapsvm_pcg`.
    K_val, Y_val : validation kernel and ±1 targets (validation / mixed).
    dead_zone : float, default=``sign_dead_zone`` of float64
        Relative dead zone of the predicted labels (module docstring).
    """

    def __init__(
        self,
        rule: str,
        *,
        theta: int,
        unlabeled: np.ndarray,
        n_columns: int,
        stability_tol: float,
        stability_value_tol: float | None,
        window: str,
        K_val: Any = None,
        Y_val: np.ndarray | None = None,
        dead_zone: float = _DEAD_ZONE,
    ) -> None:
        self.reason = rule
        self.theta = theta
        self.unl = unlabeled
        self.C = n_columns
        self.tol = stability_tol
        self.value_tol = stability_value_tol
        self.window = window
        self.K_val = K_val
        if rule in ("validation", "mixed") and (K_val is None or Y_val is None):
            raise ValueError(f"The {rule!r} rule needs K_val and Y_val.")
        # no validation set: (0, C) targets, never read (the stability rule)
        self.Y_val = np.asarray(
            np.zeros((0, n_columns)) if Y_val is None else Y_val, dtype=np.float64
        ).reshape(-1, n_columns)
        self.m_val = self.Y_val.shape[0]
        self.old_pred_U = np.zeros((unlabeled.size, n_columns))
        self.old_f_U: np.ndarray | None = None
        self.snaps: deque = deque()  # (grid index, outputs on U) of past checks
        # the half-theta grid of the 'half' window (module docstring)
        self.half_grid = rule == "stability" and window == "half" and theta >= 2
        self.old_err_val = np.full(n_columns, np.inf)
        self.dead_zone = dead_zone
        self.count_slack = tolerances(np.float64).count_slack

    def _grid(self, it: int) -> int | None:
        r"""Index j of iteration ``it`` on the check grid, or None off the grid.

        Every :math:`\theta` iterations (j = it / theta); for the stability rule
        with the ``'half'`` window at :math:`t_j = \lceil j\theta/2\rceil`,
        so that the window from the reference :math:`t_{\lfloor j/2\rfloor}`
        to check j is half the run (exactly for even j, :math:`\theta/4` more
        for odd j) and the checks of the paper's grid (even j) keep their place.
        """
        if not self.half_grid:
            return None if it % self.theta else it // self.theta
        j = 2 * it // self.theta
        return j if -(-j * self.theta // 2) == it else None

    def __call__(self, state: dict) -> np.ndarray | None:
        it = state["iteration"]
        j = self._grid(it)
        if j is None:
            return None
        f_U = state["Ka"][self.unl] + state["b"]
        stable = self._stable(j, f_U)
        no_gain = np.zeros(self.C, dtype=bool)
        if self.reason in ("validation", "mixed"):
            err = validation_error(
                self.K_val, state["alpha"], state["b"], self.Y_val, self.dead_zone
            )
            no_gain = (
                err * self.m_val
                > self.old_err_val * self.m_val - 1.0 + self.count_slack
            )
            self.old_err_val = np.where(
                state["active"], np.minimum(self.old_err_val, err), self.old_err_val
            )
        self.old_pred_U = predicted_labels(f_U, self.dead_zone)
        self.old_f_U = f_U
        if self.window == "half":
            self.snaps.append((j, f_U))
        return {"stability": stable, "validation": no_gain, "mixed": stable & no_gain}[
            self.reason
        ]

    def _stable(self, j: int, f_U: np.ndarray) -> np.ndarray:
        """Per column: the labels (and outputs) on U settled since the reference
        check (module docstring); ``j`` is this check's index on the grid."""
        stable = np.ones(self.C, dtype=bool)
        if self.reason not in ("stability", "mixed") or not self.unl.size:
            return stable
        pred_U = predicted_labels(f_U, self.dead_zone)
        if self.window == "half":
            # the check at half the run, index j // 2 (on the theta grid: half
            # rounded down to a whole theta); the first comparison at 2 theta
            first = 4 if self.half_grid else 2
            target = max(first // 2, j // 2)
            while len(self.snaps) > 1 and self.snaps[1][0] <= target:
                self.snaps.popleft()
            ref = self.snaps[0][1] if self.snaps and j >= first else None
        else:
            ref = self.old_f_U
        ref_pred = (
            self.old_pred_U if ref is None else predicted_labels(ref, self.dead_zone)
        )
        stable = np.mean(pred_U != ref_pred, axis=0) < self.tol
        if self.window == "half" and ref is None:
            stable[:] = False
        if self.value_tol is not None:
            prev = ref if ref is not None else np.zeros_like(f_U)
            nrm = np.linalg.norm(f_U, axis=0)
            moved = np.linalg.norm(f_U - prev, axis=0)
            stable &= (nrm > 0) & (moved <= self.value_tol * nrm)
        return stable


class UserCallback:
    """A user's ``callback(state) -> bool`` as a hook (reason ``"callback"``)."""

    reason = "callback"

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def __call__(self, state: dict) -> bool:
        return bool(
            self.fn(
                {
                    k: state[k]
                    for k in ("iteration", "alpha", "b", "objective", "active")
                }
            )
        )
