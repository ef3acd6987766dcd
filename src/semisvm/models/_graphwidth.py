r"""Up to ten labels per class: the graph's width from the cut of the transduction.

With fewer than :data:`~semisvm.models._autoreg.MIN_LABELS_PER_CLASS` labels in
some class the ``"auto"`` rule cannot judge candidates by their labels and keeps
the graph-trusting defaults (:mod:`semisvm.models._autoreg`); with five to ten
its leave-one-out judges the graph against the labels alone, not one graph
against another.  What the graph then gives depends on its width.  The default self-tuning weights
(``graph_weight='local'`` up to 2,000 points) divide the density out of the
graph; with a label or two per class the solution then follows the graph's
*shape* and may cut through a dense neck where two classes come close (two moons
at 200 points: 4.0% error over ten draws; two circles with noise 0.1 at 2,000
points: 32%).  The heat weights of larger two-dimensional sets (where
``graph_weight='auto'`` resolves to them) keep the density, but at the mean
edge length they still bridge a gap that holds a few points (two circles with
noise 0.1 at 20,000 points: 34%).  A narrower graph -- heat weights at half the
mean edge, with a kernel as narrow as the n-point graph -- separates such gaps
(0.5%, 5.4% and 0.9% over ten draws), but loses elsewhere (USPST, 1 label
per class: 15.1% -> 22.2%).

**The rule** (:func:`choose_graph_width`, run by ``LapSVM`` and ``LapRLS`` after
the fit).  Fit the same estimator a second time on the kNN graph with heat
weights at :data:`NARROW_HEAT` times the mean edge length :math:`\bar e`
(:func:`semisvm.graph.heat_width`) -- with ``gamma='knn'`` and the RBF kernel,
at the width rule's :math:`\gamma` times the graph's length ratio :math:`\rho`
(:func:`semisvm.kernels.knn_scale_ratio`; 1 up to 2,000 points, where only the
graph changes; on the Nyström operator at most :math:`1/0.5^2 = 4` times, the
kernel's length halved as the graph's width is: its landmarks, as many as the
width rule's sample, resolve that sample's length scale, not the n-point
graph's -- at 100,000 points two circles with noise 0.1 need the narrowing and
fail at :math:`\rho \approx 27` -- and with k-means landmarks, whose density
:math:`\propto p^{d/(d+2)}` (asymptotic quantization, Zador 1982) covers the
sparse gap the narrow boundary runs through better than random rows: with
random rows the same circles were separated in 2 of 5 draws, with k-means
centres in 5 of 5) -- and measure both transductions' **ratio cut** on one
reference graph :math:`W`, the same kNN graph with heat weights at
:math:`\bar e`, :math:`w_{ij} = \exp(-\|x_i - x_j\|^2 / (2\bar e^2))`:

.. math::
    \mathrm{RCut}(S_1, \dots, S_C) = \sum_c \frac{W(S_c, \bar S_c)}{|S_c|},

:math:`S_c` the training points the transduction puts in class c (infinite
when the transduction leaves a class empty: the degenerate partition).  Keep the
narrow model when its ratio cut is below :data:`CUT_MARGIN` (one half) times
the default's **and** it isolates no more labels than the default
(:func:`isolated_labels`: a labeled point whose class the transduction gives
to fewer than half of its k nearest neighbours), else the default's.  An
isolated label is a spike, the degenerate solution of Laplacian
regularization at low label rates (Nadler, Srebro & Zhou 2009): a narrow graph
weakens the edges that spread a label, and a partition that ignores a label
may cut less without running through lower density (six blobs in 6-d, a lone
label at the edge of a blob that touches one of another class: the cut halves
while the error goes from 1% to 17%).  Where the first narrow width's model
is not kept, the same test runs once more at 0.35 times the mean edge
(:data:`NARROW_HEATS`, screen included): a gap that holds a few points is
bridged by heat weights at half the edge and cut at a third of it (two
circles with noise 0.1, 2,000 points, one label per class, 30 draws: 5.3% ->
0.9% error, the three draws where 0.5 x did not halve the cut now at
0.8-1.1%; no planar cell of 44 worse by 0.5 point, the fit's median time
unchanged: BENCHMARKS.md, session 20).

**Two cheap tests first**, so that the second fit runs only where it can win:

1. *Nothing to gain*: when the edges crossing the default transduction's
   boundary weigh less than a point's mean degree on :math:`W`
   (:math:`\tfrac12\sum_{t_i \ne t_j} w_{ij} < \tfrac1n \sum_{ij} w_{ij}`)
   the boundary already runs through (nearly) empty space, and no partition can
   cut half as much by a margin that means anything (two circles with noise
   0.05: ratio cuts of 1e-13 compared with 0).
2. *The screen*: the narrow graph's Poisson-learning partition
   (:func:`semisvm.graph._poisson.poisson_transduction`; Calder et al. 2020, a
   sparse solve, 0.01 s at 2,000 points and about 2 s at 20,000) stands in for
   the narrow model's transduction; the narrow model is fitted only when that
   partition's ratio cut on :math:`W` is below :data:`SCREEN_MARGIN` (one)
   times the default's -- when the narrow graph holds no partition that cuts
   less than the default model at all, its model is not expected to cut half as
   much.  This is a gate, not a bound: on 1,055 fits of the rule without it
   (BENCHMARKS.md, session 17; 1, 2, 5 and 10 labels per class) the screen's
   ratio was below 0.96 in every one of the 60 fits where the narrow model was
   kept, and one or more in two thirds of the others.

*Why the cut.* On a kNN graph with heat weights at a fixed width, the cut
between two sets, suitably normalized, converges to the integral of the squared
density over the boundary between them (Narayanan, Belkin & Niyogi, "On the
relation between low density separation, spectral clustering and graph cuts",
NIPS 2006); dividing by the class sizes keeps a tiny class from winning by
being tiny.  A lower ratio cut is a boundary through lower density: the cluster
assumption, read off the unlabeled points alone, which is all there is with one
label per class.  Both partitions are judged on the same :math:`W`, so the
narrow graph's own weights do not favour it.  *Why the margin.* A ratio cut
from 1,500 points is noisy and different graphs make different partitions:
keeping the default unless the cut halves is the graph-trusting prior's
protection.  On 28 families x 1-2 labels per class x 10 draws (BENCHMARKS.md,
sessions 16 and 17) the narrow model was kept in 76 of 1,120 fits and lowered
the error in 70 (two moons at 200 points 4.0% -> 0.5%, circles with noise 0.1
at 2,000 points 32.4% -> 5.4%, spirals 33.7% -> 28.2%); the six others are
COIL20(B), whose two classes are ten objects each, where the cluster assumption
fails by construction (45% error either way).  At 5 and 10 labels per class
it was kept in 27 of 1,120 fits and lowered the error in 26 (circles 9.3% ->
3.7%, spirals 15.1% -> 10.0% at 5 per class).  Draws with a ratio between 0.5
and 0.65 went either way.  This is a heuristic with evidence, not a consistency
result: where the classes themselves cross dense regions no partition has a
much lower cut, and the margin keeps the default when the two cuts are close.

*Below three dimensions.* The rule runs where the data's intrinsic dimension
(:func:`semisvm.graph.intrinsic_dimension`, the estimate behind
``laplacian_power="auto"``) is below :data:`MAX_DIMENSION` (3): planar data
and curves.  The cut reads the density through a heat width t that must
shrink (Narayanan, Belkin & Niyogi take :math:`t \to 0`) while a ball of
radius t still holds many points, :math:`n\,t^d \to \infty` at least -- the
points the comparison needs grow exponentially with d, as for any kernel
density estimate; at the sizes where a few labels are given, the narrow graph
is a density estimate in the plane and little more than a sparser kNN graph
above it.  Measured (BENCHMARKS.md, sessions 16-18; 28 families x 1, 2, 5, 10
labels per class x 10 draws, LapSVM and LapRLS): every (cell, estimator) pair
the rule improved by more than half a point has dimension 2.0 or less (two
moons, two circles with noise 0.1, two spirals); of the 20 families of
dimension 2.9-26 none improved by as much, COIL20(B) (3.9) lost 0.5 and 0.7
point (LapSVM, LapRLS) over 30 draws at one label per class (a near-chance cell
whose classes are ten objects each), the six blobs of the isolated-label case
are 6-dimensional, and the rule cost 1.1-3x a fit there (tanh784 at
100,000 points: 1.9x) for no change of model.

*Where it runs.* ``graph_weight='auto'`` (a user's weight is kept), the
estimator's own kNN graph on the dense or the Nyström operator (no
``adjacency``, no precomputed kernel, not the streamed operator; at scale the
default fit's kNN lists are reused, not searched again; in process only: a fit
on a Dask array keeps the default graph's model, which is what the in-process
fit returns with the rule off), a graph term in the
fitted model (:math:`\lambda_I > 0`: with five or more labels per class, where
the ``"auto"`` rule kept the graph), unlabeled points to partition, and at most
:data:`MAX_LABELS_PER_CLASS` (ten) labels in some class, below
:data:`MAX_DIMENSION`.  Cost: one kNN search,
two sparse graphs and the screen's sparse solve always; the second fit where
the screen passes.  ``graph_selection_`` holds the cuts (``cut_screen`` and
``cut_narrow`` are NaN where the step did not run), the default boundary's
weight and the mean degree, the ratio, the narrow graph's width (the last one
tried: ``narrow_heat`` in mean edges, ``narrow_heat_t``) and kernel and the
choice; ``verbose`` prints them.

*On the Nyström operator* the two widths are tried the other way round
(:data:`NYSTROEM_NARROW_HEATS`: 0.35, then 0.5 times the mean edge).  There
the narrow model's function lives in the span of the landmarks' kernel
functions, whose length is at most halved (the kernel narrowed at most
:math:`1/0.5^2` times, above) while the n-point graph's length ratio
:math:`\rho` is far larger (about 27 for two circles at 100,000 points).  A
function of that class crosses a gap over two or three kernel lengths, wider
than the gap, and the graph term prices the whole transition zone, its dense
edges included: the jump between the classes costs more than on the graph
alone, it comes out smaller, and the outputs' decay along each class away from
its one label moves the boundary (two circles with noise 0.1 at 100,000
points, one draw: the boundary's radius 0.69-0.87 against 0.73-0.79 for
Poisson learning on the same graph, which errs 0.78% where the model errs
1.40%).  Narrower heat weights make the zone's edges cheaper relative to the
classes' cores: 0.35 times the mean edge lowers the model's error on those
circles from 1.06% to 0.96% over ten draws (no draw worse by 0.02; 0.25 times
the mean edge: 1.23% on the first draw); BENCHMARKS.md, session 21.  On the
dense operator (up to 20,000 points here) the kernel narrows with the graph
and the wider width comes first.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._dask import is_distributed_array
from .._validation import split_labeled
from ..graph import heat_width, intrinsic_dimension, knn_graph
from ..graph._graph import _drop_self, knn_query
from ..graph._poisson import poisson_transduction
from ._options import resolved_options

#: the rule runs when some class has at most this many labels
MAX_LABELS_PER_CLASS = 10
#: the rule runs when the data's intrinsic dimension is below this
MAX_DIMENSION = 3.0
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


def graph_width_applies(
    est: Any,
    X: Any,
    y: np.ndarray,
    fewest: int,
    adjacency: Any,
    dimension: float | None = None,
) -> bool:
    """Whether :func:`choose_graph_width` runs after this fit (module docstring);
    ``verbose`` says so when only the dimension stops it.  ``dimension``: the
    :func:`data_dimension` of this fit when already measured."""
    if not (
        getattr(est, "_graph_width_rule", True)
        and not is_distributed_array(X)  # in process only (module docstring)
        and np.any(np.asarray(y) == -1)
        and est.graph_weight == "auto"
        and adjacency is None
        and est.kernel != "precomputed"
        and getattr(est, "kernel_operator_", None) in ("dense", "nystroem")
        and float(getattr(est, "gamma_i_", 0.0)) > 0
        and fewest <= MAX_LABELS_PER_CLASS
        and X.shape[0] > est.n_neighbors + 1
    ):
        return False
    dim = data_dimension(est, X) if dimension is None else float(dimension)
    if dim < MAX_DIMENSION:
        return True
    if est.verbose:
        print(
            f"[{type(est).__name__}] graph width: intrinsic dimension {dim:.3g}, "
            f"not below {MAX_DIMENSION:g}: default graph (the rule runs on planar "
            "data and curves only)",
            flush=True,
        )
    return False


def data_dimension(est: Any, X: Any) -> float:
    """The intrinsic dimension the fit measured for ``laplacian_power="auto"``
    (``est.intrinsic_dimension_``), else measured here on the same fixed-size
    sample (:func:`semisvm.graph.intrinsic_dimension`); ``nan`` (the rule does
    not run) when the points have no dimension to measure."""
    dim = float(getattr(est, "intrinsic_dimension_", float("nan")))
    if np.isnan(dim):
        dim = intrinsic_dimension(X, est.n_neighbors)
    return dim


def choose_graph_width(
    est: Any,
    X: Any,
    y: np.ndarray,
    caught: list,
    fit_kwargs: dict | None = None,
    knn_lists: tuple[np.ndarray, np.ndarray] | None = None,
) -> list:
    """Refit ``est`` (fitted on its default graph) on the narrow heat graph and
    keep the model whose transduction has the lower ratio cut by the margin
    (module docstring).  ``est`` ends as the chosen model, with
    ``graph_selection_``; its parameters are unchanged.

    ``caught``: the warnings of the default fit (``warnings.catch_warnings``
    records); returns the chosen model's, for the caller to show.
    ``knn_lists``: the default fit's kNN lists (indices, squared distances;
    itself excluded) when it searched them at scale: reused, not searched again."""
    t0 = time.perf_counter()
    k = int(est.n_neighbors)
    unl = np.asarray(y) == -1
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
    ladder = (
        NYSTROEM_NARROW_HEATS if est.kernel_operator_ == "nystroem" else NARROW_HEATS
    )
    # the reference graph, in coordinates once for every cut below
    W = sp.coo_array(knn_graph(X, k, weight="heat", neighbors=nb))
    info: dict[str, Any] = {
        "criterion": "ratio cut of the transduction on the heat kNN graph "
        "(width: the mean edge length)",
        "mean_edge": width,
        "narrow_heat": ladder[0],
        "narrow_heat_t": ladder[0] * width,
        "narrow_gamma": None,
        "cut_default": ratio_cut(W, est.transduction_, est.classes_),
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
    crossing = est.transduction_[W.row] != est.transduction_[W.col]
    info["boundary_default"] = float(W.data[crossing].sum()) / 2.0
    info["mean_degree"] = float(W.data.sum()) / X.shape[0]
    alt, caught_alt = None, []  # type: tuple[Any, list]
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
            alt, caught_alt = _screen_and_fit(
                est, X, y, W, nb, info, fit_kwargs, knn_lists
            )
            if info["chosen"] == "narrow":
                break
    narrow = info["chosen"] == "narrow"
    spent = time.perf_counter() - t0
    if narrow:
        default_total = float(sum(est.fit_times_.values()))
        keep = set(est._get_param_names())
        for name, value in vars(alt).items():
            if name not in keep and name != "_graph_width_rule":
                setattr(est, name, value)
        est.fit_times_ = dict(est.fit_times_)
        est.fit_times_["graph_width"] = (
            default_total + spent - float(sum(alt.fit_times_.values()))
        )
    else:
        est.fit_times_["graph_width"] = spent
    est.graph_selection_ = info
    if est.verbose:
        _report(type(est).__name__, info)
    return list(caught_alt) if narrow else list(caught)


def _screen_and_fit(
    est: Any,
    X: Any,
    y: np.ndarray,
    W: Any,
    nb: tuple[np.ndarray, np.ndarray],
    info: dict,
    fit_kwargs: dict | None,
    knn_lists: tuple[np.ndarray, np.ndarray] | None,
) -> tuple[Any, list]:
    """One narrow width (``info["narrow_heat_t"]``): the screen, then, where it
    passes, the narrow fit and the isolated-label check; fills ``info``.
    Returns the narrow fit (None without one) and its warnings."""
    k = int(est.n_neighbors)
    codes = np.arange(est.classes_.size)
    screen = poisson_transduction(
        knn_graph(X, k, weight="heat", t=info["narrow_heat_t"], neighbors=nb),
        split_labeled(y)[2],
        codes,
    )
    info["cut_screen"] = ratio_cut(W, screen, codes)
    if not info["cut_screen"] < SCREEN_MARGIN * info["cut_default"]:
        return None, []
    alt, caught_alt = _fit_narrow(est, X, y, W, info, fit_kwargs, knn_lists)
    if info["chosen"] == "narrow":
        near = _drop_self(nb[0] ** 2, nb[1], k)[1]
        info["isolated_default"] = isolated_labels(est.transduction_, y, near)
        info["isolated_narrow"] = isolated_labels(alt.transduction_, y, near)
        if info["isolated_narrow"] > info["isolated_default"]:
            info["chosen"] = "default"
    return alt, caught_alt


def _fit_narrow(
    est: Any,
    X: Any,
    y: np.ndarray,
    W: Any,
    info: dict,
    fit_kwargs: dict | None,
    knn_lists: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[Any, list]:
    """Fit ``est``'s estimator on the narrow graph (and kernel), and fill
    ``info``'s cut of its transduction on ``W``, the ratio and the choice.
    Returns the fitted estimator and its warnings."""
    alt = type(est)(**est.get_params(deep=False))
    opts = resolved_options(est).replace(heat_t=info["narrow_heat_t"])
    if est.kernel_operator_ == "nystroem":
        # k-means landmarks: their density ~ p^(d/(d+2)) covers the sparse gap
        # the narrow model's boundary runs through better than random rows
        opts = opts.replace(landmarks="kmeans")
    alt.set_params(graph_weight="heat", options=opts)
    rho = float(getattr(est, "_graph_scale", 1.0))
    if est.kernel == "rbf" and est.gamma == "knn" and rho > 1.0:
        # the kernel as narrow as the n-point graph: the width rule's gamma
        # (taken in a fixed sample) times the graph's length ratio rho (1 up
        # to 2,000 points: the width rule's kernel, its extension check
        # included); on the Nystroem operator at most the graph's narrowing
        # (length x NARROW_HEAT): its landmarks resolve the sample's scale
        if est.kernel_operator_ == "nystroem":
            rho = min(rho, NARROW_HEAT**-2)
        info["narrow_gamma"] = float(est.gamma_) * rho
        alt.set_params(gamma=info["narrow_gamma"])
    alt._graph_width_rule = False
    if knn_lists is not None:
        alt._given_knn = knn_lists  # the same X: the same search
    with warnings.catch_warnings(record=True) as caught_alt:
        warnings.simplefilter("always")
        try:
            alt.fit(X, y, **(fit_kwargs or {}))
        except (ValueError, ArithmeticError, np.linalg.LinAlgError) as exc:
            # the default's model stands: the narrow graph is only a candidate
            info["narrow_fit_failed"] = f"{type(exc).__name__}: {exc}"
    cut_alt = (
        float("inf")
        if info["narrow_fit_failed"]
        else ratio_cut(W, alt.transduction_, est.classes_)
    )
    info["cut_narrow"] = cut_alt
    with np.errstate(divide="ignore", invalid="ignore"):
        info["ratio"] = float(np.float64(cut_alt) / np.float64(info["cut_default"]))
    if cut_alt < CUT_MARGIN * info["cut_default"]:
        info["chosen"] = "narrow"
    return alt, list(caught_alt)


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
