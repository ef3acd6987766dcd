r"""The paper's data-based stopping rules as PCG callbacks (Melacci & Belkin 2011, Sec. 4.1).

:func:`semisvm.solvers.lapsvm_pcg` calls every hook after each iteration with the
state ``{"iteration", "Ka", "b", "alpha", "active", ...}``.  A hook returns
``False`` / ``None`` (go on), ``True`` (stop every active column) or a boolean
mask over the columns (stop those); the stop reason is the hook's ``reason``.
The rules below are such hooks, checked every :math:`\theta` iterations:

* **stability**: the fraction of unlabeled points whose predicted label changed
  since the reference check is below :math:`\eta` (``stability_tol``), and, with
  ``stability_value_tol``, the outputs on U moved by less than that fraction of
  their norm (a guard against stopping before the labels have diffused);
  the reference is the previous check (``window='last'``, the paper) or the
  check nearest to half the iterations so far (``'half'``);
* **validation**: the error on the labeled validation set did not improve by at
  least one example since the best so far;
* **mixed**: both.

A user ``callback`` is the same kind of hook (reason ``"callback"``), so early
stopping and ``verbose`` output are built on one mechanism.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

__all__ = ["EARLY_STOPPING_RULES", "DataStoppingRule", "UserCallback"]

EARLY_STOPPING_RULES = ("stability", "validation", "mixed")


def validation_error(
    K_val: Any, alpha: np.ndarray, b: np.ndarray, Y_val: np.ndarray
) -> np.ndarray:
    """Error rate per column of sign(K_val alpha + b) against ±1 targets."""
    F = np.asarray(K_val @ alpha) + b
    return np.mean(np.where(F >= 0, 1.0, -1.0) != Y_val, axis=0)


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
    """

    def __init__(
        self, rule: str, *, theta: int, unlabeled: np.ndarray, n_columns: int,
        stability_tol: float, stability_value_tol: float | None, window: str,
        K_val: Any = None, Y_val: np.ndarray | None = None,
    ) -> None:
        self.reason = rule
        self.theta = theta
        self.unl = unlabeled
        self.C = n_columns
        self.tol = stability_tol
        self.value_tol = stability_value_tol
        self.window = window
        self.K_val = K_val
        self.Y_val = None if Y_val is None else np.asarray(
            Y_val, dtype=np.float64).reshape(-1, n_columns)
        self.m_val = 0 if self.Y_val is None else self.Y_val.shape[0]
        self.old_pred_U = np.zeros((unlabeled.size, n_columns))
        self.old_f_U: np.ndarray | None = None
        self.snaps: deque = deque()  # (iteration, outputs on U) of past checks
        self.old_err_val = np.full(n_columns, np.inf)

    def __call__(self, state: dict) -> np.ndarray | None:
        it = state["iteration"]
        if it % self.theta:
            return None
        f_U = state["Ka"][self.unl] + state["b"]
        stable = self._stable(it, f_U)
        no_gain = np.zeros(self.C, dtype=bool)
        if self.reason in ("validation", "mixed"):
            err = validation_error(self.K_val, state["alpha"], state["b"], self.Y_val)
            no_gain = err * self.m_val > self.old_err_val * self.m_val - 1.0 + 1e-9
            self.old_err_val = np.where(
                state["active"], np.minimum(self.old_err_val, err), self.old_err_val)
        self.old_pred_U = np.where(f_U >= 0, 1.0, -1.0)
        self.old_f_U = f_U
        if self.window == "half":
            self.snaps.append((it, f_U))
        return {"stability": stable, "validation": no_gain,
                "mixed": stable & no_gain}[self.reason]

    def _stable(self, it: int, f_U: np.ndarray) -> np.ndarray:
        stable = np.ones(self.C, dtype=bool)
        if self.reason not in ("stability", "mixed") or not self.unl.size:
            return stable
        pred_U = np.where(f_U >= 0, 1.0, -1.0)
        if self.window == "half":
            # compare with the check nearest to half the iterations so far
            target = max(self.theta, (it // 2) // self.theta * self.theta)
            while len(self.snaps) > 1 and self.snaps[1][0] <= target:
                self.snaps.popleft()
            ref = self.snaps[0][1] if self.snaps and self.snaps[0][0] < it else None
        else:
            ref = self.old_f_U
        ref_pred = self.old_pred_U if ref is None else np.where(ref >= 0, 1.0, -1.0)
        stable = np.mean(pred_U != ref_pred, axis=0) < self.tol
        if self.window == "half" and (ref is None or self.snaps[0][0] == it):
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
        return bool(self.fn({k: state[k] for k in
                             ("iteration", "alpha", "b", "objective", "active")}))
