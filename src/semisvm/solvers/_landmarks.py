r"""A Nyström-based operator's landmark space, prepared once per fit.

A FITC or block operator :math:`\hat K = \Phi\Phi^T + R` holds landmark rows Z,
:math:`T` (:math:`|Z| \times r`, :math:`T^T K_{ZZ} T = I`) and the features
:math:`\Phi = K_{:Z}T`; its residual R vanishes on the landmark columns, so
:math:`\hat K_{:Z} T = \Phi` when T keeps every eigenvalue of :math:`K_{ZZ}`
(:meth:`~semisvm.kernels._nystroem.NystroemResidual.landmark_basis`).  Three
steps of a fit work in the span of the coefficient vectors :math:`E_Z T`:

* the selection's leave-one-out engine scores the candidates on the features
  (:class:`~semisvm.solvers._loo.SpectralLOO`);
* the coarse start solves the problem restricted to that span
  (:func:`~semisvm.solvers._coarse.coarse_start`);
* the Nyström preconditioner deflates the top of the spectrum on it
  (:class:`~semisvm.solvers._preconditioners.NystroemPreconditioner`).

Each of them needs the graph Gram :math:`B = \Phi^T L \Phi` (:math:`n r^2`
flops, the largest product of the three); :class:`LandmarkSpace` forms it once,
when first asked, and hands the same matrix to all of them.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np

from ._lowrank import border_gram, intrinsic_gram

__all__ = ["LandmarkSpace", "landmark_space"]


class LandmarkSpace:
    r"""Landmarks, features and the graph Gram of one operator and Laplacian.

    Parameters
    ----------
    Z : ndarray of int of shape (m,)
        Landmark rows.
    Phi : ndarray of shape (n, r)
        Features :math:`\hat K_{:Z} T` (float32 or float64).
    T : ndarray of shape (m, r)
    L : Laplacian operator or None
        The graph term's operator (:math:`L^p` as the solvers get it).
    exact : bool, default=True
        Whether :math:`\hat K E_Z T = \Phi` holds for the operator itself, so
        that a solver may use :math:`\Phi` as the operator's product with the
        span: the FITC and block operators keep their residual off the landmark
        rows and columns so that it does, whatever eigenvalues T keeps
        (:meth:`~semisvm.kernels._nystroem.NystroemResidual.landmark_basis`).
    """

    def __init__(
        self, Z: np.ndarray, Phi: np.ndarray, T: np.ndarray, L: Any, exact: bool = True
    ) -> None:
        self.Z = np.asarray(Z, dtype=np.intp)
        self.Phi = Phi
        self.T = T
        self.L = L
        self.exact = exact

    @property
    def rank(self) -> int:
        return int(self.Phi.shape[1])

    @cached_property
    def gram(self) -> np.ndarray:
        r""":math:`B = \Phi^T L \Phi` (r x r, float64, symmetric), formed once
        (:func:`~semisvm.solvers._lowrank.intrinsic_gram`'s row blocks) in the
        precision of :math:`\Phi` (float32 products of a float32 factor, summed
        in float64: every user of B is an aid of the solve or the selection,
        and :math:`\Phi` itself carries float32 rounding)."""
        if self.L is None:
            raise ValueError("The landmark space has no Laplacian: no graph Gram.")
        r = self.rank
        return intrinsic_gram(
            self.Phi, self.L, intrinsic_bias=False, precision=self.Phi.dtype
        )[:r, :r]

    def bordered_gram(self, intrinsic_bias: bool) -> np.ndarray:
        r""":math:`\tilde\Phi^T L \tilde\Phi` ((r+1) x (r+1)) with
        :math:`\tilde\Phi = [\Phi, 1]` (or :math:`[\Phi, 0]` without the intrinsic
        bias): :math:`B` bordered by :math:`\Phi^T L 1` and :math:`1^T L 1`, the
        matrix :func:`~semisvm.solvers._lowrank.intrinsic_gram` forms (L is
        symmetric)."""
        r = self.rank
        if not intrinsic_bias:
            M = np.zeros((r + 1, r + 1))
            M[:r, :r] = self.gram
            return M
        return border_gram(self.gram, self.Phi, self.L @ np.ones(self.Phi.shape[0]))

    def check_laplacian(self, L: Any) -> None:
        """Raise unless ``L`` is the space's Laplacian (None: no graph term)."""
        if L is not None and self.L is not L:
            raise ValueError("landmarks must be the landmark space of K and of this L.")


def landmark_space(K: Any, L: Any) -> LandmarkSpace | None:
    """The landmark space of an operator with a landmark basis (FITC, blocks),
    else None (a dense or streamed K, landmarks that are not training rows)."""
    basis = getattr(K, "landmark_basis", None)
    found = basis() if callable(basis) else None
    if found is None:
        return None
    Z, Phi, T = found
    return LandmarkSpace(Z, Phi, T, L)
