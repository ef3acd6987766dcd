r"""Numerical tolerances of the solvers, one named table per dtype.

Every epsilon a solver compares against lives here, under a name that says what
it guards, with the row chosen by the dtype whose rounding it absorbs:

* the iterative solvers keep their coefficients in float64 and look up that
  row for quantities computed from them, and the row of the kernel's dtype for
  what depends on the products with K (``sign_dead_zone``);
* Newton, the direct solves and the regularization path convert to float64
  (exact methods) and use the float64 row only.

The float32 row scales the relative entries by the ratio of the two machine
epsilons where they measure rounding, and keeps the others (which measure
the algorithm, not the arithmetic).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

__all__ = ["TOLERANCES", "Tolerances", "tolerances"]


@dataclass(frozen=True)
class Tolerances:
    """Named tolerances of one floating-point type.

    Attributes
    ----------
    eps, tiny : float
        Machine epsilon and smallest normal number (``np.finfo``).
    zero_gradient : float
        PCG: an initial gradient whose norm is below this is zero (the start is
        the optimum, reason ``"tol"``).
    stall_ratio : float
        PCG: a failed true-residual check that did not at least divide the true
        criterion by ``1 / stall_ratio`` since the previous failed check means
        the arithmetic cannot reach tol (reason ``"precision"``).
    sign_dead_zone : float
        Early stopping: an output counts as negative only below
        ``-sign_dead_zone * max|f|`` of its column, so that outputs equal to 0 up
        to the rounding of the products (summation order, backend) get the same
        label on every machine.  Relative to the kernel's dtype: a few hundred
        times the rounding of one product of length :math:`10^4`, accumulated
        over the iterations.
    count_slack : float
        Validation rule: slack on "improved by at least one example" (counts of
        errors are integers; the slack absorbs the rounding of a mean).
    uphill_rtol, uphill_atol : float
        Newton: a full step whose objective exceeds the previous one by more than
        ``uphill_rtol * obj + uphill_atol`` is replaced by the exact line search.
    unit_step, step_floor : float
        Low-rank Newton: a step within ``unit_step`` of 1 that leaves the error
        vectors unchanged is the exact optimum; a step shorter than
        ``step_floor`` times the coefficients' norm ends the run ("tol").
    path_lambda_floor : float
        Path: smallest lambda followed, relative to the scale
        :math:`\\max_i \\sum_j |Q_{ij}|` (below it the margins
        :math:`h_i / \\lambda` lose all digits).
    path_direction : float
        Path: relative violation allowed of the directional KKT conditions when
        choosing the elbow set at a breakpoint.
    path_moving : float
        Path: a coefficient's derivative below this (relative) does not move it.
    path_hit_rtol, path_hit_atol : float
        Path: events within ``rtol * t + atol * lambda`` of the first one happen
        at the same breakpoint (ties).
    path_snap : float
        Path: an elbow coefficient this close to 0 or 1 is put on the bound.
    path_recenter : float
        Path: largest correction of the drift-removing recentring.
    path_singular, path_rank, path_consistent : float
        Path: relative smallest singular value of a regular saddle system, the
        cut-off of its pseudo-inverse, and the residual of a consistent
        least-squares solution.
    """

    eps: float
    tiny: float
    zero_gradient: float
    stall_ratio: float
    sign_dead_zone: float
    count_slack: float
    uphill_rtol: float
    uphill_atol: float
    unit_step: float
    step_floor: float
    path_lambda_floor: float
    path_direction: float
    path_moving: float
    path_hit_rtol: float
    path_hit_atol: float
    path_snap: float
    path_recenter: float
    path_singular: float
    path_rank: float
    path_consistent: float


_F64 = np.finfo(np.float64)
_F32 = np.finfo(np.float32)

_FLOAT64 = Tolerances(
    eps=float(_F64.eps),
    tiny=float(_F64.tiny),
    zero_gradient=float(_F64.eps),
    stall_ratio=0.5,
    sign_dead_zone=1e-10,
    count_slack=1e-9,
    uphill_rtol=1e-12,
    uphill_atol=1e-15,
    unit_step=1e-9,
    step_floor=1e-12,
    path_lambda_floor=1e-7,
    path_direction=1e-9,
    path_moving=1e-12,
    path_hit_rtol=1e-9,
    path_hit_atol=1e-15,
    path_snap=1e-11,
    path_recenter=1e-8,
    path_singular=1e-12,
    path_rank=1e-10,
    path_consistent=1e-8,
)

#: The table: one row per floating-point dtype.
TOLERANCES: dict[np.dtype, Tolerances] = {
    np.dtype(np.float64): _FLOAT64,
    np.dtype(np.float32): replace(
        _FLOAT64,
        eps=float(_F32.eps),
        tiny=float(_F32.tiny),
        zero_gradient=float(_F32.eps),
        sign_dead_zone=1e-4,
        uphill_rtol=float(_F32.eps) * 1e4,
        uphill_atol=1e-6,
    ),
}


def tolerances(dtype: Any = np.float64) -> Tolerances:
    """The row of :data:`TOLERANCES` for ``dtype`` (float64 for non-float types).

    Parameters
    ----------
    dtype : dtype-like, default=np.float64

    Returns
    -------
    Tolerances
    """
    dt = np.dtype(dtype) if dtype is not None else np.dtype(np.float64)
    return TOLERANCES.get(dt, _FLOAT64)
