r"""Never worse than the labels alone: the majority class and the supervised model.

After the regularization choice, the chosen model's leave-one-out error on the
labeled points is compared with that of two models that use the labels only:

* the **majority class** of the other labeled points;
* a **supervised kernel machine on the labeled points**, as good as ``SVC`` on
  the labels: the exact kernel of the labeled points (for the RBF kernel the
  width ``gamma="scale"`` of scikit-learn's SVC, :math:`1/(d\,\mathrm{Var}\,X)`),
  the estimator's loss, :math:`\lambda_A` chosen among
  :data:`~semisvm.models._autoreg.GRID_A` by the same exact leave-one-out
  (:func:`~semisvm.models._autoreg.loo_evidence` on the l labeled points).
  It lives on the labeled points whatever the operator, so a Nyström or FITC
  kernel at large n does not weaken it.

A margin the labels can see is, of the points where two models disagree, at
least :data:`MIN_MARGIN` more right (:func:`labels_prefer`).  The majority class,
the model of no information, is the reference: the chosen model is kept only
where it beats the majority class by a margin and one standard deviation of
the difference (:func:`beats_majority`; the burden is on the model): three
labels where the majority class is right on some held-out labels, two where
the labels are balanced and it is a tie (:func:`majority_margin`); against a
real majority class its leave-one-out criterion must also beat the majority
class's continuous form, the intercept-only fit, by one standard error
(:func:`criterion_beats`: counts of labels right are a coarse statistic, and a
model of noise that gets a few more right by luck is rarely surer of them).  The
supervised model replaces the chosen one only where it beats it by
:data:`MIN_MARGIN` and the majority class by three labels and the deviation;
otherwise the fit returns the majority class, or the supervised model where
that beats the majority class so (a second look at the same labels, where
chance gets a second try: three labels always) (:func:`choose_baseline`,
:func:`fit_baseline`); ``regularization_selection_["baseline"]`` says which and
why.  Against the majority class, which is not chosen among candidates, each
model is scored by the LOO error of its *selection* (each held-out label by the
candidate the rule picks without it:
:func:`~semisvm.models._autoreg.selection_point_errors`), so that the best of
several candidates is not credited with its luck on these labels; the chosen
and the supervised model are compared on their own LOO errors.  With balanced
labels the majority class's LOO error is 100% (the class left out is the
minority of the others): there the reference binds only a model that errs on
most held-out labels.  Why a margin and
not a significance test: docs/rules.rst.  The supervised model is weighed
against the chosen one where the regularization rule judges the graph (at least
:data:`~semisvm.models._autoreg.MIN_LABELS_PER_CLASS` labels in every class:
fewer labels cannot tell a leave-one-out error of the graph model from its
strength); the majority class is the reference at any count where a model can
beat it on the held-out labels by the margin (:func:`majority_beatable`: ten
labels drawn 6/4 from noise fall back to it, one label per class is never
judged).  The check runs where ``gamma_a`` or ``gamma_i`` is ``"auto"``: numbers given by the
user are kept (option ``labels_only_check``: ``'always'`` checks them too, as
the refit of the cross-validated estimators does; ``None`` never checks).
This is the promise of safe semi-supervised learning (Li & Zhou, S4VM, TPAMI 2015: "never
significantly inferior to the supervised SVM") made on the labels' own evidence.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from ._adaptive import adapt_outputs, paper_regularization
from ._autoreg import (
    GRID_A,
    MIN_LABELS_PER_CLASS,
    loo_evidence,
    operator_features,
    paired_z,
    selection_point_errors,
    supervised_choice,
)
from ._problem import FittedKernel, Problem, prediction_kernel

__all__ = [
    "BaselineChoice",
    "beats_majority",
    "choose_baseline",
    "criterion_beats",
    "fit_baseline",
    "majority_beatable",
    "majority_loo",
    "majority_criterion",
    "majority_margin",
    "scale_gamma",
]

#: fewest more held-out labels a labels-only model must get right
MIN_MARGIN = 2
#: standard errors by which a model's LOO criterion must beat the majority class's
Z_CRITERION = 1.0
#: fewest more held-out labels a model must get right to beat a majority class
#: that is right on some of them, and the supervised model at the second look:
#: two of two discordant labels fall to a model by chance one time in four,
#: three of three one time in eight (:func:`majority_margin`)
MAJORITY_MARGIN = 3


@dataclass(frozen=True)
class BaselineChoice:
    """A labels-only model the fit falls back to.

    Attributes
    ----------
    kind : {'majority', 'supervised'}
    gamma_a : float
        Normalized :math:`\\lambda_A` of the supervised model (nan for the
        majority class).
    gamma : float or None
        Its kernel parameter (``gamma_``).
    info : dict
        The comparison (``regularization_selection_["baseline"]``).
    """

    kind: str
    gamma_a: float
    gamma: float | None
    info: dict


def scale_gamma(X: Any) -> float:
    r"""scikit-learn's ``gamma="scale"``: :math:`1/(d\,\mathrm{Var}\,X)` (1 for
    constant X)."""
    if sp.issparse(X):
        Xc = sp.csr_matrix(X)
        var = float(Xc.multiply(Xc).mean() - Xc.mean() ** 2)
    else:
        var = _variance(np.asarray(X))
    return 1.0 / (X.shape[1] * var) if var > 0 else 1.0


def _variance(X: np.ndarray) -> float:
    """The variance of all entries of X in float64, two passes over row blocks
    (the mean, then the squared deviations): no float64 copy of a float32 X
    (627 MB at 100,000 x 784)."""
    rows = max(1, (32 * 2**20) // (8 * max(1, X[0].size if X.ndim > 1 else 1)))
    blocks = [X[s : s + rows] for s in range(0, X.shape[0], rows)]
    mean = sum(float(b.sum(dtype=np.float64)) for b in blocks) / X.size
    sq = sum(float(np.square(b.astype(np.float64) - mean).sum()) for b in blocks)
    return sq / X.size


def majority_loo(y_idx: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """Per labeled point, 1 when the majority class of the others (by weight;
    ties to the first class) is not its class."""
    w = np.ones(y_idx.size) if weights is None else np.asarray(weights, float)
    totals = np.bincount(y_idx, weights=w)
    errors = np.empty(y_idx.size)
    for i, c in enumerate(y_idx):
        t = totals.copy()
        t[c] -= w[i]
        errors[i] = float(np.argmax(t) != c)
    return errors


def majority_margin(errors: np.ndarray) -> int:
    """The margin by which the chosen model must beat the majority class:
    :data:`MAJORITY_MARGIN` where the majority class is right on some held-out
    labels (imbalanced labels: a fallback worth keeping, and noise must not beat
    it by luck), :data:`MIN_MARGIN` where it errs on every one (balanced labels:
    the majority class is then a tie, an arbitrary class, with nothing to keep)."""
    return MAJORITY_MARGIN if bool(np.any(errors == 0)) else MIN_MARGIN


def majority_beatable(y_idx: np.ndarray, errors: np.ndarray) -> bool:
    """Whether a model can beat the majority class on these held-out labels by
    :func:`majority_margin`: at least that many labels the majority class misses
    whose class keeps a label without them (else no model predicts them)."""
    counts = np.bincount(y_idx)
    misses = int(np.sum((errors > 0) & (counts[y_idx] >= 2)))
    return misses >= majority_margin(errors)


def labels_prefer(
    base: np.ndarray | None,
    cand: np.ndarray | None,
    base_rate: float,
    cand_rate: float,
    n_labels: int,
) -> bool:
    r"""Whether the held-out labels prefer the labels-only model ``base`` to
    the chosen model ``cand``.

    With per-point LOO errors of both (same points, weighted): of the points
    where one errs and the other does not, the baseline is right on
    :math:`b - c \ge` :data:`MIN_MARGIN` more (the discordant pairs of
    McNemar's test).  Without them (the rule's evidence on a subset of the
    labels), on :math:`l\,(e_{cand} - e_{base}) \ge` :data:`MIN_MARGIN` more.
    Two fitted models are weighed on the margin alone: the burden of one
    standard deviation is on a model against the majority class
    (:func:`beats_majority`).
    """
    if base is not None and cand is not None and base.shape == cand.shape:
        b = float(np.sum(np.clip(cand - base, 0, None)))
        c = float(np.sum(np.clip(base - cand, 0, None)))
        return b - c >= MIN_MARGIN - 1e-9  # rates of counts: round-off
    return n_labels * (cand_rate - base_rate) >= MIN_MARGIN - 1e-9


def beats_majority(
    majority: np.ndarray,
    model: np.ndarray | None,
    majority_rate: float,
    model_rate: float,
    n_labels: int,
    margin: int = MIN_MARGIN,
) -> bool:
    r"""Whether the held-out labels see a model beat the majority class.

    Of the labels where the two disagree, the model is right on :math:`c` and
    the majority class on :math:`b`; the model wins by
    :math:`c - b \ge \max(m, \sqrt{b + c})` (``margin`` m, :data:`MIN_MARGIN`
    by default): the margin, and one standard deviation of :math:`c - b` where
    the two are equally good (McNemar's statistic at 1).  b and c count labels:
    with sample weights the weighted difference must be positive too, but a
    loss weight does not make a label more evidence.  At 100 labels a leave-one-out
    error wanders by about five points, so a model of labels that X does not
    predict beats the majority class by two labels by chance, where a real
    gain of ten points clears the deviation (docs/rules.rst).  Without
    per-point errors, on the rates
    (:math:`b + c \le l\,(e_{model} + e_{maj})`).
    """
    if model is None or model.shape != majority.shape:  # on the rates
        gain = n_labels * (majority_rate - model_rate)
        spread = n_labels * (majority_rate + model_rate)
        return gain >= max(margin, np.sqrt(spread)) - 1e-9
    # the evidence is a count of labels; with weights the weighted gain must
    # also be positive (a loss weight does not make a label more evidence)
    gain_w = float(np.sum(majority - model))
    wrong_m, wrong_x = majority > 0, model > 0
    c = float(np.sum(wrong_m & ~wrong_x))
    b = float(np.sum(wrong_x & ~wrong_m))
    return gain_w > 0 and c - b >= max(margin, np.sqrt(b + c)) - 1e-9


def majority_criterion(Y: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    r"""Per labeled point, the selection's criterion of the majority class's
    continuous form: the intercept-only fit.

    Its leave-one-out output for point i is the weighted mean of the other
    labels' :math:`\pm 1` targets (per one-vs-rest column of ``Y``, shape (l, C));
    the margins (:func:`~semisvm.solvers._loo.margins`) are scored by the
    scale-free squared hinge (:func:`~semisvm.solvers._loo.scale_free_squared_hinge`)
    on the evidence's scale (weight over the mean weight), as
    :func:`~semisvm.models._autoreg.loo_evidence` scores a model's.
    """
    from ..solvers._loo import margins, scale_free_squared_hinge

    Y = np.asarray(Y, dtype=np.float64)
    w = np.ones(Y.shape[0]) if weights is None else np.asarray(weights, float)
    total = w @ Y
    O = (total[None, :] - w[:, None] * Y) / (w.sum() - w)[:, None]
    _, pts = scale_free_squared_hinge(margins(O, Y), w)
    return pts * w / w.mean()


def criterion_beats(majority: np.ndarray, model: np.ndarray | None) -> bool:
    r"""Whether a model's per-point LOO criterion beats the majority class's
    (:func:`majority_criterion`) by one standard error of the paired
    differences: :math:`\bar d / (s_d/\sqrt l) > 1`, :math:`d_i` the majority
    class's loss minus the model's.  The 0-1 errors count the labels a model
    gets right; the criterion also weighs how surely, and a model of noise that
    is right on a few more labels by luck is rarely surer (docs/rules.rst).
    True without per-point criteria (nothing to judge)."""
    if model is None or model.shape != majority.shape:
        return True
    return paired_z(majority - model) > Z_CRITERION


def _criterion_z(majority: np.ndarray, model: Any, n_labels: int) -> float:
    """The paired z of :func:`criterion_beats` (nan without per-point criteria)."""
    pts = _per_point(model, n_labels)
    return float("nan") if pts is None else paired_z(majority - pts)


def _rate(errors: np.ndarray, weights: np.ndarray | None) -> float:
    w = np.ones(errors.size) if weights is None else np.asarray(weights, float)
    return float(np.sum(w * errors) / np.sum(w))


def _labeled_kernel(params: Any, problem: Problem) -> tuple[FittedKernel, Any]:
    """The supervised model's kernel and the labeled rows it is computed on."""
    lab = problem.targets.labeled_idx
    if params.kernel == "precomputed":
        return FittedKernel(kernel="precomputed"), lab
    gamma = scale_gamma(problem.X) if params.kernel == "rbf" else problem.ops.gamma_
    return (
        FittedKernel(
            kernel=params.kernel,
            gamma_=gamma,
            degree=params.degree,
            coef0=params.coef0,
            kernel_params=params.kernel_params,
        ),
        problem.X[lab],
    )


def _per_point(errors: Any, n_labels: int) -> np.ndarray | None:
    """Per-point errors as float64 when there is one per labeled point."""
    if errors is None or np.asarray(errors).shape != (n_labels,):
        return None
    return np.asarray(errors, dtype=np.float64)


def _candidate_error(
    problem: Problem, params: Any, reg: Any
) -> tuple[float, np.ndarray | None, np.ndarray | None] | None:
    """The chosen pair's LOO error rate, per-point errors and per-point
    criterion: from the selection's evidence, else computed for that pair
    alone (None where no LOO was possible)."""
    info = reg.info
    pair = (reg.gamma_a, reg.gamma_i)
    if info.get("rule") == "loo" and pair in list(info.get("pairs", [])):
        rate = float(info["loo_error"][list(info["pairs"]).index(pair)])
        return rate, info.get("loo_point_errors"), info.get("loo_point_criterion")
    if params.kernel == "precomputed" and not isinstance(problem.ops.K, np.ndarray):
        return None
    from ._problem import kernel_columns

    # the selection's features: the operator's own, with the landmark space's
    # graph Gram (formed once per fit: the coarse start and the preconditioner
    # read it too)
    L = None if reg.gamma_i == 0 else problem.ops.L
    feats = operator_features(problem.ops.K, problem.targets.labeled_idx)
    space = problem.landmarks
    ev = loo_evidence(
        params,
        columns=kernel_columns(params, problem.X, problem.ops.K, problem.ops.gamma_),
        L=L,
        Y=problem.targets.Y,
        labeled=problem.targets.labeled,
        sample_weight=problem.sample_weight,
        loss=params.objective,
        pairs=[pair],
        power=problem.ops.laplacian_power,
        scale=problem.ops.graph_scale,
        features=feats,
        gram=None if feats is None or L is None or space is None else space.gram,
    )
    pe = None if ev.point_errors is None else ev.point_errors[0]
    pts = ev.per_point[0]
    if ev.n_labels != int(problem.targets.labeled.sum()):
        pe = pts = None
    return float(ev.errors[0]), pe, pts


def _supervised_evidence(
    problem: Problem, params: Any, w: np.ndarray | None
) -> tuple[Any, FittedKernel]:
    """The exact LOO evidence of the supervised candidates (:data:`GRID_A`) on
    the labeled points, and their kernel."""
    t = problem.targets
    lab = t.labeled_idx
    kernel, Xl = _labeled_kernel(params, problem)
    if params.kernel == "precomputed":
        KLL = np.asarray(problem.X)[np.ix_(lab, lab)]

        def columns(idx: np.ndarray) -> np.ndarray:
            return np.asarray(KLL[:, idx], dtype=np.float64)
    else:

        def columns(idx: np.ndarray) -> np.ndarray:
            return np.asarray(prediction_kernel(kernel, Xl, Xl[idx]), dtype=np.float64)

    ev = loo_evidence(
        params,
        columns=columns,
        L=None,
        Y=t.Y[lab],
        labeled=np.ones(lab.size, dtype=bool),
        sample_weight=w,
        loss=params.objective,
        pairs=[(a, 0.0) for a in GRID_A],
        power=1,
        scale=1.0,
    )
    return ev, kernel


def choose_baseline(problem: Problem, params: Any, reg: Any) -> BaselineChoice | None:
    """The labels-only model to fall back to, or None (module docstring)."""
    t = problem.targets
    when = params.options.labels_only_check
    given = not (isinstance(params.gamma_a, str) or isinstance(params.gamma_i, str))
    if when is None or (given and when != "always"):
        return None
    t0 = time.perf_counter()
    lab = t.labeled_idx
    w = None if problem.sample_weight is None else problem.sample_weight[lab]
    maj_pe = majority_loo(t.y_idx[lab], w)
    counts = np.bincount(t.y_idx[lab], minlength=t.classes.size)
    judged = counts.min() >= MIN_LABELS_PER_CLASS
    if not judged and not majority_beatable(t.y_idx[lab], maj_pe):
        return None
    found = _candidate_error(problem, params, reg)
    if found is None:
        return None
    cand, cand_pe, cand_pts = found
    maj = _rate(maj_pe, w)
    if w is not None:  # on the evidence's scale: weight over the mean weight
        maj_pe = maj_pe * w / w.mean()
    l_ = lab.size
    cpe = _per_point(cand_pe, l_)
    cand_sel_pe = cpe
    if cpe is not None:
        cand_sel_pe = _per_point(reg.info.get("selection_point_errors"), l_)
    # against the majority class (not chosen among candidates) each model is
    # scored by its selection's errors, where there are; the two models chosen
    # on the same labels are compared on their own
    cand_sel_pe = cpe if cand_sel_pe is None else cand_sel_pe
    cand_sel = cand if cand_sel_pe is None else float(np.mean(cand_sel_pe))
    # the majority class is the model of no information: any other must beat it
    # by a margin the labels can see
    maj_pts = majority_criterion(t.Y[lab], w)
    margin = majority_margin(maj_pe)
    real = margin == MAJORITY_MARGIN  # the criterion too against a real majority
    beats = beats_majority(maj_pe, cand_sel_pe, maj, cand_sel, l_, margin) and (
        not real or criterion_beats(maj_pts, _per_point(cand_pts, l_))
    )
    if beats and cand * t.labeled.sum() < MIN_MARGIN:
        # fewer held-out errors than the margin: no labels-only model can win
        info0 = dict(
            candidate_loo_error=cand,
            candidate_selection_error=cand_sel,
            majority_loo_error=maj,
            fallback=None,
            reason=f"the chosen model beats the majority class and errs on fewer "
            f"than {MIN_MARGIN} held-out labels: no labels-only model can do "
            "better by a margin they can see",
            time=time.perf_counter() - t0,
        )
        return BaselineChoice("none", float("nan"), None, info0)
    ev, kernel = _supervised_evidence(problem, params, w)
    k = supervised_choice(ev)
    sup = float(ev.errors[k])
    sup_pe = None if ev.point_errors is None else ev.point_errors[k]
    sup_sel_pe = selection_point_errors(ev, lambda e, _: supervised_choice(e))
    if ev.n_labels != l_:
        sup_pe = sup_sel_pe = None
    sup_sel_pe = sup_pe if sup_sel_pe is None else sup_sel_pe
    sup_sel = sup if sup_sel_pe is None else float(np.mean(sup_sel_pe))
    sup_pts = _per_point(ev.per_point[k], l_) if ev.n_labels == l_ else None
    # the supervised model's second look: three labels, and the criterion
    sup_beats = beats_majority(
        maj_pe, sup_sel_pe, maj, sup_sel, l_, MAJORITY_MARGIN
    ) and (not real or criterion_beats(maj_pts, sup_pts))
    info: dict[str, Any] = dict(
        candidate_loo_error=cand,
        candidate_selection_error=cand_sel,
        candidate_criterion_z=_criterion_z(maj_pts, cand_pts, l_),
        supervised_criterion_z=_criterion_z(maj_pts, sup_pts, l_),
        majority_loo_error=maj,
        supervised_loo_error=sup,
        supervised_selection_error=sup_sel,
        supervised_gamma_a=float(ev.pairs[k][0]),
        supervised_gamma=kernel.gamma_,
        time=time.perf_counter() - t0,
    )
    if not beats:
        best, err = "majority", maj
        if sup_beats:
            best, err = "supervised", sup_sel
        info.update(
            fallback=best,
            reason=f"the chosen model does not beat the majority class on the "
            f"held-out labels by a margin they can see (leave-one-out error "
            f"of its selection {cand_sel:.1%} against {maj:.1%}); the {best} "
            "model is fitted "
            f"(leave-one-out error {err:.1%})",
        )
        return BaselineChoice(best, float(ev.pairs[k][0]), kernel.gamma_, info)
    # the supervised model against the graph model: where the rule judges it
    if judged and labels_prefer(sup_pe, cpe, sup, cand, l_) and sup_beats:
        info.update(
            fallback="supervised",
            reason=f"the held-out labels prefer the supervised model (leave-one-out "
            f"error {sup:.1%} against the chosen model's {cand:.1%}, by a margin "
            "they can see)",
        )
        return BaselineChoice("supervised", float(ev.pairs[k][0]), kernel.gamma_, info)
    info.update(
        fallback=None,
        reason="the held-out labels do not prefer a labels-only model",
    )
    return BaselineChoice("none", float("nan"), None, info)


def fit_baseline(problem: Problem, params: Any, choice: BaselineChoice) -> dict:
    """Fitted attributes of the labels-only model ``choice`` (every attribute the
    output part of a fit sets; the caller adds the fit's common ones)."""
    from ._solve import solve

    t = problem.targets
    lab = t.labeled_idx
    C = t.Y.shape[1]
    w = None if problem.sample_weight is None else problem.sample_weight[lab]
    kernel, Xl = _labeled_kernel(params, problem)
    t0 = time.perf_counter()
    if choice.kind == "majority":
        counts = np.bincount(t.y_idx[lab], weights=w, minlength=t.classes.size)
        top = int(np.argmax(counts))
        alpha = np.zeros((lab.size, C))
        b = np.full(C, -1.0)
        if C == 1:
            b[0] = 1.0 if top == 1 else -1.0
        else:
            b[top] = 1.0
        ga_, name, n_iter, reason, obj = 0.0, "majority", 0, "direct", 0.0
    else:
        ga_, _ = paper_regularization(
            params.options.regularization,
            choice.gamma_a,
            0.0,
            n=lab.size,
            weight_sum=float(lab.size if w is None else w.sum()),
            L=None,
            power=1,
        )
        if params.kernel == "precomputed":
            KLL = np.asarray(problem.X, dtype=np.float64)[np.ix_(lab, lab)]
        else:
            KLL = np.asarray(prediction_kernel(kernel, Xl, Xl), dtype=np.float64)
        sol = solve(
            params,
            K=0.5 * (KLL + KLL.T),
            L=None,
            Y=t.Y[lab],
            kind="dense",
            solver=problem.solver,
            gamma_a=ga_,
            gamma_i=0.0,
            sample_weight=w,
            early_stopping=None,
        )
        res = sol.result
        alpha, b, name = res.alpha, np.asarray(res.b, dtype=np.float64), sol.solver
        n_iter, reason = int(np.max(res.n_iter)), res.reason[0]
        obj = float(np.sum(res.objective))
    if params.kernel == "precomputed":
        Kx = np.asarray(problem.X, dtype=np.float64)[:, lab]
    else:
        Kx = np.asarray(prediction_kernel(kernel, problem.X, Xl), dtype=np.float64)
    F = Kx @ alpha + b
    # as an SVC on the labels: no class balancing over the unlabeled points
    F, off, slope, prior = adapt_outputs(
        F,
        t.labeled,
        t.y_idx[lab],
        t.classes.size,
        class_balance=None,
        class_prior=None,
        classes=t.classes,
    )
    pred = (
        t.classes[F.argmax(axis=1)] if C > 1 else t.classes[(F[:, 0] > 0).astype(int)]
    )
    pred[lab] = problem.y[lab]
    if params.kernel == "precomputed":  # predict reads the test-by-train kernel
        full = np.zeros((problem.X.shape[0], C))
        full[lab] = alpha
        alpha = full
    return dict(
        classes_=t.classes,
        dual_coef_=alpha,
        landmarks_=None if params.kernel == "precomputed" else Xl,
        n_components_=lab.size,
        intercept_=b + off,
        class_balance_offset_=off,
        class_prior_=prior,
        proba_slope_=slope,
        transduction_=pred,
        gamma_=kernel.gamma_,
        gamma_a_=ga_,
        gamma_i_=0.0,
        solver_=name,
        kernel_operator_="labeled",
        n_iter_=n_iter,
        termination_condition_=reason,
        objective_=obj,
        n_ls_iter_=np.zeros(C, dtype=int),
        history_={},
        X_fit_=None if params.kernel == "precomputed" else problem.X,
        seconds=time.perf_counter() - t0,
    )
