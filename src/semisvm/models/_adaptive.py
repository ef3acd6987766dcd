r"""Data-adaptive pieces of the manifold estimators.

* **Normalized regularization** (``regularization="normalized"``, the default):
  ``gamma_a``, ``gamma_i`` are read as :math:`\lambda_A, \lambda_I` of

  .. math::
      \tfrac12\Big[\frac{1}{\sum_{i\le l} c_i}\sum_{i \le l} c_i\,\ell(y_i, f(x_i))
      + \lambda_A\, \alpha^T K \alpha
      + \frac{\lambda_I}{n_G\,\bar d^{\,p}}\, f_I^T L^p f_I\Big],

  the loss averaged over the labeled points (weights :math:`c_i` from
  ``class_weight``), the intrinsic term averaged over the n points (up to
  :math:`n_G` points, below) and divided by :math:`\bar d^{\,p}`,
  :math:`\bar d = \mathrm{tr}(L)/n`.  Multiplying by
  :math:`\sum c_i` gives the paper's objective (Melacci & Belkin 2011, Eq. 7),
  which every solver runs on (:func:`paper_regularization`; ``gamma_a_``,
  ``gamma_i_`` report the raw weights).  Both terms are averages, so the same
  :math:`(\lambda_A, \lambda_I)` mean the same trade-off at every l and with
  every Laplacian.  Beyond :data:`GRAPH_MEAN_POINTS` points the intrinsic term
  is divided by that number instead of n (:func:`graph_normalizer`), so the graph
  weighs more as the unlabeled points grow in number.
  ``regularization="paper"`` uses the paper's weights directly.

* **Class balance** (``class_balance="mass"``, the default): after the fit the
  bias of every (one-vs-rest) column is shifted by the unique :math:`\delta` with
  :math:`\operatorname{mean}_U(f + \delta) = (2\pi_c - 1)\,
  \operatorname{mean}_U |f + \delta|` -- the positive and negative output masses
  on the unlabeled points in the proportion :math:`\pi_c` of the classes (Zhu,
  Ghahramani & Lafferty's class mass normalization on signed outputs; invariant
  to the scale of f: :func:`balance_offsets`).  With a single label in one of
  two classes and planar data the proportions are read by count unless the mass
  reading cuts the graph clearly less (:func:`prior_reading`).

* **Probabilities**: a softmax (two classes: a sigmoid) of the scores with one
  slope fitted on the labeled points (:func:`fit_proba_slope`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import brentq, minimize_scalar
from scipy.special import log_expit, log_softmax
from sklearn.utils.class_weight import compute_class_weight

from .._validation import plain

__all__ = [
    "label_weights",
    "laplacian_mean_diagonal",
    "GRAPH_MEAN_POINTS",
    "graph_normalizer",
    "paper_regularization",
    "balance_offsets",
    "fit_proba_slope",
    "log_proba_from_scores",
]


def label_weights(
    y_enc: np.ndarray, labeled: np.ndarray, classes: np.ndarray, class_weight: Any
) -> np.ndarray | None:
    """Per-point loss weights from ``class_weight`` (``None`` when all are 1).

    Parameters
    ----------
    y_enc : ndarray of shape (n,)
        Class index of every labeled point (anything on unlabeled rows).
    labeled : ndarray of bool of shape (n,)
    classes : ndarray of shape (n_classes,)
        The class labels (keys of a ``class_weight`` dict).
    class_weight : None, 'balanced' or dict
        As in scikit-learn: ``'balanced'`` gives class c the weight
        ``l / (n_classes * l_c)``; a dict maps class labels to weights (missing
        classes get 1).

    Returns
    -------
    w : ndarray of shape (n,) or None
        Weights on labeled rows, 1 on unlabeled rows (unused there).
    """
    if class_weight is None:
        return None
    if isinstance(class_weight, dict):
        unknown = [k for k in class_weight if k not in set(classes.tolist())]
        if unknown:
            raise ValueError(
                f"class_weight has keys {plain(unknown)!r} that are not among the "
                f"labeled classes {classes.tolist()!r}."
            )
        bad = [k for k, v in class_weight.items() if not (np.isfinite(v) and v > 0)]
        if bad:
            raise ValueError(
                f"class_weight must be > 0 for every class; got {class_weight!r}."
            )
    cw = (
        compute_class_weight(
            class_weight, classes=np.arange(classes.size), y=y_enc[labeled]
        )
        if class_weight == "balanced"
        else np.array([float(class_weight.get(c, 1.0)) for c in classes.tolist()])
    )
    w = np.ones(y_enc.shape[0])
    w[labeled] = cw[y_enc[labeled]]
    return w


def laplacian_mean_diagonal(L: Any) -> float:
    r""":math:`\bar d = \mathrm{tr}(L)/n` of the un-powered Laplacian (0 -> 1)."""
    base = getattr(L, "base", L)
    d = np.asarray(base.diagonal(), dtype=np.float64)
    m = float(d.mean()) if d.size else 1.0
    return m if m > 0 else 1.0


#: Training-set size up to which the intrinsic term is an average over the n
#: points; beyond it the term is divided by this number (:func:`graph_normalizer`).
#: The rules of :mod:`semisvm.models._autoreg` were chosen on sets up to this size.
GRAPH_MEAN_POINTS = 2000


def graph_normalizer(n: int) -> int:
    r"""The count :math:`n_G = \min(n, N_G)` the intrinsic term is divided by
    (:math:`N_G` = :data:`GRAPH_MEAN_POINTS`).

    The graph term estimates the data's smoothness functional from n points, so
    the more points, the more it can be trusted against the loss on a fixed set
    of labels: on digits the best weight grew about like n (docs/rules.rst).
    Letting it grow stays well posed: under a heavy graph term f tends to a
    constant plus a small part that solves a Poisson-type equation with sources
    at the labels (the limit Poisson learning solves, Calder et al. 2020, read
    by the class balance), over functions no narrower than the kernel, whose
    width is fixed beyond 2,000 points (:func:`semisvm.kernels.knn_gamma`'s
    sample): Laplace learning's spikes at the labels cannot form.  Sets of up
    to :math:`N_G` points keep the average the rules were chosen with.
    """
    return int(min(int(n), GRAPH_MEAN_POINTS))


def paper_regularization(
    mode: str,
    gamma_a: float,
    gamma_i: float,
    *,
    n: int,
    weight_sum: float,
    L: Any,
    power: int,
    scale: float = 1.0,
) -> tuple[float, float]:
    r"""The paper's :math:`(\gamma_A, \gamma_I)` for the estimator's parameters.

    ``mode='paper'`` returns them unchanged; ``'normalized'`` returns
    :math:`(W\lambda_A,\ W\lambda_I \rho^p / (n_G \bar d^{\,p}))` with
    :math:`W = \sum_i c_i`, :math:`\rho` = ``scale``, the graph's length
    normalization (:func:`semisvm.kernels.knn_scale_ratio`), and
    :math:`n_G = \min(n, N_G)` (:func:`graph_normalizer`; module docstring).
    """
    if mode == "paper":
        return float(gamma_a), float(gamma_i)
    ga = weight_sum * float(gamma_a)
    if L is None or gamma_i == 0:
        return ga, float(gamma_i) * weight_sum
    dbar = laplacian_mean_diagonal(L)
    gi = weight_sum * float(gamma_i) * float(scale) ** power
    return ga, gi / (graph_normalizer(n) * dbar**power)


def _mass_shift(f: np.ndarray, c: float) -> float:
    """The root of mean(f + d) - c mean|f + d| (unique for |c| < 1)."""
    c = float(np.clip(c, -1.0 + 1e-9, 1.0 - 1e-9))
    span = float(np.abs(f).max()) + 1.0

    def g(d: float) -> float:
        return float(np.mean(f + d) - c * np.mean(np.abs(f + d)))

    return float(brentq(g, -span, span, xtol=1e-14 * span, rtol=1e-15, maxiter=500))


def balance_offsets(
    F: np.ndarray, unlabeled: np.ndarray, prior: np.ndarray, rule: str = "mass"
) -> np.ndarray:
    r"""Bias shifts that balance the outputs on the unlabeled points.

    Parameters
    ----------
    F : ndarray of shape (n, C)
        Outputs on the training points (C = 1 for two classes).
    unlabeled : ndarray of bool of shape (n,)
    prior : ndarray of shape (n_classes,)
        Class proportions :math:`\pi` (sum 1).
    rule : {'mass', 'mean'}, default='mass'
        ``'mass'``: positive output mass / total output mass :math:`= \pi_c`;
        ``'mean'``: mean output :math:`= 2\pi_c - 1` (Notes).

    Returns
    -------
    offsets : ndarray of shape (C,)
        Zero when there is no unlabeled point.

    Notes
    -----
    The mass rule solves

    .. math::
        \frac{\sum_{j \in U} \max(f_j + \delta, 0)}{\sum_{j \in U} |f_j + \delta|}
        = \pi_c
        \iff \operatorname{mean}_U(f + \delta) = (2\pi_c - 1)\,
        \operatorname{mean}_U |f + \delta|.

    It is invariant to the scale of f (a shrunken output is shifted
    proportionally less), and the difference of the two sides of the second
    form is strictly increasing in :math:`\delta` (derivative
    :math:`\ge 1 - |2\pi_c - 1| > 0`), so the root is unique and found by
    bracketing (``brentq``).  The mean rule is the linear balancing constraint of Chapelle
    & Zien (2005, Eq. 5), which assumes outputs of size about 1 and
    over-corrects shrunken ones (measurements: docs/rules.rst).  Either way no
    class can take (almost) all unlabeled points unless its outputs dominate
    everywhere.
    """
    C = F.shape[1]
    if not unlabeled.any():
        return np.zeros(C)
    target = 2.0 * (prior[1:2] if C == 1 else prior) - 1.0
    FU = F[unlabeled]
    if rule == "mean":
        return target - FU.mean(axis=0)
    return np.array([_mass_shift(FU[:, j], target[j]) for j in range(C)])


def _targets_platt(y_idx: np.ndarray, n_classes: int) -> np.ndarray:
    counts = np.bincount(y_idx, minlength=n_classes).astype(float)
    hi = (counts[y_idx] + 1.0) / (counts[y_idx] + 2.0)
    T = np.empty((y_idx.size, n_classes))
    T[:] = ((1.0 - hi) / (n_classes - 1))[:, None]
    T[np.arange(y_idx.size), y_idx] = hi
    return T


def log_proba_from_scores(F: np.ndarray, slope: float) -> np.ndarray:
    """Log-probabilities (n, n_classes) from scores (n, 1) or (n, C) and the slope."""
    if F.shape[1] == 1:
        z = slope * F[:, 0]
        return np.column_stack([log_expit(-z), log_expit(z)])
    return log_softmax(slope * F, axis=1)


def fit_proba_slope(F_lab: np.ndarray, y_idx: np.ndarray, n_classes: int) -> float:
    r"""Slope a > 0 of the probability map, fitted on the labeled outputs.

    :math:`p(y = c \mid x) = \mathrm{softmax}_c(a f_c(x))` for one-vs-rest
    scores, :math:`p(y = c_1 \mid x) = \sigma(a f(x))` for two classes.  The
    slope minimises the cross-entropy of :func:`log_proba_from_scores` against
    Platt's (1999) smoothed targets :math:`(N_c + 1)/(N_c + 2)` (the rest of the
    mass spread over the other classes), so that one or two labels per class do
    not drive :math:`a` to infinity, over :math:`\log a \in [\log 10^{-3}, \log
    10^{3}]` (a one-dimensional convex problem in :math:`a`).  A positive slope
    and no offset keep the most probable class equal to ``predict``.
    """
    if F_lab.shape[0] == 0 or not np.isfinite(F_lab).all():
        return 1.0
    T = _targets_platt(y_idx, n_classes)

    def nll(log_a: float) -> float:
        return float(-(T * log_proba_from_scores(F_lab, np.exp(log_a))).sum())

    res = minimize_scalar(
        nll,
        bounds=(np.log(1e-3), np.log(1e3)),
        method="bounded",
        options={"xatol": 1e-6},
    )
    return float(np.exp(res.x))


def resolve_class_prior(
    class_prior: Any, y_idx: np.ndarray, n_classes: int, classes: Any = None
) -> np.ndarray | str:
    """The class proportions to balance with: the labels', the user's, or 'auto'."""
    if class_prior is None:
        return np.bincount(y_idx, minlength=n_classes) / max(y_idx.size, 1)
    if isinstance(class_prior, str):
        if class_prior != "auto":
            raise ValueError(
                "class_prior must be None, 'auto' or an array; got "
                f"{plain(class_prior)!r}."
            )
        return "auto"
    p = np.asarray(class_prior, dtype=np.float64).ravel()
    if (
        p.shape != (n_classes,)
        or not np.isfinite(p).all()
        or (p < 0).any()
        or p.sum() <= 0
    ):
        names = (
            ""
            if classes is None
            else f" (in the order of classes_ = {plain(classes)!r})"
        )
        raise ValueError(
            f"class_prior must hold {n_classes} non-negative numbers, one per "
            f"class{names}; got {plain(class_prior)!r}."
        )
    return p / p.sum()


def boundary_density(f: np.ndarray) -> float:
    r"""Density of the outputs at 0, :math:`\operatorname{mean}_j
    \exp(-(f_j/h)^2)` with :math:`h` a fifth of the outputs' mean absolute
    deviation from their median (scale-free)."""
    h = 0.2 * float(np.mean(np.abs(f - np.median(f))))
    if h <= 0:
        return 1.0
    return float(np.mean(np.exp(-((f / h) ** 2))))


def boundary_density_shifted(f: np.ndarray, shifts: np.ndarray) -> np.ndarray:
    r""":func:`boundary_density` of ``f + d`` for every shift d, vectorized.

    A shift moves the median by d and leaves the deviations from it, so the
    width h is that of ``f``; the densities are then
    :math:`\operatorname{mean}_j \exp(-((f_j + d)/h)^2)`, in blocks of shifts
    of at most 4M entries.
    """
    f = np.asarray(f, dtype=np.float64)
    shifts = np.asarray(shifts, dtype=np.float64)
    h = 0.2 * float(np.mean(np.abs(f - np.median(f))))
    if h <= 0:
        return np.ones(shifts.size)
    out = np.empty(shifts.size)
    step = max(1, (4 * 2**20) // max(1, f.size))
    for s in range(0, shifts.size, step):
        Z = (f[None, :] + shifts[s : s + step, None]) / h
        np.square(Z, out=Z)
        np.negative(Z, out=Z)
        np.exp(Z, out=Z)
        out[s : s + step] = Z.mean(axis=1)
    return out


#: the valley of ``class_prior='auto'`` is at most this fraction of both modes
VALLEY_DEPTH = 0.5


def edge_expansion(laplacian: Any, side: np.ndarray) -> float:
    r"""The edge expansion :math:`\mathbf 1_S^T L \mathbf 1_S / \min(|S|, n - |S|)`
    of the two-sided partition ``side`` (bool, shape (n,)): the cut over the
    smaller side (unlike the multiway ratio cut of
    :func:`semisvm.models._graphwidth.ratio_cut`, which sums the cut over each
    side's size); inf when one side is empty."""
    k = int(side.sum())
    if k == 0 or k == side.size:
        return float("inf")
    s = side.astype(np.float64)
    return float(s @ np.asarray(laplacian @ s).ravel()) / min(k, side.size - k)


def auto_offsets(
    F: np.ndarray,
    unlabeled: np.ndarray,
    label_prior: np.ndarray,
    rule: str = "mass",
    laplacian: Any = None,
) -> tuple[np.ndarray, np.ndarray]:
    r"""``class_prior='auto'``: move the boundary into a clear gap (two classes).

    Balanced labels on imbalanced data make the labels' proportions a wrong
    prior; on balanced data the unshifted solution is often skewed instead.  The
    outputs on the unlabeled points tell the two apart when the data have a gap:
    their density (a Gaussian kernel estimate, :func:`boundary_density`) then
    has a *valley* between two modes.  Starting from the balance shift
    :math:`\delta_\pi` for the labels' proportions, the shift moves to the
    lowest-density point :math:`\delta^*` between :math:`\delta_\pi` and 0 only
    if (i) at least 3% of the unlabeled points lie on each side of it, (ii) its
    density is at most half the highest density on each side (a valley between
    two modes, not the thin edge of one mode), and (iii) the boundary at
    :math:`\delta_\pi` is at least twice as dense (it cuts through a cluster),
    and (iv) with the graph (``laplacian``), the partition at :math:`\delta^*`
    has a ratio cut :math:`\mathbf 1_S^T L\, \mathbf 1_S / \min(|S|, n - |S|)`
    (:math:`S` the points on the positive side) at most 1.5 times that of the
    partition at :math:`\delta_\pi`: a dip of the outputs' density at a real
    gap between the classes cuts the graph about as sparsely per point of the
    smaller side as the labels' boundary does (imbalanced two moons 1:9, 2
    labels per class: ratios 0.5-1.33), a dip in the tail of overlapping
    clusters cuts it far more densely (G50C, 5 labels per class: 2.3, a draw
    that moved to a 6.5% / 93.5% prior and erred 44.5%, 14.2% with the labels'
    proportions).  Otherwise the labels' proportions are kept, and always when a class has a
    single label (measured: balanced two moons with 1 label per class lose 3
    points when the rule is applied there).  The low-density separation
    principle of the TSVM and of class-mass normalization (Chapelle & Zien 2005);
    a heuristic, not an estimate with guarantees.  With more classes the
    one-vs-rest columns are balanced to the labels' proportions.

    Returns
    -------
    offsets : ndarray of shape (C,)
    prior : ndarray of shape (n_classes,)
        The proportions the kept shifts give on the unlabeled points.
    """
    C = F.shape[1]
    cand = balance_offsets(F, unlabeled, label_prior, rule)
    if not unlabeled.any() or C > 1:
        return cand, label_prior
    fu = np.sort(F[unlabeled, 0])
    m = fu.size
    lo, hi = sorted((float(cand[0]), 0.0))
    # the density of the outputs at -delta (where f + delta = 0), on a grid that
    # covers the outputs, so that the modes on both sides are seen
    grid = np.linspace(-fu[-1], -fu[0], 201)
    dens = boundary_density_shifted(fu, grid)
    inside = (grid >= lo) & (grid <= hi)
    off = cand.copy()
    if inside.any():
        k = np.flatnonzero(inside)[int(np.argmin(dens[inside]))]
        d_star = grid[k]
        n_pos = int(np.sum(fu + d_star > 0))
        left, right = dens[grid < d_star], dens[grid > d_star]
        valley = (
            min(n_pos, m - n_pos) >= 0.03 * m
            and left.size
            and right.size
            and dens[k] <= VALLEY_DEPTH * min(left.max(), right.max())
        )
        sparse_cut = True
        if valley and laplacian is not None:
            sparse_cut = edge_expansion(
                laplacian, F[:, 0] + d_star > 0
            ) <= 1.5 * edge_expansion(laplacian, F[:, 0] + cand[0] > 0)
        if valley and sparse_cut and boundary_density(fu + cand[0]) >= 2.0 * dens[k]:
            off = np.array([d_star])
    p1 = float(np.mean(fu + off[0] > 0))
    return off, np.array([1.0 - p1, p1])


#: :func:`prior_reading` keeps the mass reading only when its partition's ratio
#: cut is at most this factor times the count reading's: a margin, because the
#: mass reading's departure from the count is skew, not evidence (measured:
#: docs/rules.rst)
MASS_CUT_MARGIN = 0.7


def count_offset(f: np.ndarray, p1: float) -> float:
    r"""The shift :math:`\delta` that puts the fraction ``p1`` of the outputs
    ``f`` above 0: minus the midpoint of the two order statistics around the
    :math:`1 - p_1` quantile (:math:`\lfloor (1 - p_1) m \rceil` outputs stay
    at or below 0), so that ties of the two are the only way to miss it."""
    s = np.sort(np.asarray(f, dtype=np.float64))
    m = s.size
    k = int(round((1.0 - float(p1)) * m))
    if k <= 0:
        return float(-(s[0] - 1.0))
    if k >= m:
        return float(-(s[-1] + 1.0))
    return float(-0.5 * (s[k - 1] + s[k]))


def prior_reading_applies(
    laplacian: Any, y_labeled: np.ndarray, classes: np.ndarray
) -> bool:
    """Whether :func:`prior_reading` can run on this fit: two classes, one of
    them with a single label, the model's sparse training graph (``laplacian``)
    at hand (the dimension gate and ``prior_reading`` are the caller's)."""
    if laplacian is None or classes.size != 2:
        return False
    return bool(np.min(np.unique(y_labeled, return_counts=True)[1]) == 1)


def prior_reading(
    F: np.ndarray,
    unlabeled: np.ndarray,
    prior: np.ndarray,
    mass_offset: np.ndarray,
    laplacian: Any,
) -> np.ndarray:
    r"""Two classes, a single label in one: read the proportions :math:`\pi` by
    count unless the output-mass reading's partition cuts the model's graph
    clearly less.

    The labels' proportions can be imposed on the unlabeled outputs in two ways:
    by *mass* (``class_balance='mass'``: the positive output mass is the
    fraction :math:`\pi_1` of the total, Zhu, Ghahramani & Lafferty 2003) or by
    *count* (:func:`count_offset`: the fraction :math:`\pi_1` of the points is
    positive, the balancing constraint of Joachims's (1999) TSVM and of the
    volume-constrained graph methods).  They agree when the outputs are
    symmetric about the boundary.  With one label per class they are not: the
    solution of Laplacian regularization is then close to the harmonic function
    of the two labels (Nadler, Srebro & Zhou 2009), smooth and skewed (it decays
    along a long class far from its label), and the mass reading can put the
    boundary inside the class whose outputs are small.  Two circles with noise
    0.1, 2,000 points, one label per class: the outputs of the exact LapRLS
    optimum correlate with the harmonic function of the same graph to 1.000
    and err 0.4-0.9% split at their median, 1-16% by mass.  Both readings
    assert the same proportions; the model's own graph term says which
    boundary it prefers: the mass reading is kept when its partition of the
    training points has a :func:`edge_expansion` :math:`\mathbf 1_S^T
    L\,\mathbf 1_S / \min(|S|, n - |S|)` on the model's Laplacian
    ``laplacian`` at most :data:`MASS_CUT_MARGIN` (0.7) times the count
    reading's, else the count reading.  *Why the margin*: the mass reading's
    departure from the count is the skew of a harmonic-like solution, not
    evidence, and a ratio cut from 1,500 points is noisy (two circles at 2,000
    points: ratios mass / count of 0.61-0.73 on the draws where the two
    readings differ by 0.3-5 points, either way); where the data are
    imbalanced the count reading forces the labels' 50/50 through a class and
    cuts far more (ratios 0-0.29 on two moons 1:9 and circles 1:4): the mass
    reading stays there (imbalanced moons and circles, breast cancer).  The
    margin 0.7 is a heuristic measured on 13 planar families (docs/rules.rst).

    *Where it runs* (the estimators' gate, :func:`prior_reading_applies`): two
    classes with a single label in one, the dense operator's graph, and an
    intrinsic dimension below 3 (:data:`semisvm.models._graphwidth.MAX_DIMENSION`,
    the graph-width rule's gate).  This is a heuristic with evidence, not a
    consistency result.  On higher-dimensional sets the lower cut can lower the
    error on U but raised it on the held-out points and on near-chance cells
    (docs/rules.rst): there it does not run.  With two labels or more in every class
    :func:`auto_offsets` moves the mass reading's boundary into a gap instead;
    with more classes the mass reading is kept.

    Returns the offsets to apply (``mass_offset`` or the count reading's).
    """
    p1 = float(prior[1])
    d_count = count_offset(F[unlabeled, 0], p1)
    if d_count == float(mass_offset[0]):
        return mass_offset
    cut_mass = edge_expansion(laplacian, F[:, 0] + mass_offset[0] > 0)
    cut_count = edge_expansion(laplacian, F[:, 0] + d_count > 0)
    keep_mass = cut_mass <= MASS_CUT_MARGIN * cut_count
    return mass_offset if keep_mass else np.array([d_count])


def adapt_outputs(
    F: np.ndarray,
    labeled: np.ndarray,
    y_idx: np.ndarray,
    n_classes: int,
    *,
    class_balance: str | None,
    class_prior: Any,
    classes: Any = None,
    laplacian: Any = None,
    reading: Any = None,
) -> tuple[np.ndarray, np.ndarray, float, np.ndarray | None]:
    """Class balance and probability slope after a solve: the one core used by
    the estimators and by the CV estimators' folds.

    Parameters
    ----------
    F : ndarray of shape (n, C)
        Solver outputs on the training points.
    labeled : ndarray of bool of shape (n,)
        The points whose labels were used (the rest are balanced).
    y_idx : ndarray of int of shape (labeled.sum(),)
        Class index of the labeled points.
    n_classes : int
    class_balance : {None, 'mass', 'mean'}
    class_prior : None, 'auto' or array-like
    classes : array-like, optional
        For messages.
    laplacian : sparse matrix or operator, optional
        The training graph's Laplacian, for the cut test of :func:`auto_offsets`.
    reading : sparse matrix or operator, optional
        The Laplacian on which :func:`prior_reading` compares the two readings
        of the proportions, where it runs (:func:`prior_reading_applies`; None:
        the mass reading).

    Returns
    -------
    F : ndarray of shape (n, C)
        Shifted outputs.
    offsets : ndarray of shape (C,)
    slope : float
        :func:`fit_proba_slope` on the labeled shifted outputs.
    prior : ndarray or None
        The proportions balanced to (None without balance).
    """
    F = np.array(F, dtype=np.float64).reshape(F.shape[0], -1)
    off = np.zeros(F.shape[1])
    prior = None
    if class_balance is not None:
        prior = resolve_class_prior(class_prior, y_idx, n_classes, classes)
        if isinstance(prior, str):
            counts = np.bincount(y_idx, minlength=n_classes)
            label_prior = counts / max(y_idx.size, 1)
            if counts.min() >= 2:
                off, prior = auto_offsets(
                    F, ~labeled, label_prior, class_balance, laplacian=laplacian
                )
            else:  # one label of a class: too little to read a gap from
                off = balance_offsets(F, ~labeled, label_prior, class_balance)
                if F.shape[1] == 1 and reading is not None:
                    off = prior_reading(F, ~labeled, label_prior, off, reading)
                prior = label_prior
        else:
            off = balance_offsets(F, ~labeled, prior, class_balance)
    elif class_prior is not None and not (
        isinstance(class_prior, str) and class_prior == "auto"
    ):
        raise ValueError("class_prior needs class_balance='mass' or 'mean'.")
    F += off
    slope = fit_proba_slope(F[labeled], y_idx, n_classes)
    return F, off, slope, None if isinstance(prior, str) else prior
