r"""How far to trust the graph: the ``gamma_a="auto"``, ``gamma_i="auto"`` rule.

The manifold term helps when the classes follow the graph's clusters and hurts
when the class boundary crosses dense regions; the labels alone can tell the two
apart once there are enough of them.  ``LapSVM()`` and ``LapRLS()`` therefore

1. with fewer than :data:`MIN_LABELS_PER_CLASS` labeled points in some class,
   keep the graph-trusting defaults :math:`\lambda_A = 10^{-6}`,
   :math:`\lambda_I = 1` (normalized weights, :mod:`semisvm.models._adaptive`),
   which win in that regime in every family we measured;
2. otherwise compute the **leave-one-out** outputs of every labeled point for
   every pair of the grid :data:`GRID_A` x :data:`GRID_I` (:math:`\lambda_I = 0`,
   the supervised model, included) with the estimator's own loss -- exact for
   LapRLS; for LapSVM every pair is screened with the LapRLS LOO outputs scored
   by the squared hinge, and the four best pairs and the defaults are scored
   with LapSVM's own LOO outputs (exact, by re-solved error sets, up to 100
   labels; the generalized-Hessian step above) (:mod:`semisvm.solvers._loo`) -- and
   score each pair by the mean LOO loss (squared error for LapRLS, squared
   hinge for LapSVM): smooth losses with far less variance than LOO accuracy;
3. keep the defaults unless the best pair beats them by more than one standard
   error of the paired per-point loss differences; else take the best pair.

The numbers come from features :math:`\Phi\Phi^T \approx K`: the exact square
root of K when :math:`n \le 600`, otherwise a Nyström factor whose 600
landmarks include every labeled point (the selection is then made for the
Nyström model; the final fit is the estimator's usual exact one).

Above 1,000 labels the rule runs on a stratified subset of 1,000 of them (the
others count as unlabeled for the choice only).

Cost: the n x 600 kernel block (read off a dense K, or computed), one
:math:`600^3` eigendecomposition of :math:`\Phi^T L \Phi`, then
:math:`O(l^2\cdot 600 + l^3)` per grid pair (42 pairs): well under a second
for l <= 200 labels and n <= 100,000 beside the kernel block.  The choice and
its evidence are in the fitted attribute ``regularization_selection_`` and printed
with ``verbose``.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from .. import _defaults
from ..solvers._loo import SpectralLOO, loo_features, loo_losses
from ._adaptive import paper_regularization

__all__ = ["GRID_A", "GRID_I", "MIN_LABELS_PER_CLASS", "select_regularization"]

#: normalized gamma_a values tried by the "auto" rule
GRID_A = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0)
#: normalized gamma_i values tried by the "auto" rule (0: the supervised model)
GRID_I = (0.0, 1e-2, 1e-1, 1.0, 10.0, 100.0)
#: labeled points per class needed before the labels are asked to judge
MIN_LABELS_PER_CLASS = 5
#: landmarks of the LOO features
MAX_FEATURES = 600
#: above this many labels the rule runs on a stratified subset of them (its cost
#: grows as l^3 per pair)
MAX_LOO_LABELS = 1000


def _grid(value: Any, grid: tuple, default: float) -> list[float]:
    return list(grid) if isinstance(value, str) else [float(value)]


def select_regularization(
    est: Any,
    *,
    columns: Any,
    L: Any,
    Y: np.ndarray,
    labeled: np.ndarray,
    sample_weight: np.ndarray | None,
    loss: str,
) -> tuple[float, float, dict]:
    """The normalized ``(gamma_a, gamma_i)`` to fit with, and the evidence.

    Parameters
    ----------
    est : LapSVM or LapRLS
        The estimator (its ``gamma_a``, ``gamma_i``, ``regularization``,
        ``laplacian_power``, ``random_state``).
    columns : callable or None
        ``columns(idx)`` -> ``K[:, idx]``; None when the kernel cannot be read
        (then the defaults are kept).
    L : Laplacian or None
    Y : ndarray of shape (n, C)
        ±1/0 one-vs-rest targets.
    labeled : ndarray of bool of shape (n,)
    sample_weight : ndarray of shape (n,) or None
    loss : {'squared', 'squared_hinge'}

    Returns
    -------
    gamma_a, gamma_i : float
        Normalized weights (numbers the user passed are kept).
    info : dict
        ``rule`` ('loo' or 'defaults'), ``reason``, and with the LOO rule the
        ``pairs``, ``loo_loss`` (mean per pair), ``default_loss``, ``time``.
    """
    auto_a, auto_i = isinstance(est.gamma_a, str), isinstance(est.gamma_i, str)
    ga0 = _defaults.GAMMA_A if auto_a else float(est.gamma_a)
    gi0 = _defaults.GAMMA_I if auto_i else float(est.gamma_i)
    lab = np.flatnonzero(labeled)
    Yl = Y[lab]
    counts = (Yl > 0).sum(axis=0) if Yl.shape[1] > 1 else np.array(
        [(Yl[:, 0] > 0).sum(), (Yl[:, 0] < 0).sum()]
    )
    info: dict[str, Any] = {"rule": "defaults"}
    if not (auto_a or auto_i):
        info["reason"] = "gamma_a and gamma_i given"
        return ga0, gi0, info
    if counts.min() < MIN_LABELS_PER_CLASS:
        info["reason"] = (
            f"{int(counts.min())} labeled point(s) in the smallest class (< "
            f"{MIN_LABELS_PER_CLASS}): too few to judge the graph; graph-trusting "
            "defaults kept"
        )
        return ga0, gi0, info
    if columns is None:
        info["reason"] = "kernel not readable here (distributed input): defaults kept"
        return ga0, gi0, info
    if L is None and gi0 != 0 and not auto_i:
        info["reason"] = "no graph"
        return ga0, gi0, info
    t0 = time.perf_counter()
    n = Y.shape[0]
    if lab.size > MAX_LOO_LABELS:
        rng = np.random.default_rng(
            est.random_state if isinstance(est.random_state, int) else 0)
        cls = Yl.argmax(axis=1) if Yl.shape[1] > 1 else (Yl[:, 0] > 0).astype(int)
        keep = np.concatenate([
            rng.choice(np.flatnonzero(cls == c),
                       max(1, round(MAX_LOO_LABELS * np.mean(cls == c))), replace=False)
            for c in np.unique(cls)
        ])
        lab = np.sort(lab[keep])
        Yl = Y[lab]
        info["subset"] = int(lab.size)
    w = None if sample_weight is None else np.asarray(sample_weight)[lab]
    wsum = float(lab.size if w is None else w.sum())
    gas = _grid(est.gamma_a, GRID_A, ga0)
    gis = _grid(est.gamma_i, GRID_I, gi0) if L is not None else [0.0]
    pairs = [(a, i) for a in gas for i in gis]
    if (ga0, gi0) not in pairs:
        pairs.append((ga0, gi0))
    raw = [
        paper_regularization(
            est.regularization, a, i, n=n, weight_sum=wsum, L=L,
            power=est.laplacian_power,
        )
        for a, i in pairs
    ]
    Phi = loo_features(
        columns, n, lab, max_features=MAX_FEATURES, random_state=est.random_state
    )
    engine = SpectralLOO(Phi, L, lab, Yl, weights=w)
    k_def = pairs.index((ga0, gi0))
    losses = loo_losses(engine, raw, loss, always=(k_def,))
    mean = losses.mean(axis=1)
    k_best = int(np.argmin(mean))
    diff = losses[k_def] - losses[k_best]
    se = float(diff.std(ddof=1) / np.sqrt(diff.size)) if diff.size > 1 else 0.0
    if mean[k_def] - mean[k_best] <= se:
        k, why = k_def, (
            f"defaults within one standard error of the best LOO loss "
            f"({mean[k_def]:.4g} vs {mean[k_best]:.4g} ± {se:.2g})"
        )
    else:
        k, why = k_best, (
            f"LOO {loss} loss {mean[k_best]:.4g} vs {mean[k_def]:.4g} for the "
            f"defaults (difference > one standard error {se:.2g})"
        )
    info.update(
        rule="loo", reason=why, pairs=pairs, loo_loss=mean,
        default_loss=float(mean[k_def]), n_features=Phi.shape[1],
        time=time.perf_counter() - t0,
    )
    return pairs[k][0], pairs[k][1], info
