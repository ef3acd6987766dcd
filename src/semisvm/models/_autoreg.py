r"""How far to trust the graph: the ``gamma_a="auto"``, ``gamma_i="auto"`` rule.

The manifold term helps when the classes follow the graph's clusters and hurts
when the class boundary crosses dense regions; the labels can tell the two apart
once there are enough of them, *if* they are asked the right question.
``LapSVM()`` and ``LapRLS()`` (:func:`select_regularization`):

1. with fewer than :data:`MIN_LABELS_PER_CLASS` labeled points in some class,
   keep the graph-trusting defaults :math:`\lambda_A = 10^{-6}`,
   :math:`\lambda_I = 1` (normalized weights, :mod:`semisvm.models._adaptive`);
2. otherwise score the defaults and the supervised models (:math:`\lambda_I = 0`,
   :math:`\lambda_A \in` :data:`GRID_A`) by **balanced, scale-free transductive
   leave-one-out** on the labeled points (:func:`loo_evidence`): exact for LapRLS,
   exact for LapSVM up to 100 labels (:class:`semisvm.solvers._loo.SpectralLOO`);
   each held-out fit balanced as the estimator balances
   (:func:`semisvm.solvers._loo.balanced_loo`), so losing one label does not
   shift every output; the criterion insensitive to the outputs' size
   (:func:`semisvm.solvers._loo.scale_free_squared_hinge`), so a graph-smoothed
   fit whose outputs are small but right is not charged for it;
3. keep the defaults unless the best supervised candidate's criterion is lower by
   more than :math:`z^*` standard errors of the paired per-point differences
   *and* it makes no significantly more LOO errors (:func:`choose`).  The
   graph-trusting model is the prior, and its odds are set by what the unlabeled
   points say: :math:`r` = (fraction of graph edges cut by the supervised
   labels) / (fraction cut by the graph-trusting ones) (:func:`cut_ratio`); a
   boundary through a sparse region cuts fewer edges (:math:`r \gg 1`), where the
   classes cross the clusters the two cut alike (:math:`r \approx 1`).  Hence
   :math:`z^* = \min(Z_{max}, \max(0, a \ln r))` (:func:`graded_threshold`),
   :data:`Z_SWITCH` without a sparse Laplacian to cut.

With a number for one of ``gamma_a``, ``gamma_i`` only the other is chosen, the
same way (:func:`select_regularization`).  Measurements: docs/rules.rst.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from .. import _defaults
from .._validation import as_generator, resolve_seed
from ..kernels._nystroem import nystroem_factor
from ..kernels._operators import on_one_blas_thread
from ..solvers._loo import (
    SpectralLOO,
    balanced_loo,
    loo_features,
    margins,
    mass_shifts,
    scale_free_squared_hinge,
)
from ..solvers._lowrank import border_gram
from ._adaptive import paper_regularization, resolve_class_prior
from ._options import MIN_LABELS_PER_CLASS, resolved_options
from ._solve import fewest_labels

__all__ = [
    "GRID_A",
    "GRID_I",
    "MIN_LABELS_PER_CLASS",
    "Z_SWITCH",
    "feature_count",
    "paired_z",
    "select_regularization",
    "selection_point_errors",
]

#: normalized gamma_a values of the supervised candidates
GRID_A = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0)
#: normalized gamma_i values: 0 (the supervised model) and the default
GRID_I = (0.0, _defaults.GAMMA_I)
#: fewest and most landmarks of the LOO features
MIN_FEATURES, MAX_FEATURES = 600, 2000
#: n * r^2 budget of the feature products
FEATURE_FLOPS = 4e10
#: unlabeled points on which each held-out fit is balanced
MAX_UNLABELED = 1000
#: above this many labels the rule runs on a stratified subset of them (its cost
#: grows as l^3 per pair)
MAX_LOO_LABELS = 300
#: most ratios gamma_i / gamma_a solved one by one (a Cholesky factorization
#: each) instead of one eigendecomposition, with ``by_ratio``
MAX_RATIOS = 12
#: standard errors of the paired criterion differences needed to leave the
#: defaults: the one-sided 5% level of the normal test (the question is one-sided:
#: is the supervised model better?), Phi^{-1}(0.95); as good as the two-sided 2.0
#: where the graph is right and better where it misleads (docs/rules.rst)
Z_SWITCH = 1.6448536269514722
#: slope a of the graded threshold z > a ln(r) on the cut ratio r
#: (:func:`graded_threshold`); the best of the slopes replayed on tuning cells,
#: then checked on held-out families (docs/rules.rst)
CUT_SLOPE = 6.0
#: the most z the graded threshold asks for
Z_MAX = 5.0


def feature_count(n: int) -> int:
    r"""Landmarks of the LOO features for n training points.

    The features :math:`\Phi\Phi^T \approx K` include every labeled point
    (:func:`semisvm.solvers._loo.loo_features`): the exact square root of K when
    :math:`n \le r`, else a Nyström factor with
    :math:`r = \min(2000, \max(600, \sqrt{4\cdot 10^{10}/n}))` landmarks drawn
    with ``random_state`` (0 when None: the same data give the same choice).  The
    supervised candidates are exact for any r (their functions live on the
    labeled columns); the graph-trusting one needs the finer factor, hence at
    least :data:`MIN_FEATURES`.
    """
    r = int(np.sqrt(FEATURE_FLOPS / max(n, 1)))
    return int(min(n, max(MIN_FEATURES, min(MAX_FEATURES, r))))


def _seed(random_state: Any) -> int:
    return resolve_seed(random_state)


def _candidates(
    auto_a: bool, auto_i: bool, ga0: float, gi0: float, has_graph: bool
) -> list[tuple[float, float]]:
    """The defaults first, then the alternatives in a fixed order."""
    pairs = [(ga0, gi0)]
    if auto_i and has_graph and gi0 != 0.0:
        pairs += [(a, 0.0) for a in (GRID_A if auto_a else (ga0,))]
    elif auto_a:
        pairs += [(a, gi0) for a in GRID_A]
    out: list[tuple[float, float]] = []
    for p in pairs:
        if p not in out:
            out.append(p)
    return out


@on_one_blas_thread
def select_regularization(
    est: Any,
    *,
    columns: Any,
    L: Any,
    Y: np.ndarray,
    labeled: np.ndarray,
    sample_weight: np.ndarray | None,
    loss: str,
    power: int,
    scale: float,
    features: Any = None,
    gram: Any = None,
) -> tuple[float, float, dict]:
    r"""The normalized ``(gamma_a, gamma_i)`` to fit with, and the evidence.

    The rule of the module docstring.  With ``gamma_a="auto"`` and a number for
    ``gamma_i`` only :math:`\lambda_A` is chosen (the user's :math:`\lambda_I`
    kept), with the same test against the default :math:`\lambda_A` when
    :math:`\lambda_I > 0`, and as the lowest criterion when :math:`\lambda_I = 0`
    (no graph to protect: :func:`supervised_choice`); with a number for
    ``gamma_a`` and ``gamma_i="auto"`` the choice is between the user's
    :math:`\lambda_A` with and without the graph.  Above :data:`MAX_LOO_LABELS`
    labels the rule runs on a stratified subset drawn with ``random_state`` (the
    others count as unlabeled for the choice only): that many held-out labels
    separate the candidates clearly, and a fully labeled fit stays cheap.  Each
    held-out fit is balanced on up to :data:`MAX_UNLABELED` unlabeled points
    (evenly spaced; none: not balanced, as the estimator does not balance then).
    Cost: the n x r kernel block (:func:`feature_count`), two :math:`n r^2`
    products and two :math:`r^3` eigendecompositions, then
    :math:`O(l^2 r + l u C)` per candidate.  The evidence is in
    ``regularization_selection_`` and printed with ``verbose``.

    Parameters
    ----------
    est : FitParams or estimator
        Its ``gamma_a``, ``gamma_i``, ``random_state`` and the options
        ``regularization``, ``class_balance``, ``class_prior``.
    columns : callable or None
        ``columns(idx)`` -> ``K[:, idx]``; None when the kernel cannot be read
        (then the defaults are kept).
    L : Laplacian or None
    Y : ndarray of shape (n, C)
        ±1/0 one-vs-rest targets.
    labeled : ndarray of bool of shape (n,)
    sample_weight : ndarray of shape (n,) or None
    loss : {'squared', 'squared_hinge'}
    power : int
        The Laplacian's resolved power.
    scale : float
        The graph term's length normalization rho.
    features : ndarray of shape (n, r) or callable, optional
        LOO features computed before, or a function returning them (or None)
        called only when the rule runs (:func:`operator_features`); by
        default drawn here (:func:`features_for`).
    gram : ndarray of shape (r, r) or callable, optional
        :math:`\Phi^T L \Phi` of those features (or a function returning it,
        called only when they were given): the fit's
        :class:`~semisvm.solvers._landmarks.LandmarkSpace` forms it once for the
        selection, the coarse start and the preconditioner.

    Returns
    -------
    gamma_a, gamma_i : float
        Normalized weights (numbers the user passed are kept).
    info : dict
        ``rule`` ('loo' or 'defaults') and ``reason``; with the LOO rule also
        ``criterion``, ``pairs``, ``scores`` (criterion per pair), ``loo_error``
        (balanced LOO error rate per pair), ``default_score``, ``z`` (paired
        z-statistic of the best alternative against the defaults),
        ``n_features``, ``n_unlabeled_sample``, ``time``.
    """
    auto_a, auto_i = isinstance(est.gamma_a, str), isinstance(est.gamma_i, str)
    ga0 = _defaults.GAMMA_A if auto_a else float(est.gamma_a)
    gi0 = _defaults.GAMMA_I if auto_i else float(est.gamma_i)
    fewest = fewest_labels(Y, labeled)
    info: dict[str, Any] = {"rule": "defaults"}
    if not (auto_a or auto_i):
        info["reason"] = "gamma_a and gamma_i given"
        return ga0, gi0, info
    if fewest < MIN_LABELS_PER_CLASS:
        info["reason"] = (
            f"{fewest} labeled point(s) in the smallest class (< "
            f"{MIN_LABELS_PER_CLASS}): too few to judge the graph; graph-trusting "
            "defaults kept"
        )
        return ga0, gi0, info
    if columns is None:
        info["reason"] = "kernel not readable here (distributed input): defaults kept"
        return ga0, gi0, info
    pairs = _candidates(auto_a, auto_i, ga0, gi0, L is not None)
    if len(pairs) == 1:
        info["reason"] = "no alternative to the given weights"
        return ga0, gi0, info
    feats = features() if callable(features) else features
    if feats is None or L is None:
        gram = None
    ev = loo_evidence(
        est,
        columns=columns,
        L=L,
        Y=Y,
        labeled=labeled,
        sample_weight=sample_weight,
        loss=loss,
        pairs=pairs,
        power=power,
        scale=scale,
        features=feats,
        gram=gram() if callable(gram) else gram,
        with_labelers=True,
    )
    cut: dict = {}
    supervised_only = not auto_i and gi0 == 0.0
    k, z, k_best, why = _decide(ev, supervised_only, report=cut)
    info.update(ev.summary())
    info.update(cut)
    info.update(
        rule="loo",
        reason=why,
        z=float(z),
        z_errors=error_z(ev, k_best, 0),
        best_alternative=pairs[k_best],
        loo_point_errors=None if ev.point_errors is None else ev.point_errors[k],
        loo_point_criterion=ev.per_point[k],
        selection_point_errors=selection_point_errors(
            ev, lambda e, cuts: _decide(e, supervised_only, cuts=cuts)[0]
        ),
    )
    return pairs[k][0], pairs[k][1], info


def _decide(
    ev: LOOEvidence,
    supervised_only: bool,
    report: dict | None = None,
    cuts: dict | None = None,
) -> tuple[int, float, int, str]:
    """The rule's choice on the evidence ``ev``: ``(k, z, k_best, reason)``.

    With ``supervised_only`` (the user gave lambda_I = 0: no graph for the
    default to protect) the lowest criterion (:func:`supervised_choice`); else
    :func:`choose` with the graded threshold, near-ties between supervised
    candidates going to the largest gamma_a.
    """
    if supervised_only:
        k = supervised_choice(ev)
        why = (
            f"lambda_I = 0 given (no graph term): the lowest {CRITERION} "
            f"{ev.scores[k]:.4g} (LOO error {ev.errors[k]:.1%}); near-ties go to "
            "the largest gamma_a"
        )
        return k, float("nan"), k, why
    k, z, k_best, why = choose(ev, 0, Z_SWITCH, graded=True, report=report, cuts=cuts)
    if k != 0 and ev.pairs[k][1] == 0.0:
        sup = [j for j in range(len(ev.pairs)) if ev.pairs[j][1] == 0.0]
        k = k_best = sup[supervised_choice(ev.subset(sup))]
    return k, z, k_best, why


def without_point(ev: LOOEvidence, i: int) -> LOOEvidence:
    """The evidence of every candidate with labeled point ``i`` left out
    (criteria and error rates as means over the other points)."""
    keep = np.arange(ev.per_point.shape[1]) != i
    pp = ev.per_point[:, keep]
    pe = None if ev.point_errors is None else ev.point_errors[:, keep]
    return LOOEvidence(
        ev.pairs,
        pp,
        pp.mean(axis=1),
        ev.errors if pe is None else pe.mean(axis=1),
        ev.n_features,
        ev.n_unlabeled,
        0.0,
        point_errors=pe,
        labelers=ev.labelers,
        edges=ev.edges,
    )


def selection_point_errors(ev: LOOEvidence, decide: Any) -> np.ndarray | None:
    r"""Per labeled point, the LOO error of the candidate a rule chooses
    *without* that point: ``point_errors[decide(ev without i), i]``.

    The chosen candidate's own LOO error is optimistic -- it won on these labels
    among several -- and a labels-only model that was not chosen among
    candidates (the majority class) would be judged against a lucky draw.
    Rerunning the choice on the other labels' evidence for each held-out label
    scores the selection itself, as a nested leave-one-out would (Cawley &
    Talbot 2010), for :math:`O(l^2 K)` arithmetic on the evidence already
    computed (the held-out fits are not redone).  ``decide(evidence, cuts)``
    returns the chosen index; ``cuts`` is a dict it may use to memoize the
    unlabeled points' cut ratios (they do not depend on the held-out label).
    None without per-point errors.
    """
    if ev.point_errors is None:
        return None
    cuts: dict = {}
    idx = [decide(without_point(ev, i), cuts) for i in range(ev.point_errors.shape[1])]
    return ev.point_errors[idx, np.arange(len(idx))]


def supervised_choice(ev: LOOEvidence, rtol: float = 1e-9) -> int:
    r"""The supervised candidate to fit when the user gave :math:`\lambda_I = 0`:
    the lowest criterion, and among candidates within ``rtol`` of it (a
    floating-point tie, e.g. every LOO margin above 1) the largest
    :math:`\gamma_A`.

    The test against the default :math:`\lambda_A` (:func:`choose`) is there to
    protect the graph-trusting model; without a graph term the default
    :math:`10^{-6}` is a near-hard-margin fit with nothing to protect, and it
    won the ties of interpolating fits (every :math:`\lambda_A` up to
    :math:`10^{-4}` fits 10 labels alike): ``LapSVM(gamma_i=0)`` errs less with
    this choice than with the test (measurements: docs/rules.rst).
    """
    scores = np.asarray(ev.scores, dtype=float)
    best = float(scores.min())
    tied = np.flatnonzero(scores <= best + rtol * max(1.0, abs(best)))
    return int(max(tied, key=lambda k: (ev.pairs[k][0], -k)))


def operator_features(K: Any, labeled_idx: np.ndarray) -> np.ndarray | None:
    r"""The operator's own Nyström features as the LOO features, when they
    qualify; None otherwise.

    A Nyström, FITC or block operator already holds :math:`\Phi = k(X, Z)T`.
    When its landmarks include every labeled point (the supervised candidates
    are then exact), it has at least :data:`MIN_FEATURES` columns (or every
    point) and its products stay in the :data:`FEATURE_FLOPS` budget
    (:math:`n r^2`), the selection reads those features instead of drawing
    a second factor: one landmark set, and the graph-trusting candidate is
    scored on the kernel the fit solves with.
    """
    factor = nystroem_factor(K)
    idx = getattr(factor, "landmark_indices_", None)
    # asked of the class: the instance's property would form the features
    if factor is None or idx is None or not hasattr(type(factor), "features_"):
        return None
    n, r = int(factor.C_.shape[0]), int(factor.rank_)
    if not np.isin(labeled_idx, idx).all():
        return None
    if r < min(n, MIN_FEATURES) or n * r * r > FEATURE_FLOPS:
        return None
    return np.asarray(factor.features_, dtype=np.float64)


def features_for(
    est: Any, columns: Any, n: int, lab: np.ndarray, max_features: int | None = None
) -> np.ndarray:
    """The LOO features of :func:`loo_evidence` (landmarks: every labeled point
    of ``lab`` and others drawn with ``est.random_state``, 0 when None)."""
    r = (
        feature_count(n)
        if max_features is None
        else min(feature_count(n), max_features)
    )
    return loo_features(
        columns, n, lab, max_features=r, random_state=_seed(est.random_state)
    )


class LOOEvidence:
    """Balanced scale-free LOO evidence of a list of candidates on the same
    labeled points (one row per candidate).

    Attributes
    ----------
    pairs : list of (gamma_a, gamma_i)
    per_point : ndarray of shape (k, l)
        Each candidate's per-point criterion (weighted by the class weights).
    scores : ndarray of shape (k,)
        Its mean: the balanced scale-free LOO squared hinge.
    errors : ndarray of shape (k,)
        Weighted balanced LOO error rate.
    point_errors : ndarray of shape (k, l)
        Each candidate's per-point LOO error (0 or the point's weight over the
        mean weight): ``errors`` is its mean.
    labelers : list of callables or None
        Per candidate, ``labelers[k](idx)``: the class indices its fit on every
        label gives rows ``idx``, balanced as the estimator balances them (the
        unlabeled points' evidence, :func:`cut_ratio`).
    edges : list of (ndarray, ndarray) or None
        Per candidate, the edges of its graph on which cut fractions are
        measured (:func:`graph_edges`; None for a candidate without a graph).
    """

    def __init__(
        self,
        pairs,
        per_point,
        scores,
        errors,
        n_features,
        n_unlabeled,
        seconds,
        n_labels=None,
        point_errors=None,
        labelers=None,
        edges=None,
    ):
        self.pairs = list(pairs)
        self.per_point = np.asarray(per_point)
        self.scores = np.asarray(scores, dtype=np.float64)
        self.errors = np.asarray(errors, dtype=np.float64)
        self.n_features = n_features
        self.n_unlabeled = n_unlabeled
        self.seconds = seconds
        self.n_labels = self.per_point.shape[1] if n_labels is None else n_labels
        self.point_errors = (
            None if point_errors is None else np.asarray(point_errors, dtype=np.float64)
        )
        k = len(self.pairs)
        self.labelers = list(labelers) if labelers is not None else [None] * k
        self.edges = list(edges) if edges is not None else [None] * k

    def subset(self, rows: list[int]) -> LOOEvidence:
        """The evidence of the candidates ``rows`` only (same labeled points)."""
        return LOOEvidence(
            [self.pairs[i] for i in rows],
            self.per_point[rows],
            self.scores[rows],
            self.errors[rows],
            self.n_features,
            self.n_unlabeled,
            0.0,
            n_labels=self.n_labels,
            point_errors=None if self.point_errors is None else self.point_errors[rows],
            labelers=[self.labelers[i] for i in rows],
            edges=[self.edges[i] for i in rows],
        )

    @classmethod
    def concatenate(cls, parts: list[LOOEvidence]) -> LOOEvidence:
        return cls(
            [p for e in parts for p in e.pairs],
            np.concatenate([e.per_point for e in parts]),
            np.concatenate([e.scores for e in parts]),
            np.concatenate([e.errors for e in parts]),
            max(e.n_features for e in parts),
            max(e.n_unlabeled for e in parts),
            sum(e.seconds for e in parts),
            point_errors=(
                None
                if any(e.point_errors is None for e in parts)
                else np.concatenate([e.point_errors for e in parts])
            ),
            labelers=[f for e in parts for f in e.labelers],
            edges=[g for e in parts for g in e.edges],
        )

    def summary(self) -> dict:
        return dict(
            criterion=CRITERION,
            pairs=self.pairs,
            scores=self.scores,
            loo_error=self.errors,
            loo_loss=self.scores,
            default_score=float(self.scores[0]),
            default_loss=float(self.scores[0]),
            n_features=self.n_features,
            n_unlabeled_sample=self.n_unlabeled,
            n_loo_labels=self.n_labels,
            time=self.seconds,
        )


def _loo_engines(
    Phi: np.ndarray,
    L: Any,
    lab: np.ndarray,
    Yl: np.ndarray,
    w: np.ndarray | None,
    unl: np.ndarray,
    *,
    spectral: bool | str,
    gram: np.ndarray | None,
    intrinsic_bias: bool,
) -> tuple[SpectralLOO, SpectralLOO | None]:
    r"""The LOO engine of the free-intercept model and, when the fitted model has
    its bias inside a graph term that sees it (``intrinsic_bias`` on a Laplacian
    whose rows do not sum to 0, the normalized one), the engine of that model:
    features ``[Phi, 1]`` with the bias out of the ambient penalty.

    With ``gram`` (:math:`B = \Phi^T L \Phi`: the search's, or the fit's landmark
    space's) both engines read it, the second one's graph Gram bordered from it,
    :math:`[\Phi, 1]^T L [\Phi, 1] = [[B, \Phi^T L1], [1^T L\Phi, 1^T L1]]`
    (L symmetric), instead of a second :math:`n r^2` product."""
    n = Phi.shape[0]
    unl_idx = unl if unl.size else None
    engine = SpectralLOO(
        Phi,
        L,
        lab,
        Yl,
        weights=w,
        unlabeled_idx=unl_idx,
        spectral=spectral,
        gram=gram,
    )
    if L is None or not intrinsic_bias:
        return engine, None
    L1 = np.asarray(L @ np.ones(n), dtype=np.float64).ravel()
    if not _rows_do_not_sum_to_zero(L, n, L1):
        return engine, None
    gram_ib = None
    if gram is not None and isinstance(Phi, np.ndarray):
        gram_ib = border_gram(gram, Phi, L1)
    engine_ib = SpectralLOO(
        Phi.with_ones() if hasattr(Phi, "with_ones") else np.c_[Phi, np.ones(n)],
        L,
        lab,
        Yl,
        weights=w,
        unlabeled_idx=unl_idx,
        spectral=spectral,
        gram=gram_ib,
        fit_intercept=False,
        ambient_mask=np.r_[np.ones(Phi.shape[1]), 0.0],
    )
    return engine, engine_ib


def _rows_do_not_sum_to_zero(L: Any, n: int, L1: np.ndarray | None = None) -> bool:
    """True when ``L 1 != 0`` beyond rounding (a normalized Laplacian): the bias
    then matters in the graph term.  The scale is L's action on a +-1 vector.
    ``L1``: ``L @ 1`` when already computed."""
    r = (
        np.asarray(L @ np.ones(n), dtype=np.float64).ravel()
        if L1 is None
        else np.asarray(L1, dtype=np.float64).ravel()
    )
    v = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    scale = float(np.abs(np.asarray(L @ v, dtype=np.float64)).max())
    return bool(np.abs(r).max() > 1e-9 * max(scale, 1e-300))


#: the name of the criterion, as reported
CRITERION = "balanced scale-free LOO squared hinge"


def loo_evidence(
    est: Any,
    *,
    columns: Any,
    L: Any,
    Y: np.ndarray,
    labeled: np.ndarray,
    sample_weight: np.ndarray | None,
    loss: str,
    pairs: list[tuple[float, float]],
    power: int,
    scale: float,
    max_features: int | None = None,
    features: np.ndarray | None = None,
    max_unlabeled: int = MAX_UNLABELED,
    by_ratio: bool = False,
    gram: np.ndarray | None = None,
    with_labelers: bool = False,
) -> LOOEvidence:
    """Balanced scale-free LOO of every normalized ``(gamma_a, gamma_i)`` pair.

    The one scoring engine of the ``"auto"`` rule and of the ``*CV`` estimators:
    ``est`` supplies ``random_state`` and the options (the model to be fitted);
    ``columns``, ``L``, ``Y``, ``labeled``, ``sample_weight``, ``power`` and
    ``scale`` are the fit's own (:func:`~semisvm.models._problem.prepare_problem`).
    ``max_features`` caps the landmarks (default :func:`feature_count`);
    ``features`` passes a factor computed before (:func:`features_for`), shared by
    every graph on the same kernel; ``max_unlabeled`` caps the unlabeled points
    each held-out fit is balanced on.  ``by_ratio``: share one solve per ratio
    gamma_i / gamma_a between the pairs (``SpectralLOO(spectral='ratio')``) when
    they have at most :data:`MAX_RATIOS` ratios (the searches' geometric grids).
    ``gram``: :math:`\\Phi^T L \\Phi` of ``features`` formed before (the
    search's, or the fit's landmark space's).  ``with_labelers``:
    also keep, per pair, the labels its fit on every label gives (and the
    graph's edges) for :func:`cut_ratio` (the engines stay referenced).
    """
    t0 = time.perf_counter()
    n = Y.shape[0]
    lab = np.flatnonzero(labeled)
    Yl = Y[lab]
    if lab.size > MAX_LOO_LABELS:
        rng = as_generator(est.random_state)
        cls = Yl.argmax(axis=1) if Yl.shape[1] > 1 else (Yl[:, 0] > 0).astype(int)
        keep = np.concatenate(
            [
                rng.choice(
                    np.flatnonzero(cls == c),
                    max(1, round(MAX_LOO_LABELS * np.mean(cls == c))),
                    replace=False,
                )
                for c in np.unique(cls)
            ]
        )
        lab = np.sort(lab[keep])
        Yl = Y[lab]
    w = None if sample_weight is None else np.asarray(sample_weight)[lab]
    wsum = float(lab.size if w is None else w.sum())
    opts = resolved_options(est)
    unl = np.flatnonzero(~labeled)
    if unl.size > max_unlabeled:
        unl = unl[np.linspace(0, unl.size - 1, max_unlabeled).round().astype(np.intp)]
    raw = [
        paper_regularization(
            opts.regularization,
            a,
            i,
            n=n,
            weight_sum=wsum,
            L=L if i > 0 else None,
            power=power,
            scale=scale,
        )
        for a, i in pairs
    ]
    Phi = (
        features
        if features is not None
        else features_for(est, columns, n, lab, max_features)
    )
    need_graph = L is not None and any(i > 0 for _, i in pairs)
    # one eigendecomposition of Phi^T L Phi pays off for many graph pairs; for
    # the few of the "auto" rule a Cholesky solve per pair is cheaper
    n_graph = len({p for p in raw if p[1] > 0})
    spectral: bool | str = n_graph > 3
    if by_ratio and len({f"{i / a:.12g}" for a, i in raw if i > 0}) <= MAX_RATIOS:
        spectral = "ratio"
    engine, engine_ib = _loo_engines(
        Phi,
        L if need_graph else None,
        lab,
        Yl,
        w,
        unl,
        spectral=spectral,
        gram=gram,
        intrinsic_bias=bool(opts.intrinsic_bias),
    )
    balance = opts.class_balance if unl.size else None
    targets = None if balance is None else _balance_targets(opts, Yl)
    per_point, scores, errors, point_errors = [], [], [], []
    ww = np.ones(lab.size) if w is None else w
    for ga, gi in raw:
        eng = engine_ib if (engine_ib is not None and gi > 0) else engine
        if balance is None:
            _, O = eng.rls(ga, gi) if loss == "squared" else eng.l2svm(ga, gi)
        else:
            O, FU, D = eng.fold_outputs(ga, gi, loss)
            assert targets is not None  # set above when balance is not None
            if balance == "mean":
                O = O + np.stack(
                    [
                        targets[c] - (FU[:, c][:, None] + D[c]).mean(axis=0)
                        for c in range(O.shape[1])
                    ],
                    axis=1,
                )
            else:
                O, _ = balanced_loo(O, FU, D, targets)
        m = margins(O, Yl)
        value, pts = scale_free_squared_hinge(m, w)
        scores.append(value)
        per_point.append(pts * ww / ww.mean())
        errors.append(float(ww[m <= 0].sum() / ww.sum()))
        point_errors.append((m <= 0) * ww / ww.mean())
    labelers = edges = None
    if with_labelers:
        edges = [graph_edges(L, n) if need_graph else None] * len(pairs)
        labelers = [
            _Labeler(
                engine_ib if (engine_ib is not None and gi > 0) else engine,
                Phi,
                engine_ib is not None and gi > 0,
                (ga, gi),
                loss,
                (unl, balance, targets),
            )
            for ga, gi in raw
        ]
    return LOOEvidence(
        pairs,
        per_point,
        scores,
        errors,
        Phi.shape[1],
        int(unl.size),
        time.perf_counter() - t0,
        point_errors=point_errors,
        labelers=labelers,
        edges=edges,
    )


def _balance_targets(opts: Any, Yl: np.ndarray) -> np.ndarray:
    r"""The class-mass targets :math:`2\pi_c - 1` the estimator balances its
    unlabeled outputs to (one column for two classes)."""
    n_cls = max(2, Yl.shape[1])
    y_idx = Yl.argmax(axis=1) if Yl.shape[1] > 1 else (Yl[:, 0] > 0).astype(int)
    prior = resolve_class_prior(
        None if isinstance(opts.class_prior, str) else opts.class_prior,
        y_idx,
        n_cls,
    )
    prior = np.asarray(prior, dtype=np.float64)
    return 2.0 * (prior[1:2] if Yl.shape[1] == 1 else prior) - 1.0


class _Labeler:
    """The class indices one candidate's fit on every label gives any rows: the
    engine's outputs (:meth:`SpectralLOO.outputs`), shifted by the class-mass
    offsets of its outputs on the unlabeled sample as the estimator shifts its
    own (``class_balance``), then thresholded (two classes) or argmax."""

    def __init__(self, engine, Phi, ones, pair, loss, balancing):
        self.engine, self.Phi, self.ones = engine, Phi, ones
        self.pair, self.loss = pair, loss
        self.unl, self.balance, self.targets = balancing
        self._offsets: np.ndarray | None = None

    def _rows(self, idx: np.ndarray) -> np.ndarray:
        if not self.ones:
            return np.asarray(self.Phi[idx], dtype=np.float64)
        if hasattr(self.Phi, "with_ones"):
            return np.asarray(self.Phi.with_ones()[idx], dtype=np.float64)
        return np.c_[np.asarray(self.Phi[idx], dtype=np.float64), np.ones(idx.size)]

    def _outputs(self, idx: np.ndarray) -> np.ndarray:
        return self.engine.outputs(self._rows(idx), *self.pair, self.loss)

    def __call__(self, idx: np.ndarray) -> np.ndarray:
        idx = np.asarray(idx, dtype=np.intp)
        balance = self.balance is not None and self.unl.size > 0
        if balance and self._offsets is None:  # one pass over rows and sample
            FF = self._outputs(np.r_[idx, self.unl])
            F, FU = FF[: idx.size], FF[idx.size :]
        else:
            F = self._outputs(idx)
        if balance:
            if self._offsets is None:
                t = self.targets
                self._offsets = np.array(
                    [
                        t[c] - FU[:, c].mean()
                        if self.balance == "mean"
                        else mass_shifts(FU[:, c][:, None], t[c])[0]
                        for c in range(F.shape[1])
                    ]
                )
            F = F + self._offsets
        return F.argmax(axis=1) if F.shape[1] > 1 else (F[:, 0] > 0).astype(np.intp)


#: rows whose incident graph edges measure the cut fractions (evenly spaced)
CUT_ROWS = 2000


def graph_edges(L: Any, n: int, max_rows: int = CUT_ROWS) -> tuple | None:
    """Edges ``(i, j)`` of the graph behind the Laplacian ``L`` incident to up to
    ``max_rows`` evenly spaced rows (all edges, each both ways, when ``n <=
    max_rows``): the off-diagonal nonzeros of L (of its base for a power).
    None when L is not a sparse matrix (an operator, a distributed graph)."""
    import scipy.sparse as sp

    base = getattr(L, "base", L)
    if not sp.issparse(base):
        return None
    A = sp.csr_array(base)
    rows = (
        np.arange(n)
        if n <= max_rows
        else np.unique(np.linspace(0, n - 1, max_rows).round().astype(np.intp))
    )
    sub = A[rows].tocoo()
    i, j = rows[sub.row], np.asarray(sub.col, dtype=np.intp)
    keep = (i != j) & (sub.data != 0)
    return i[keep], j[keep]


def cut_ratio(ev: LOOEvidence, k_default: int, k_alt: int) -> dict | None:
    r"""What the unlabeled points say: the fraction of graph edges each
    candidate's labels cut, and their ratio :math:`r = c_{alt} / c_{def}`.

    A boundary through a sparse region of the data cuts few edges of the kNN
    graph, one through a dense region many.  The graph-trusting model is worth
    its prior only when the data have such a gap *where the labels put the
    boundary*: then the supervised candidate, whose boundary ignores the
    unlabeled points, cuts more edges (two moons: r = 30, USPST 5 labels per
    class: 1.6), while where the classes cross the clusters both boundaries cut
    alike (:math:`r \approx 1`: tanh, noise_hd, linear boundaries through uniform
    mass).  Measured on the edges of the defaults' graph (:func:`graph_edges`).  None without labelers or edges.
    """
    f_def, f_alt = ev.labelers[k_default], ev.labelers[k_alt]
    edges = ev.edges[k_default]
    if f_def is None or f_alt is None or edges is None or edges[0].size == 0:
        return None
    i, j = edges
    idx = np.unique(np.r_[i, j])
    pi, pj = np.searchsorted(idx, i), np.searchsorted(idx, j)
    cuts = []
    for f in (f_def, f_alt):
        lab = f(idx)
        cuts.append(float(np.mean(lab[pi] != lab[pj])))
    c_def, c_alt = cuts
    if c_def > 0:
        r = c_alt / c_def
    else:
        r = float(np.inf) if c_alt > 0 else 1.0
    return {"cut_default": c_def, "cut_alternative": c_alt, "cut_ratio": r}


def graded_threshold(r: float) -> float:
    r"""The z needed to leave the graph-trusting defaults given the cut ratio r:
    :math:`\min(Z_{max}, \max(0, a \ln r))` with a = :data:`CUT_SLOPE`.

    The prior log-odds of the graph grow with the evidence the unlabeled points
    give for it: none at r <= 1 (the defaults' boundary is no sparser than the
    labels-only one: even odds, z > 0), the fixed :data:`Z_SWITCH` at r = 1.31,
    z > 4.2 at r = 2; capped at :data:`Z_MAX` (labels that beat the defaults by
    5 standard errors always win: a degenerate cut of 0 cannot lock them out).
    """
    return float(min(Z_MAX, max(0.0, CUT_SLOPE * np.log(r)))) if r > 0 else 0.0


def choose(
    ev: LOOEvidence,
    k_default: int,
    z_switch: float,
    prior_name: str = "the defaults",
    graded: bool = False,
    report: dict | None = None,
    cuts: dict | None = None,
) -> tuple[int, float, int, str]:
    r"""The candidate to fit: the default unless the best other one is better by
    more than ``z_switch`` standard errors of the paired per-point differences
    of the criterion, and does not make *significantly* more LOO errors (its
    paired per-point 0-1 differences are not above the default's by more than
    ``z_switch`` standard errors; without per-point errors: no more errors).

    With ``graded`` and labelers in ``ev`` (``loo_evidence(with_labelers=True)``)
    the z needed is :func:`graded_threshold` of the :func:`cut_ratio` of the two
    (``z_switch`` when it cannot be measured); the veto keeps ``z_switch``.  The
    cut figures go into ``report`` when given; ``cuts`` memoizes them by pair.

    The test is strict (:math:`z > z^* \ge 0`), so a near-tie (floating-point
    noise in the criterion) never moves the choice.

    Returns ``(chosen index, z, best alternative index, reason)``.  The best
    alternative has the lowest criterion, then fewest errors, then comes first.
    """
    others = [k for k in range(len(ev.pairs)) if k != k_default]
    k_best = min(others, key=lambda k: (ev.scores[k], ev.errors[k], k))
    z = paired_z(ev.per_point[k_default] - ev.per_point[k_best])
    if ev.point_errors is None:
        more_errors = bool(ev.errors[k_best] > ev.errors[k_default])
    else:
        more_errors = error_z(ev, k_best, k_default) > z_switch
    cut = None
    if graded and z > 0 and not more_errors:
        cuts = {} if cuts is None else cuts
        if (k_default, k_best) not in cuts:
            cuts[k_default, k_best] = cut_ratio(ev, k_default, k_best)
        cut = cuts[k_default, k_best]
        cut = None if cut is None else dict(cut)
    if cut is not None:
        z_switch = graded_threshold(cut["cut_ratio"])
        cut["z_needed"] = z_switch
        if report is not None:
            report.update(cut)
    switch = z > z_switch and not more_errors
    desc = (
        f"{ev.scores[k_best]:.4g} (LOO error {ev.errors[k_best]:.1%}) vs "
        f"{ev.scores[k_default]:.4g} ({ev.errors[k_default]:.1%}) for "
        f"{prior_name}, z = {z:.2f}"
    )
    if cut is not None:
        desc += (
            f"; graph edges cut {cut['cut_alternative']:.2%} vs "
            f"{cut['cut_default']:.2%} (ratio {cut['cut_ratio']:.2f})"
        )
    if switch:
        return k_best, z, k_best, f"{CRITERION} {desc} > {z_switch:.3g}"
    needed = f"z > {z_switch:.3g}"
    if graded and cut is None and z <= 0:
        needed = f"z > max(0, {CUT_SLOPE:g} ln(cut ratio))"
    elif cut is not None:
        needed = f"z > {z_switch:.3g} = {CUT_SLOPE:g} ln(cut ratio)"
    return (
        k_default,
        z,
        k_best,
        (
            f"{prior_name} kept: best alternative scores {desc} (leaves {prior_name} "
            f"only when {needed} without significantly more errors)"
        ),
    )


def error_z(ev: LOOEvidence, k: int, k_default: int) -> float:
    """How many more LOO errors candidate ``k`` makes than ``k_default``, in
    standard errors of the paired per-point 0-1 differences (nan without
    per-point errors)."""
    if ev.point_errors is None:
        return float("nan")
    return paired_z(ev.point_errors[k] - ev.point_errors[k_default])


def paired_z(diff: np.ndarray) -> float:
    """Mean over standard error of paired differences (inf when they are all
    equal and positive, 0 when all zero)."""
    se = float(diff.std(ddof=1) / np.sqrt(diff.size)) if diff.size > 1 else 0.0
    gain = float(diff.mean())
    if se > 0:
        return gain / se
    return float(np.inf) if gain > 0 else 0.0


def z_threshold(n_candidates: int, n_points: int | None = None) -> float:
    r""":data:`Z_SWITCH` for the 8 candidates of the ``"auto"`` rule, raised for
    larger searches by the Bonferroni factor: the one-sided level
    :math:`1 - \Phi(Z)` is divided by ``n_candidates / 8`` (the best of many
    candidates beats the default by chance more often).

    With ``n_points`` (the held-out points behind the paired differences) and
    more than 8 candidates, the quantile of Student's t with ``n_points - 1``
    degrees of freedom replaces the normal one: the paired z is a t statistic,
    and at 10-20 labels the Bonferroni level of a large search lies far in its
    tail (10 labels, 980 candidates: 4.93 instead of 3.35).  The 8 candidates
    of the ``"auto"`` rule keep :data:`Z_SWITCH` (its thresholds were replayed
    on the benchmark as they are)."""
    from scipy.stats import norm, t

    level = float(norm.sf(Z_SWITCH)) * min(1.0, 8.0 / max(n_candidates, 1))
    if n_points is None or n_points < 3 or n_candidates <= 8:
        return float(norm.isf(level))
    return float(t(n_points - 1).isf(level))
