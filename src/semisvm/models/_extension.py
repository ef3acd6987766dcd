r"""A kernel width under which the graph-trusting model extends to new points.

**The problem.**  With the graph-trusting weights (normalized
:math:`\lambda_A = 10^{-6}`, :math:`\lambda_I = 1`) the ambient term hardly
constrains :math:`f = \sum_i \alpha_i k(\cdot, x_i) + b` between the training
points: the outputs on the training points are set by the labels and the graph,
and since K is invertible :math:`\alpha \approx K^{-1}(\mathbf f - b)`, the
kernel *interpolant* of those outputs.  Where the graph does not carry the
classes (they overlap, no gap) the graph-smoothed outputs vary on the scale of
the graph's neighbourhoods, the kernel of the kNN width rule
(:func:`~semisvm.kernels.knn_gamma`) is far wider than that in more than a few
dimensions, and the interpolant oscillates between the points: ``predict`` on
new points errs far more than the transduction.  A larger :math:`\lambda_A`
would move the transduction back toward the supervised fit; a narrower kernel
leaves the transduction (the graph's solution) nearly unchanged.
Measurements: docs/rules.rst.

**The check** (:func:`choose_width_factor`).  After the fit the training
outputs are interpolated under :math:`k^m` (``gamma`` times m) on a sample of
at most :data:`SAMPLE` points, and each sampled point is predicted *without
itself* (the closed-form leave-one-out residual of an interpolant, Rippa 1999:
:math:`r_i = c_i / (K^{-1})_{ii}`, :math:`c = K^{-1}\mathbf f`).  Factors
:data:`FACTORS` are tried until the disagreement with the transduction stops
falling; the width moves only when the best factor disagrees less than m = 1
by at least :data:`MIN_GAIN` and by :data:`Z_GAIN` standard errors of the paired
per-point differences, and the model is then refitted with ``gamma_`` times m:
the same objective in the RKHS of the narrower kernel.  Applied when the fit
trusts the graph (``gamma_i_ > 0``), the kernel is the RBF with a width *rule*
(a width the user set is kept), K is dense and there are unlabeled points;
``SolverOptions(extension_width=None)`` turns it off.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from ..kernels._kernels import kernel_power

__all__ = [
    "FACTORS",
    "MIN_GAIN",
    "SAMPLE",
    "Z_GAIN",
    "choose_width_factor",
    "kernel_power",
    "loo_interpolation_labels",
]

#: the factors of the kernel's gamma tried, in order
FACTORS = (1.0, 2.0, 4.0, 8.0)
#: training points on which the check interpolates (a uniform sample)
SAMPLE = 500
#: least drop of the leave-one-out disagreement (fraction of the sample) that
#: moves the width
MIN_GAIN = 0.02
#: and in standard errors of the paired per-point differences (one-sided 5%)
Z_GAIN = 1.6448536269514722
#: ridge added to the sampled Gram matrix (its diagonal is 1): numerical only
RIDGE = 1e-8


def _labels(F: np.ndarray) -> np.ndarray:
    return (F[:, 0] > 0).astype(np.intp) if F.shape[1] == 1 else F.argmax(axis=1)


def loo_interpolation_labels(
    K: np.ndarray, G: np.ndarray, shift: np.ndarray
) -> np.ndarray:
    r"""Labels of the leave-one-out predictions of the kernel interpolant.

    Parameters
    ----------
    K : ndarray of shape (s, s)
        Gram matrix of the sampled points (positive definite up to
        :data:`RIDGE`).
    G : ndarray of shape (s, C)
        Values to interpolate (the outputs without their bias).
    shift : ndarray of shape (C,)
        Added to every prediction before taking labels (bias and class-balance
        offset).

    Returns
    -------
    ndarray of int of shape (s,)
        Class index (two classes: 0/1 by sign) of
        :math:`G_i - c_i / (K^{-1})_{ii} + \text{shift}`, :math:`c = K^{-1} G`:
        the value at :math:`x_i` of the interpolant of the other points.
    """
    s = K.shape[0]
    ridge = RIDGE
    for _ in range(6):
        A = np.array(K, dtype=np.float64, order="F")
        A.flat[:: s + 1] = 1.0 + ridge
        c_low, info = sla.lapack.dpotrf(A, lower=1, clean=1, overwrite_a=1)
        if info == 0:
            break
        ridge *= 100.0  # duplicate points: a larger ridge
    else:  # pragma: no cover - not positive definite at any ridge tried
        raise np.linalg.LinAlgError("sampled Gram matrix is not positive definite")
    C = sla.cho_solve((c_low, True), G, check_finite=False)
    Linv, _ = sla.lapack.dtrtri(c_low, lower=1)
    diag = np.einsum("ij,ij->j", Linv, Linv)  # diag of K^{-1} = L^{-T} L^{-1}
    loo = G - C / diag[:, None] + shift
    return _labels(loo)


def choose_width_factor(
    K: np.ndarray,
    F: np.ndarray,
    bias: np.ndarray,
    offsets: np.ndarray,
    *,
    random_state: int = 0,
    sample: int = SAMPLE,
    factors: tuple = FACTORS,
) -> tuple[float, dict[str, Any]]:
    r"""The factor of the RBF ``gamma`` under which the fitted model's
    transduction extends to points it has not seen (module docstring).

    Only m = 1 is tried when its disagreement is already below
    :data:`MIN_GAIN` (no factor can gain enough).  Cost: one Cholesky
    factorization and one triangular inverse of the sample's Gram matrix per
    factor tried (1 or 2 where the width stays); the caller refits when the
    width moves.

    Parameters
    ----------
    K : ndarray of shape (n, n) or operator
        The RBF Gram matrix of the fit (``K ** m`` is the kernel of width factor m);
        an operator with ``columns(idx)`` (the cluster's distributed K).
    F : ndarray of shape (n, C)
        The solver's outputs :math:`K\alpha + b` on the training points.
    bias : ndarray of shape (C,)
        The solver's bias b.
    offsets : ndarray of shape (C,)
        The class-balance shifts of the fit (the transduction is the label of
        ``F + offsets``).
    random_state : int, default=0
        Seed of the sample.
    sample : int, default=:data:`SAMPLE`
        Points interpolated.
    factors : tuple of float, default=:data:`FACTORS`
        Factors tried in order (the first is the current width).

    Returns
    -------
    factor : float
        The chosen factor (``factors[0]`` when the width stays).
    info : dict
        ``factors`` tried, ``disagreement`` (fraction of the sample per factor),
        ``factor``, ``gain``, ``z`` and ``reason``.
    """
    n = K.shape[0]
    F = np.asarray(F, dtype=np.float64).reshape(n, -1)
    bias = np.asarray(bias, dtype=np.float64).reshape(-1)
    offsets = np.asarray(offsets, dtype=np.float64).reshape(-1)
    rng = np.random.default_rng(random_state)
    S = np.sort(rng.choice(n, size=min(n, sample), replace=False))
    # an operator (the cluster's distributed K) gives its columns
    Ks = np.asarray(
        K[np.ix_(S, S)] if isinstance(K, np.ndarray) else K.columns(S)[S],
        dtype=np.float64,
    )
    G = F[S] - bias
    ref = _labels(F[S] + offsets)
    errs: list[np.ndarray] = []
    for m in factors:
        errs.append(
            loo_interpolation_labels(kernel_power(Ks, m), G, bias + offsets) != ref
        )
        if errs[0].mean() < MIN_GAIN:  # no factor can gain enough
            break
        if len(errs) > 1 and errs[-1].mean() >= errs[-2].mean():
            break  # narrower stopped helping
    tried = [float(m) for m in factors[: len(errs)]]
    rates = [float(e.mean()) for e in errs]
    k = int(np.argmin(rates))
    diff = errs[0].astype(np.float64) - errs[k].astype(np.float64)
    gain = float(diff.mean())
    se = float(diff.std(ddof=1) / np.sqrt(diff.size)) if diff.size > 1 else 0.0
    z = gain / se if se > 0 else (float("inf") if gain > 0 else 0.0)
    move = k > 0 and gain >= MIN_GAIN and z >= Z_GAIN
    chosen = tried[k] if move else float(factors[0])
    desc = ", ".join(f"x{m:g}: {r:.1%}" for m, r in zip(tried, rates, strict=True))
    reason = (
        f"leave-one-out disagreement with the transduction on {S.size} points "
        f"({desc}); "
        + (
            f"width factor {chosen:g} (gain {gain:.1%}, z = {z:.2f})"
            if move
            else f"width kept (best gain {gain:.1%}, z = {z:.2f}; needs >= "
            f"{MIN_GAIN:.0%} and z >= {Z_GAIN:g})"
        )
    )
    return chosen, {
        "factors": tried,
        "disagreement": rates,
        "factor": chosen,
        "gain": gain,
        "z": float(z),
        "n_sample": int(S.size),
        "reason": reason,
    }
