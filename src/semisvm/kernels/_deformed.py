r"""Semi-supervised ("deformed") kernels: the point-cloud kernel of LapSVM.

Sindhwani, Niyogi and Belkin (2005) show that manifold regularisation with the
graph Laplacian ``L`` of n points amounts to an ordinary supervised problem in a
deformed RKHS whose kernel is

.. math::

    \hat k(x, z) = k(x, z) - k_x^\top (c I + L K)^{-1} L k_z,
    \qquad k_x = [k(x, x_1), \dots, k(x, x_n)]^\top.

Any supervised kernel machine (SVC, kernel ridge, Gaussian processes) fed with
:math:`\hat k` is therefore a semi-supervised one.  This module holds the
algebra on given blocks; the estimator that builds K and the graph,
:class:`semisvm.SemiSupervisedKernel`, is in :mod:`semisvm.models._deformed`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as la

__all__ = ["deformed_gram"]


def deformed_gram(
    K_AB: np.ndarray,
    K_AX: np.ndarray,
    K_BX: np.ndarray,
    L: Any,
    lu_piv: tuple[np.ndarray, np.ndarray] | None,
) -> np.ndarray:
    r"""Deformed Gram matrix from base-kernel blocks and a factored ``cI + LK``.

    .. math::

        \hat K_{AB} = K_{AB} - K_{AX} (c I + L K)^{-1} L K_{XB}

    Parameters
    ----------
    K_AB : ndarray of shape (m, p)
        Base kernel between the two evaluation sets.
    K_AX : ndarray of shape (m, n)
        Base kernel between the first set and the n fitted points.
    K_BX : ndarray of shape (p, n)
        Base kernel between the second set and the n fitted points.
    L : {sparse matrix, ndarray} of shape (n, n)
        Graph Laplacian of the fitted points.
    lu_piv : tuple or None
        ``scipy.linalg.lu_factor(c I + L K)``; ``None`` means no deformation
        (:math:`\gamma_I = 0`), the result is ``K_AB``.

    Returns
    -------
    K_hat : ndarray of shape (m, p)
    """
    if lu_piv is None:
        return np.array(K_AB, dtype=np.float64, copy=True)
    # LAPACK getrs may crash on read-only buffers (e.g. a model loaded from a
    # joblib memmap): hand it private contiguous copies in that case
    lu, piv = (np.require(a, requirements=["C", "W"]) for a in lu_piv)
    R = la.lu_solve((lu, piv), np.asarray(L @ K_BX.T), check_finite=False)
    return K_AB - K_AX @ R
