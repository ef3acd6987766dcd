r"""Up to ten labels per class: the graph's width from the cut of the transduction.

With one or two labels per class the solution follows the graph's *shape*: the
default self-tuning weights divide the density out and may cut through a dense
neck between two classes, and heat weights at the mean edge length still bridge
a gap that holds a few points.  A narrower graph separates such gaps but loses
elsewhere, and so few labels cannot judge one graph against another
(:mod:`semisvm.models._autoreg`): the unlabeled points decide.

**The rule** (:func:`choose_graph_width`, after the fit).  Fit again with heat
weights at :data:`NARROW_HEATS` times the mean edge length :math:`\bar e` (the
``gamma='knn'`` kernel narrowed with them) and keep that model when its
transduction's **ratio cut** :math:`\sum_c W(S_c, \bar S_c)/|S_c|`
(:func:`ratio_cut`) on the heat kNN graph :math:`W` at :math:`\bar e` is below
:data:`CUT_MARGIN` times the default's *and* it isolates no more labels
(:func:`isolated_labels`: a spike, the degenerate solution of Laplacian
regularization, Nadler, Srebro & Zhou 2009).  The refit runs only when the
default boundary weighs more than a point's mean degree and a screen passes:
the narrow graph's Poisson-learning partition (Calder et al. 2020) cuts below
:data:`SCREEN_MARGIN` times the default's (a gate, not a bound).

*Why the cut.*  With heat weights the normalized cut between two sets converges
to the integral of the squared density over their boundary (Narayanan, Belkin &
Niyogi, NIPS 2006): a lower cut is a boundary through lower density, the
cluster assumption read off the unlabeled points, and the margin keeps the
default unless the cut halves, because cuts are noisy.  A heuristic with
evidence (docs/rules.rst), not a consistency result: it runs below intrinsic
dimension :data:`MAX_DIMENSION`, where a shrinking heat width still holds many
points (:math:`n\,t^d \to \infty`), on the estimator's own graph and in process
only (a Dask fit keeps the default graph's model: :func:`graph_width_applies`).

*On the Nyström operator* the kernel narrows at most :math:`1/0.5^2` times while
the n-point graph narrows further, so the narrower width comes first
(:data:`NYSTROEM_NARROW_HEATS`), with k-means landmarks dense enough in the gap.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._dask import is_distributed_array
from .._validation import labeled_mask, split_labeled
from ..graph import heat_width, knn_graph
from ..graph._graph import _drop_self, knn_query
from ..graph._poisson import poisson_transduction
from ._problem import MAX_DIMENSION, data_dimension

#: the rule runs when some class has at most this many labels
MAX_LABELS_PER_CLASS = 10
#: the narrow graph's heat width, in mean edge lengths of the kNN graph
NARROW_HEAT = 0.5
#: the narrow widths tried in turn (in mean edge lengths) until one model's cut
#: halves the default's
NARROW_HEATS = (NARROW_HEAT, 0.35)
#: the same widths on the Nystroem operator, the narrower first: its kernel is
#: narrowed at most 1 / NARROW_HEAT^2 times while the n-point graph narrows
#: further (module docstring, "On the Nystroem operator")
NYSTROEM_NARROW_HEATS = (0.35, NARROW_HEAT)
#: keep the narrow graph's model when its ratio cut is below this fraction of
#: the default's
CUT_MARGIN = 0.5
#: fit the narrow graph's model only when the Poisson partition of the narrow
#: graph cuts below this fraction of the default model's transduction
SCREEN_MARGIN = 1.0


def ratio_cut(W: Any, labels: np.ndarray, classes: Any = None) -> float:
    r""":math:`\sum_c W(S_c, \bar S_c) / |S_c|` of the partition ``labels`` of the
    graph ``W`` (symmetric, non-negative, shape (n, n)).

    Each cut is summed over the edges that leave :math:`S_c` (non-negative
    terms: no cancellation).  ``classes``: the classes the partition must use
    (default: those in ``labels``); the ratio cut is ``inf`` when one of them
    is empty -- a transduction that gives a labeled class no point is the
    degenerate partition, not the best one.

    Parameters
    ----------
    W : sparse matrix or ndarray of shape (n, n)
    labels : ndarray of shape (n,)
    classes : array-like, optional
    """
    W = sp.coo_array(W)
    labels = np.asarray(labels)
    classes = np.unique(labels) if classes is None else np.asarray(classes)
    total = 0.0
    for c in classes:
        inside = labels == c
        size = int(inside.sum())
        if size == 0:
            return float("inf")
        leaving = inside[W.row] & ~inside[W.col]
        total += float(W.data[leaving].sum()) / size
    return total


def isolated_labels(
    transduction: np.ndarray, y: np.ndarray, neighbors: np.ndarray
) -> int:
    """Labeled points whose class the transduction gives to fewer than half of
    their ``neighbors`` (row i: the indices of point i's nearest neighbours,
    itself excluded): labels the model confines to a spike instead of spreading.

    Parameters
    ----------
    transduction : ndarray of shape (n,)
    y : ndarray of shape (n,)
        The training labels, -1 for the unlabeled points.
    neighbors : ndarray of int of shape (n, k)
    """
    labeled = split_labeled(y)[0]
    rows = np.flatnonzero(labeled)
    agree = transduction[neighbors[rows]] == np.asarray(y)[rows][:, None]
    return int(np.sum(agree.mean(axis=1) < 0.5))


def graph_width_applies(problem: Any, model: Any, params: Any) -> bool:
    """Whether :func:`choose_graph_width` runs after this fit (module docstring);
    ``verbose`` says so when only the dimension stops it."""
    X, y = problem.X, problem.y
    if not (
        params.options.graph_width == "auto"
        and not is_distributed_array(X)  # in process only (module docstring)
        and not labeled_mask(y).all()  # "-1" and None too, not only -1
        and params.graph_weight == "auto"
        and problem.adjacency is None
        and params.kernel != "precomputed"
        and problem.kind in ("dense", "nystroem", "fitc", "blocks")
        and float(model["gamma_i_"]) > 0
        and problem.targets.fewest_labels <= MAX_LABELS_PER_CLASS
        and X.shape[0] > params.n_neighbors + 1
    ):
        return False
    dim = model.dimension
    if dim is None:
        dim = data_dimension(problem.ops.intrinsic_dimension, X, params.n_neighbors)
    if dim < MAX_DIMENSION:
        return True
    if params.verbose:
        print(
            f"[{params.name}] graph width: intrinsic dimension {dim:.3g}, "
            f"not below {MAX_DIMENSION:g}: default graph (the rule runs on planar "
            "data and curves only)",
            flush=True,
        )
    return False


def choose_graph_width(problem: Any, model: Any, params: Any) -> Any:
    """The model of the default graph, or of a narrow heat graph when its
    transduction has the lower ratio cut by the margin (module docstring).

    Parameters
    ----------
    problem : Problem
        The default fit's problem.
    model : FittedModel
        The default fit's model.
    params : FitParams

    Returns
    -------
    FittedModel
        The chosen model, with ``graph_selection_`` (None where the rule does
        not apply) and the time spent in ``fit_times_["graph_width"]``.
    """
    if not graph_width_applies(problem, model, params):
        return model
    t0 = time.perf_counter()
    X, y = problem.X, problem.y
    k = int(params.n_neighbors)
    unl = ~labeled_mask(y)
    knn_lists = problem.ops.knn
    if knn_lists is None:
        nb = knn_query(X, k)
    else:  # the search's format: each point first, at distance 0
        ind, d2 = knn_lists
        rows = np.arange(ind.shape[0])[:, None]
        nb = (
            np.hstack([np.zeros_like(rows, dtype=np.float64), np.sqrt(d2)]),
            np.hstack([rows, ind]),
        )
    width = heat_width(X, k, neighbors=nb)
    landmarked = problem.kind in ("nystroem", "fitc", "blocks")
    ladder = NYSTROEM_NARROW_HEATS if landmarked else NARROW_HEATS
    # the reference graph, in coordinates once for every cut below
    W = sp.coo_array(knn_graph(X, k, weight="heat", neighbors=nb))
    default_labels = model["transduction_"]
    classes = model["classes_"]
    info: dict[str, Any] = {
        "criterion": "ratio cut of the transduction on the heat kNN graph "
        "(width: the mean edge length)",
        "mean_edge": width,
        "narrow_heat": ladder[0],
        "narrow_heat_t": ladder[0] * width,
        "narrow_gamma": None,
        "cut_default": ratio_cut(W, default_labels, classes),
        "cut_screen": float("nan"),
        "screen_margin": SCREEN_MARGIN,
        "cut_narrow": float("nan"),
        "ratio": float("nan"),
        "margin": CUT_MARGIN,
        "chosen": "default",
        "unlabeled": int(unl.sum()),
        "narrow_fit_failed": None,
        "isolated_default": None,
        "isolated_narrow": None,
    }
    crossing = default_labels[W.row] != default_labels[W.col]
    info["boundary_default"] = float(W.data[crossing].sum()) / 2.0
    info["mean_degree"] = float(W.data.sum()) / X.shape[0]
    alt = None
    if info["boundary_default"] >= info["mean_degree"]:
        for factor in ladder:
            info.update(
                narrow_heat=factor,
                narrow_heat_t=factor * width,
                cut_screen=float("nan"),
                cut_narrow=float("nan"),
                ratio=float("nan"),
                chosen="default",
                narrow_fit_failed=None,
                isolated_default=None,
                isolated_narrow=None,
            )
            alt = _screen_and_fit(problem, model, params, W, nb, info)
            if info["chosen"] == "narrow":
                break
    spent = time.perf_counter() - t0
    if params.verbose:
        _report(params.name, info)
    chosen = model
    if info["chosen"] == "narrow" and alt is not None:
        chosen = alt
        times = dict(alt.attributes["fit_times_"])
        times["graph_width"] = (
            float(sum(model.attributes["fit_times_"].values()))
            + spent
            - float(sum(times.values()))
        )
    else:
        times = dict(model.attributes["fit_times_"], graph_width=spent)
    attrs = dict(chosen.attributes, graph_selection_=info, fit_times_=times)
    return replace(chosen, attributes=attrs)


def _screen_and_fit(
    problem: Any,
    model: Any,
    params: Any,
    W: Any,
    nb: tuple[np.ndarray, np.ndarray],
    info: dict,
) -> Any:
    """One narrow width (``info["narrow_heat_t"]``): the screen, then, where it
    passes, the narrow fit and the isolated-label check; fills ``info``.
    Returns the narrow fit's model (None without one)."""
    X, y = problem.X, problem.y
    k = int(params.n_neighbors)
    codes = np.arange(model["classes_"].size)
    screen = poisson_transduction(
        knn_graph(X, k, weight="heat", t=info["narrow_heat_t"], neighbors=nb),
        split_labeled(y)[2],
        codes,
    )
    info["cut_screen"] = ratio_cut(W, screen, codes)
    if not info["cut_screen"] < SCREEN_MARGIN * info["cut_default"]:
        return None
    alt = _fit_narrow(problem, model, params, W, info)
    if info["chosen"] == "narrow":
        near = _drop_self(nb[0] ** 2, nb[1], k)[1]
        info["isolated_default"] = isolated_labels(model["transduction_"], y, near)
        info["isolated_narrow"] = isolated_labels(alt["transduction_"], y, near)
        if info["isolated_narrow"] > info["isolated_default"]:
            info["chosen"] = "default"
    return alt


def _fit_narrow(problem: Any, model: Any, params: Any, W: Any, info: dict) -> Any:
    """Fit the same estimator's problem on the narrow graph (and kernel), and
    fill ``info``'s cut of its transduction on ``W``, the ratio and the choice.
    Returns the narrow model (None when its fit failed)."""
    from ._model import choose_regularization, fit_model
    from ._problem import prepare_problem

    opts = params.options.replace(heat_t=info["narrow_heat_t"], graph_width=None)
    if problem.kind in ("nystroem", "fitc", "blocks"):
        # k-means landmarks: their density ~ p^(d/(d+2)) covers the sparse gap
        # the narrow model's boundary runs through better than random rows
        opts = opts.replace(landmarks="kmeans")
    changes: dict[str, Any] = {"graph_weight": "heat", "options": opts}
    rho = float(problem.ops.graph_scale)
    if params.kernel == "rbf" and params.gamma == "knn" and rho > 1.0:
        # the kernel as narrow as the n-point graph: the width rule's gamma
        # (taken in a fixed sample) times the graph's length ratio rho; on the
        # Nystroem operator at most the graph's narrowing (length x NARROW_HEAT):
        # its landmarks resolve the sample's scale
        if problem.kind in ("nystroem", "fitc", "blocks"):
            rho = min(rho, NARROW_HEAT**-2)
        info["narrow_gamma"] = float(model["gamma_"]) * rho
        changes["gamma"] = info["narrow_gamma"]
    narrow = params.replace(**changes)
    alt = None
    try:
        p2 = prepare_problem(
            problem.X,
            problem.y,
            narrow,
            X_val=problem.X_val,
            y_val=problem.y_val,
            knn=problem.ops.knn,  # the same X: the same search
        )
        alt = fit_model(p2, narrow, choose_regularization(p2, narrow))
    except (ValueError, ArithmeticError, np.linalg.LinAlgError) as exc:
        # the default's model stands: the narrow graph is only a candidate
        info["narrow_fit_failed"] = f"{type(exc).__name__}: {exc}"
    cut_alt = (
        float("inf")
        if alt is None
        else ratio_cut(W, alt["transduction_"], model["classes_"])
    )
    info["cut_narrow"] = cut_alt
    with np.errstate(divide="ignore", invalid="ignore"):
        info["ratio"] = float(np.float64(cut_alt) / np.float64(info["cut_default"]))
    if cut_alt < CUT_MARGIN * info["cut_default"]:
        info["chosen"] = "narrow"
    return alt


def _report(name: str, info: dict) -> None:
    """The ``verbose`` line of the graph-width rule."""
    head = f"[{name}] graph width: "
    if np.isnan(info["cut_screen"]):
        print(
            f"{head}edges of weight {info['boundary_default']:.4g} cross the default "
            f"transduction's boundary, less than a point's mean degree "
            f"{info['mean_degree']:.4g}: default graph (no narrow fit)",
            flush=True,
        )
        return
    if np.isnan(info["cut_narrow"]):
        print(
            f"{head}the Poisson partition of the narrow graph (heat weights at "
            f"{info['narrow_heat']:g} x the mean edge) cuts {info['cut_screen']:.4g}, not "
            f"below {info['screen_margin']:g} x the default's {info['cut_default']:.4g}"
            ": default graph (no narrow fit)",
            flush=True,
        )
        return
    spikes = ""
    if info["isolated_narrow"] is not None:
        spikes = (
            f" (labels isolated: {info['isolated_narrow']} by the narrow model, "
            f"{info['isolated_default']} by the default)"
        )
    print(
        f"{head}ratio cut {info['cut_narrow']:.4g} with heat weights at "
        f"{info['narrow_heat']:g} x the mean edge vs {info['cut_default']:.4g} for the "
        f"default graph (ratio {info['ratio']:.3f}; the narrow graph is kept below "
        f"{CUT_MARGIN:g}): {info['chosen']} graph{spikes}",
        flush=True,
    )
