r"""The primal LapSVM / LapRLS objective and its gradient, evaluated directly.

Used to check the solvers (finite differences, optimality of a solution) and by
anyone who wants the objective value of a given :math:`(\alpha, b)`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["primal_objective"]


def primal_objective(
    K: Any,
    y: np.ndarray,
    alpha: np.ndarray,
    b: float,
    *,
    L: Any = None,
    gamma_a: float = 1.0,
    gamma_i: float = 0.0,
    loss: str = "squared_hinge",
    intrinsic_bias: bool = False,
    sample_weight: np.ndarray | None = None,
) -> tuple[float, float, np.ndarray]:
    r"""Objective (Eq. 7, or Eq. 14 with ``loss='squared'``) and its gradient.

    .. math::
        \mathrm{obj} = \tfrac12\Big[\sum_{i\in\mathcal L} c_i\, \ell(y_i, f_i)
        + \gamma_A \alpha^T K\alpha + \gamma_I f_I^T L f_I\Big],\quad
        f = K\alpha + b1,

    with :math:`f_I = K\alpha` (the paper) or :math:`f_I = K\alpha + b1`
    (``intrinsic_bias=True``), :math:`\ell` the squared hinge
    :math:`\max(0, 1 - y f)^2` or the squared loss :math:`(y - f)^2`, and
    :math:`c_i` the weights of the labeled points (``sample_weight``, default 1).

    Parameters
    ----------
    K : ndarray of shape (n, n)
    y : ndarray of shape (n,)
        +1/-1 for labeled points, 0 for unlabeled ones.
    alpha : ndarray of shape (n,)
    b : float
    L : sparse matrix of shape (n, n), default=None
    gamma_a, gamma_i : float
    loss : {'squared_hinge', 'squared'}
    intrinsic_bias : bool, default=False
    sample_weight : ndarray of shape (n,), default=None
        Weights :math:`c_i > 0` of the labeled loss terms (entries on unlabeled
        rows are ignored); ``None`` means all 1.

    Returns
    -------
    obj : float
    grad_b : float
    grad_alpha : ndarray of shape (n,)
        The gradient (Eq. 9), i.e. :math:`P\hat\nabla` with :math:`P = diag(1, K)`.
    """
    y = np.asarray(y, dtype=np.float64)
    lab = y != 0
    Ka = np.asarray(K @ alpha, dtype=np.float64)
    f = Ka + b
    r = np.zeros_like(f)
    if loss == "squared":
        r[lab] = f[lab] - y[lab]
    else:
        viol = lab & (y * f < 1.0)
        r[viol] = f[viol] - y[viol]
    rw = r if sample_weight is None else np.asarray(sample_weight, dtype=np.float64) * r
    obj = float(rw @ r) + gamma_a * float(alpha @ Ka)
    r = rw
    g_alpha = r + gamma_a * alpha
    g_b = float(r.sum())
    if L is not None and gamma_i != 0:
        fI = f if intrinsic_bias else Ka
        LfI = np.asarray(L @ fI)
        obj += gamma_i * float(fI @ LfI)
        g_alpha = g_alpha + gamma_i * LfI
        if intrinsic_bias:
            g_b += gamma_i * float(LfI.sum())
    return 0.5 * obj, g_b, np.asarray(K @ g_alpha, dtype=np.float64)
