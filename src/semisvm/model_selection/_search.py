r"""LapSVMCV and LapRLSCV: model selection by cross-validation on the labeled points."""

from __future__ import annotations

import abc
import itertools
import numbers
import sys
import time
import warnings
from typing import Any

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.model_selection import StratifiedKFold
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .. import _defaults
from .._validation import (
    Interval,
    Options,
    check_finite,
    check_numeric_frame,
    decode_labels,
    resolve_seed,
    validate_params,
)
from ..kernels._operators import on_one_blas_thread
from ..models import LapRLS, LapSVM
from ..models._autoreg import MIN_LABELS_PER_CLASS
from ..models._components import UNREACHABLE_PATTERN
from ..models._options import check_options, resolved_options
from ..models._params import fit_params
from ..models._problem import (
    choose_operator,
    encode_targets,
    kernel_columns,
    one_vs_rest,
    prepare_operators,
    resolve_laplacian_power,
    sample_weights,
)
from ..models._solve import resolve_solver
from ..solvers._loo import pointwise_loss
from ._scorer import labeled_mask

__all__ = ["LapSVMCV", "LapRLSCV"]


def _accuracy(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(np.mean(y_true == y_pred))


def _balanced_accuracy(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(
        np.mean([np.mean(y_pred[y_true == c] == c) for c in np.unique(y_true)])
    )


_SCORERS = {"accuracy": _accuracy, "balanced_accuracy": _balanced_accuracy}

#: parameters of the base estimator that the search sets
_SEARCHED = (
    "gamma_a",
    "gamma_i",
    "gamma",
    "n_neighbors",
    "kernel",
    "normalize_laplacian",
    "laplacian_power",
)

#: graph-term pairs (gamma_a, gamma_i) of each round-2 graph: the best of round 1
ROUND2_PAIRS = 5
#: unlabeled points on which round 1 balances each held-out fit (round 2: the
#: "auto" rule's MAX_UNLABELED); the balance and the class-mass shifts of every
#: held-out fit cost O(u l C) per candidate
ROUND1_UNLABELED = 250

#: landmarks of round 1's factor: its Cholesky factorizations (one per
#: configuration and ratio gamma_i / gamma_a, 384 for the default grids) cost r^3
#: each, the graph Grams n k r; round 2 re-scores on the "auto" rule's own factor,
#: so round 1 only ranks and a coarser factor suffices (docs/rules.rst)
ROUND1_FEATURES = 300

#: the graph parameters of a LOO configuration
_GRAPH_CONF = ("n_neighbors", "normalize_laplacian", "laplacian_power")

#: sigma multipliers of the default width grid (gamma = 1 / (2 sigma^2))
_SIGMA_FACTORS = (0.5, 1.0, 2.0)


def _grid(values: Any, name: str) -> list:
    if values is None:
        return []
    if isinstance(values, str | numbers.Number):
        return [values]
    vals = list(values)
    if not vals:
        raise ValueError(f"{name} must be a non-empty sequence of values.")
    return vals


class CVSplitter(abc.ABC):
    """A scikit-learn splitter: any object with ``split`` and ``get_n_splits``."""

    @classmethod
    def __subclasshook__(cls, C: type) -> Any:
        if callable(getattr(C, "split", None)) and callable(
            getattr(C, "get_n_splits", None)
        ):
            return True
        return NotImplemented

    @abc.abstractmethod
    def split(self, X: Any, y: Any = None, groups: Any = None) -> Any:
        """Yield ``(train, test)`` index arrays."""

    @abc.abstractmethod
    def get_n_splits(self, X: Any = None, y: Any = None, groups: Any = None) -> int:
        """Number of splits."""


class _Progress:
    """tqdm when installed, else a line per step on stderr (``verbose > 0`` only)."""

    def __init__(self, total: int, desc: str, verbose: int) -> None:
        self.bar = None
        self.verbose = verbose
        self.desc = desc
        self.total = total
        self.done = 0
        if verbose:
            try:
                from tqdm.auto import tqdm

                self.bar = tqdm(total=total, desc=desc, file=sys.stderr, leave=False)
            except ImportError:
                pass

    def step(self, msg: str) -> None:
        self.done += 1
        if not self.verbose:
            return
        if self.bar is not None:
            self.bar.set_postfix_str(msg)
            self.bar.update(1)
        else:
            print(f"[{self.desc}] {self.done}/{self.total} {msg}", file=sys.stderr)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class _LOOScorer:
    """LOO scoring of kernel and graph configurations (``cv='loo'``).

    ``rows`` collects one ``(configuration, LOOEvidence)`` per scored kernel
    (supervised candidates) or graph; ``t_factor`` the time spent on the factors
    and the Laplacians; ``scales`` the graph term's length normalization per
    graph size.
    """

    def __init__(
        self,
        template: Any,
        X: Any,
        y: np.ndarray,
        *,
        sup_pairs: list[tuple[float, float]],
        graph_pairs: list[tuple[float, float]],
        default_pair: tuple[float, float],
        progress: _Progress,
        max_neighbors: int | None = None,
    ) -> None:
        self.template, self.X, self.y = template, X, y
        self.max_neighbors = max_neighbors
        #: the kNN search of X for max_neighbors (graphs searched in X)
        self._knn: tuple | None = None
        self.sup_pairs, self.graph_pairs = sup_pairs, graph_pairs
        self.default_pair = default_pair
        self.progress = progress
        self.loss = fit_params(template).objective
        self.rows: list[tuple[dict, Any]] = []
        self.t_factor = 0.0
        self.scales: dict = {}
        self._slot: tuple | None = None
        self._adjacency: dict = {}
        self._lphi: tuple | None = None
        self.n_kernels = 0
        self.n_kernel_hits = 0
        #: the operator the estimator resolves for X (:meth:`_dense`)
        self._kind: str | None = None
        #: the scalable kNN lists per n_neighbors (:meth:`graph`, non-dense)
        self._scalable_knn: dict = {}

    def kernel(self, kc: dict) -> tuple[Any, Any]:
        """The parameters of kernel configuration ``kc`` and its operators.

        One slot: the last kernel built is kept (round 1 scores the defaults'
        kernel last and round 2 first, so it is built once; the refit reuses
        the last one when it is chosen).
        """
        key = tuple(sorted(kc.items()))
        if self._slot is not None and self._slot[0] == key:
            self.n_kernel_hits += 1
            return self._slot[1], self._slot[2]
        self._slot = None  # release the previous K before building the next
        est = fit_params(clone(self.template).set_params(**kc))
        # where the estimator would not hold a dense K (it fits on the
        # Nystroem or streamed operator), neither does the search: the
        # streamed operator stores nothing, the LOO features read kernel
        # columns from X and the graphs come from the estimator's own kNN
        # search (:meth:`graph`)
        kind = "dense" if self._dense(est) else "streamed"
        ops = prepare_operators(est, self.X, need_graph=False, kind=kind)
        self._slot = (key, est, ops)
        self.n_kernels += 1
        return est, ops

    def _dense(self, params: Any) -> bool:
        """Whether a fit with ``params`` would use the dense operator (the
        estimators' own rule, :func:`~semisvm.models._problem.choose_operator`:
        memory first)."""
        if self._kind is None:
            probe = params.replace(verbose=0)
            n_classes = np.unique(self.y[labeled_mask(self.y)]).size
            self._kind, _ = choose_operator(
                probe,
                self.X,
                resolve_solver(probe, self.X.shape[0]),
                1 if n_classes <= 2 else n_classes,
            )
        return self._kind == "dense"

    def kernel_parts(self, kc: dict, r: int | None) -> tuple:
        """The parameters of kernel configuration ``kc``, its operators, targets,
        weights, kernel columns and LOO features (``r`` landmarks)."""
        from ..models._autoreg import features_for

        X, y = self.X, self.y
        est, ops = self.kernel(kc)
        t = encode_targets(y)
        sw = sample_weights(y, t.labeled, t.classes, est.class_weight)
        cols = kernel_columns(est, X, ops.K, ops.gamma_)
        Phi = features_for(est, cols, X.shape[0], np.flatnonzero(t.labeled), r)
        return est, ops, t.labeled, t.Y, sw, cols, Phi

    def graph(self, est: Any, ops: Any, gc: dict) -> tuple[Any, Any, float, str]:
        """The parameters of graph configuration ``gc`` on the kernel ``ops``,
        its Laplacian, length normalization and resolved weights.

        The kNN adjacency depends on the kernel and ``n_neighbors`` only: it is
        built once and shared by the normalized/plain Laplacians and their
        powers, in both rounds (and the refit).
        """
        from ..graph import graph_laplacian
        from ..models._problem import (
            build_adjacency,
            graph_scale,
            resolve_graph_weight,
        )

        X, scales, K = self.X, self.scales, ops.K
        e_g = est.replace(**gc)
        k_g = gc["n_neighbors"]
        dense = isinstance(K, np.ndarray)
        if not dense and k_g not in self._scalable_knn:
            from ..models._scale import scalable_knn

            # the estimator's own search at this size (blocked exact or
            # approximate): one per n_neighbors, shared by the widths
            self._scalable_knn[k_g] = scalable_knn(e_g, X)
        if k_g not in scales:
            scales[k_g] = graph_scale(
                X,
                e_g.kernel,
                k_g,
                knn_dist2=None if dense else self._scalable_knn[k_g][1],
            )
        # scored with the same length normalization as the refit uses
        weight = resolve_graph_weight(e_g.graph_weight, scales[k_g])
        key = (repr(est.kernel), repr(ops.gamma_), k_g)
        if key not in self._adjacency and not dense:
            from ..models._scale import scalable_adjacency

            self._adjacency[key] = scalable_adjacency(
                e_g, X, knn=self._scalable_knn[k_g], weight=weight
            )
        if key not in self._adjacency:
            self._adjacency[key] = build_adjacency(
                X,
                K,
                kernel=e_g.kernel,
                gamma_=ops.gamma_,
                n_neighbors=k_g,
                graph_weight=weight,
                heat_t=resolved_options(e_g).heat_t,
                neighbors=self._neighbors(e_g.kernel, ops.gamma_, k_g),
            )
        L = graph_laplacian(
            self._adjacency[key],
            normalized=gc["normalize_laplacian"],
            power=gc["laplacian_power"],
            form="operator",
        )
        return e_g, L, scales[k_g], weight

    def _neighbors(self, kernel: Any, gamma_: Any, k: int) -> tuple | None:
        """The kNN search of X for ``k`` neighbours when the graph is searched
        in X (not read off an RBF or precomputed K): read off one search for
        the grid's largest ``n_neighbors`` when no row has a (near-)tie at its
        k-th neighbour (:func:`~semisvm.graph._graph.nested_neighbors`: the
        same neighbours, hence the same graph), else None (searched again).
        The graphs k/2, k, 2k of the linear kernel share one search."""
        from ..graph._graph import knn_query, nested_neighbors

        in_x = kernel not in ("rbf", "precomputed") or (
            kernel == "rbf" and gamma_ is None
        )
        if not in_x or self.max_neighbors is None or k > self.max_neighbors:
            return None
        if self._knn is None:
            self._knn = knn_query(self.X, self.max_neighbors)
        return nested_neighbors(self.X, self._knn, k)

    def gram(self, Phi: np.ndarray, L: Any, gc: dict) -> np.ndarray | None:
        r""":math:`B = \Phi^T L^p \Phi` of graph configuration ``gc`` on the
        features ``Phi``, or None (then the engine computes it).

        The products :math:`L^j\Phi` of one Laplacian (``n_neighbors``,
        normalization) are kept for its powers (L is symmetric):
        :math:`B = (L^h\Phi)^T(L^h\Phi)` for p = 2h and
        :math:`(L^h\Phi)^T(L^{h+1}\Phi)` for p = 2h + 1, so the grid's powers
        p0 and p0 + 1 cost p0 + 1 sparse products in all, not 2 p0 + 1 (the
        search at 100,000 x 784 points spent 55% of its time in these products).
        """
        from .._memory import available_memory
        from ..models._autoreg import MAX_RATIOS
        from ..solvers._loo import gram_product

        base, p = getattr(L, "base", None), getattr(L, "power", None)
        ratios = {f"{i / a:.12g}" for a, i in self.graph_pairs + [self.default_pair]}
        if base is None or not isinstance(p, int) or p < 1 or len(ratios) > MAX_RATIOS:
            return None
        key = (gc["n_neighbors"], gc["normalize_laplacian"])
        if self._lphi is None or self._lphi[0] is not Phi or self._lphi[1] != key:
            self._lphi = None
            self._lphi = (Phi, key, [Phi])
        prods = self._lphi[2]  # prods[j] = L^j Phi
        h = p // 2
        more = h + p % 2 + 1 - len(prods)
        if more > 0 and (len(prods) - 1 + more) * Phi.nbytes > available_memory() / 4:
            return None  # the engine's row blocks instead (graph_gram)
        while len(prods) <= h + p % 2:
            prods.append(np.asarray(base @ prods[-1], dtype=np.float64))
        if p == 1:
            return gram_product(Phi, prods[1])
        if p % 2 == 0:
            return prods[h].T @ prods[h]
        G = prods[h].T @ prods[h + 1]
        return 0.5 * (G + G.T)

    def refit_cache(self, est: Any) -> Any:
        """An :class:`~semisvm.models._base.OperatorCache` holding the K and L
        that ``est.fit(X, y)`` would build, when the kept kernel is ``est``'s
        and its operators are the dense exact ones the search used; else None.
        """
        from ..models._base import OperatorCache

        opts = resolved_options(est)
        if (
            self._slot is None
            or not isinstance(self._slot[2].K, np.ndarray)
            or opts.graph_method == "approx"
            # 'auto' projects only for the approximate search: a dense K's
            # graph is read off K, as the search read it
            or isinstance(opts.graph_pca, numbers.Integral)
        ):
            return None
        key, e_k, ops = self._slot
        K = ops.K
        params = est.get_params()
        if {k: params[k] for k, _ in key} != dict(key):
            return None
        # a width rule may read n_neighbors (K then depends on it)
        if not (
            est.kernel == "linear"
            or isinstance(est.gamma, numbers.Real)
            or e_k.n_neighbors == est.n_neighbors
        ):
            return None
        gc = {p: params[p] for p in _GRAPH_CONF}
        dim = float("nan")
        if isinstance(gc["laplacian_power"], str):
            gc["laplacian_power"], dim = resolve_laplacian_power(
                est, self.X, fewest_labels=encode_targets(self.y).fewest_labels
            )
        _, L, scale, weight = self.graph(e_k, ops, gc)
        # with the labeled points, the exact solvers (LapRLS 'direct', LapSVM
        # 'newton') solve through one LU factorization of I + rLK and the
        # Woodbury identity (models._factorized: the same minimiser) instead of
        # one dense n x n system per Newton step and class
        cache = OperatorCache(labeled=np.flatnonzero(labeled_mask(self.y)))
        # what prepare_operators computes for est (dense, exact kNN graph); the
        # estimator consults the cache only when it resolves to a dense K
        value = (
            K,
            L,
            ops.gamma_,
            scale,
            weight,
            int(gc["laplacian_power"]),
            dim,
        )
        cache.put(est, self.X, True, value)
        return cache

    def score_kernel(
        self,
        kc: dict,
        graphs: list[dict],
        r: int | None,
        with_sup: bool,
        with_default_pair: bool,
        pairs_of: list[list[tuple[float, float]]] | None = None,
    ) -> None:
        """Score kernel configuration ``kc``: its supervised candidates
        (``with_sup``) and each of its ``graphs``; ``r`` landmarks (round 1) or
        ``None`` (round 2, the "auto" rule's own scoring).  ``pairs_of[j]``:
        the (gamma_a, gamma_i) pairs of ``graphs[j]`` (default: the whole grid,
        with the defaults' pair first when ``with_default_pair``)."""
        from ..models._autoreg import GRID_A, MAX_UNLABELED, loo_evidence

        # round 1 (r given) balances on fewer unlabeled points
        u_max = ROUND1_UNLABELED if r is not None else MAX_UNLABELED
        # round 1 screens LapSVM candidates with the LapRLS closed form (the
        # same criterion on the squared loss's LOO outputs); round 2 decides
        # on the estimator's own
        loss_r = "squared" if r is not None else self.loss
        t0 = time.perf_counter()
        est, ops, labeled, Y, sw, cols, Phi = self.kernel_parts(kc, r)
        self.t_factor += time.perf_counter() - t0
        # round 2 also scores the "auto" rule's supervised candidates
        sup = (
            self.sup_pairs
            if r is not None
            else list(dict.fromkeys(self.sup_pairs + [(a, 0.0) for a in GRID_A]))
        )
        if with_sup and sup:
            ev = loo_evidence(
                est,
                columns=cols,
                L=None,
                Y=Y,
                labeled=labeled,
                sample_weight=sw,
                loss=loss_r,
                pairs=sup,
                power=1,
                scale=1.0,
                features=Phi,
                max_unlabeled=u_max,
                with_labelers=r is None,
            )
            self.rows.append(({**kc, "graph": None}, ev))
        for j, gc in enumerate(graphs):
            t0 = time.perf_counter()
            e_g, L, scale, _ = self.graph(est, ops, gc)
            self.t_factor += time.perf_counter() - t0
            pairs = list(self.graph_pairs if pairs_of is None else pairs_of[j])
            if with_default_pair and self.default_pair not in pairs:
                pairs.insert(0, self.default_pair)
            ev = loo_evidence(
                e_g,
                columns=cols,
                L=L,
                Y=Y,
                labeled=labeled,
                sample_weight=sw,
                loss=loss_r,
                pairs=pairs,
                power=int(gc["laplacian_power"]),
                scale=scale,
                features=Phi,
                max_unlabeled=u_max,
                # one factorization per ratio gamma_i / gamma_a of the grid
                by_ratio=True,
                gram=self.gram(Phi, L, gc),
                with_labelers=r is None,
            )
            self.rows.append(({**kc, "graph": gc, "gamma_": ops.gamma_}, ev))
            self.progress.step(
                f"{kc} {gc} best so far "
                f"{min(float(e.scores.min()) for _, e in self.rows):.4f}"
            )
        self._lphi = None


def _round2_kernels(
    rows: list[tuple[dict, Any]],
    default_pair: tuple[float, float],
    top: int = ROUND2_PAIRS,
) -> dict[tuple, list]:
    """Round 2's configurations, grouped by kernel: the defaults' kernel's
    supervised row and its first graph (the defaults', rows 0 and 1) and the
    three best others of round 1 ``rows``.

    Each graph comes with its ``top`` pairs of round 1 (lowest criterion, then
    grid order): round 2 re-scores them with the estimator's own loss on the
    finer factor (a Cholesky factorization of order up to 2,000 per ratio and
    the exact LapSVM leave-one-out per pair), and the round-2 winner was among
    the first five of its graph in round 1 on the problems checked (digits,
    wine, breast cancer, iris, two moons, 3-cluster classification; 5 and 10
    labels per class).  The defaults' graph always keeps ``default_pair`` (the
    prior); the supervised row keeps all its pairs (they are exact at any factor
    and cost no factorization).  Entries: ``(graph, pairs)``, ``(None, None)``
    for the supervised row.
    """
    ranked = sorted(range(len(rows)), key=lambda j: float(rows[j][1].scores.min()))
    keep = [0, 1] + [j for j in ranked if j not in (0, 1)][:3]
    seen: dict = {}
    for j in keep:
        conf, ev = rows[j]
        kc = {k: v for k, v in conf.items() if k in ("kernel", "gamma")}
        pairs = None
        if conf["graph"] is not None:
            order = np.lexsort((np.arange(len(ev.pairs)), ev.scores))[:top]
            pairs = [ev.pairs[i] for i in sorted(order)]
            if j in (0, 1) and default_pair not in pairs:  # the defaults' graph
                pairs.insert(0, default_pair)
        seen.setdefault(tuple(sorted(kc.items())), []).append((conf["graph"], pairs))
    return seen


def _loo_choice(
    flat2: list[tuple[dict, tuple]],
    ev2: Any,
    kconf0: dict,
    gconf0: dict,
    default_pair: tuple[float, float],
    n_candidates: int,
) -> tuple[int, float, str]:
    """The selected candidate of round 2 ``(flat2, ev2)``, its z and the reason.

    The prior is what the plain estimator would fit: its "auto" rule on the
    defaults' kernel ``kconf0`` and graph ``gconf0`` (same engine, same
    candidates, same test; the defaults' pair when the grid has no
    gamma_i = 0); the best candidate replaces it when the z test of
    :func:`~semisvm.models._autoreg.choose` over ``n_candidates`` says so.
    """
    from ..models._autoreg import GRID_A, Z_SWITCH, choose, z_threshold

    k_def = next(
        i
        for i, (conf, pair) in enumerate(flat2)
        if conf["graph"] is not None
        and pair == default_pair
        and conf["kernel"] == kconf0["kernel"]
        and conf.get("gamma") == kconf0.get("gamma")
        and conf["graph"] == gconf0
    )
    auto = [k_def] + [
        i
        for i, (conf, pair) in enumerate(flat2)
        if conf["graph"] is None
        and pair[1] == 0.0
        and pair[0] in GRID_A
        and conf["kernel"] == kconf0["kernel"]
        and conf.get("gamma") == kconf0.get("gamma")
    ]
    # without gamma_i = 0 in the grid no supervised candidate is scored: the
    # prior is then the defaults' pair on the defaults' graph
    k_prior = k_def
    if len(auto) > 1:
        k_prior = auto[choose(ev2.subset(auto), 0, Z_SWITCH, graded=True)[0]]
    k, z, _, why = choose(
        ev2,
        k_prior,
        z_threshold(n_candidates, ev2.per_point.shape[1]),
        prior_name="the plain estimator's choice",
    )
    return k, z, why


class _ManifoldCV(ClassifierMixin, BaseEstimator):
    """Shared machinery of LapSVMCV and LapRLSCV."""

    _base: type
    _parameter_constraints: dict = {
        "gamma_a": ["array-like", Interval(numbers.Real, 0, None, closed="neither")],
        "gamma_i": ["array-like", Interval(numbers.Real, 0, None, closed="left")],
        "gamma": [
            None,
            "array-like",
            Interval(numbers.Real, 0, None, closed="neither"),
            Options(("median", "scale")),
        ],
        "n_neighbors": [None, "array-like", Interval(numbers.Integral, 1, None)],
        "kernel": [None, "array-like", str],
        "normalize_laplacian": [None, "array-like", "boolean"],
        "laplacian_power": [None, "array-like", Interval(numbers.Integral, 1, None)],
        "cv": [Interval(numbers.Integral, 2, None), Options(("loo",)), CVSplitter],
        "scoring": [Options(tuple(_SCORERS))],
        "estimator_params": [None, "dict"],
        "refit": ["boolean"],
        "random_state": ["random_state"],
        "verbose": [Interval(numbers.Integral, 0, None), "boolean"],
        "n_jobs": [None, Interval(numbers.Integral, None, None)],
    }

    def __init__(
        self,
        *,
        gamma_a: Any = (1e-6, 10**-4.5, 1e-3, 10**-1.5, 1.0),
        gamma_i: Any = (0.0, 1e-3, 10**-1.5, 1.0, 10**1.5),
        gamma: Any = None,
        n_neighbors: Any = None,
        kernel: Any = None,
        normalize_laplacian: Any = None,
        laplacian_power: Any = None,
        cv: int | str = "loo",
        scoring: str = "accuracy",
        estimator_params: dict | None = None,
        refit: bool = True,
        random_state: Any = None,
        verbose: int = 0,
        n_jobs: int | None = None,
    ) -> None:
        self.gamma_a = gamma_a
        self.gamma_i = gamma_i
        self.gamma = gamma
        self.n_neighbors = n_neighbors
        self.kernel = kernel
        self.normalize_laplacian = normalize_laplacian
        self.laplacian_power = laplacian_power
        self.cv = cv
        self.scoring = scoring
        self.estimator_params = estimator_params
        self.refit = refit
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs

    # ------------------------------------------------------------ helpers
    def _template(self) -> Any:
        # the base estimator as a user gets it (its own solver and stopping
        # rule, as LapSVM() fits the "auto" rule's choice), with estimator_params
        params = dict(self.estimator_params or {})
        # the search's seed also drives the estimators' own draws (landmarks of
        # the LOO features, validation splits) unless estimator_params sets one
        params.setdefault("random_state", self.random_state)
        est = self._base(**params)
        # the estimator's own messages for bad estimator_params, before any work
        validate_params(est.get_params(deep=False), est._parameter_constraints)
        check_options(est)
        for p in _SEARCHED:
            fixable = p in ("kernel", "normalize_laplacian", "laplacian_power")
            if fixable and getattr(self, p) is None:
                continue  # a value in estimator_params fixes it (not searched)
            if self.estimator_params and p in self.estimator_params:
                raise ValueError(
                    f"{p!r} is searched by {type(self).__name__}; set it through the "
                    f"{p} argument, not estimator_params."
                )
        return est

    def _width_grid(self, template: Any, X: Any) -> list:
        widths = _grid(self.gamma, "gamma")
        self._default_width = None
        if widths:
            return widths
        base = template.gamma
        self._default_width = base
        if template.kernel != "rbf":
            return [base]
        from ..kernels import resolve_gamma

        g0 = resolve_gamma(X, base, "rbf", template.n_neighbors)
        grid = [g0 / f**2 for f in _SIGMA_FACTORS]
        self._default_width = grid[_SIGMA_FACTORS.index(1.0)]
        return grid

    def _check_fallback(self, y_lab: np.ndarray) -> str | None:
        classes, counts = np.unique(y_lab, return_counts=True)
        if classes.size < 2:
            return None  # the base estimator raises its own error
        if counts.min() < 2:
            return (
                f"class {classes[np.argmin(counts)]} has {counts.min()} labeled "
                "point(s); cross-validation needs at least two labeled points per "
                "class (one to train, one to test)"
            )
        if counts.min() < MIN_LABELS_PER_CLASS:
            return (
                f"class {classes[np.argmin(counts)]} has {counts.min()} labeled "
                f"points; with fewer than {MIN_LABELS_PER_CLASS} per class the held-out "
                "labels cannot rank the candidates reliably, and the graph-trusting "
                "defaults do better"
            )
        return None

    # ---------------------------------------------------------------- fit
    def fit(self, X: Any, y: Any) -> Any:
        """Choose the parameters by cross-validation on the labeled points, then refit.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Labeled and unlabeled training points.
        y : array-like of shape (n_samples,)
            Labels; ``-1``, ``None``, ``NaN`` and ``pd.NA`` mark unlabeled points.

        Returns
        -------
        self
        """
        validate_params(self.get_params(deep=False), self._parameter_constraints)
        check_numeric_frame(X)
        # None / NaN / pd.NA mark unlabeled rows (validate_data refuses NaN)
        y = decode_labels(y)
        X, y = validate_data(
            self,
            X,
            y,
            accept_sparse="csr",
            dtype=[np.float64, np.float32],
            ensure_min_samples=2,
            ensure_all_finite=False,
            y_numeric=False,
        )
        check_finite(X, "X")
        check_classification_targets(y)
        y = np.asarray(y)
        template = self._template()
        t_start = time.perf_counter()
        lab_mask = labeled_mask(y)
        if np.unique(y[lab_mask]).size < 2:
            clone(template).fit(X, y)  # raises the base estimator's error
        reason = self._check_fallback(y[lab_mask])
        self.fallback_reason_ = reason
        if reason is not None:
            warnings.warn(
                f"{type(self).__name__}: {reason}; no model selection, fitting "
                f"{self._base.__name__} with its default parameters instead (a "
                "single candidate value, e.g. a scalar gamma_a, is kept as a setting).",
                UserWarning,
                stacklevel=2,
            )
            self.best_params_: dict[str, Any] = {}
            self.best_score_: float | None = None
            self.cv_results_: dict[str, Any] = {}
            self.n_splits_ = 0
            # the estimator the search would refit (the base estimator with
            # estimator_params and the seed), with every single-valued candidate as
            # a setting (a scalar gamma_a, a one-element gamma grid, ...)
            settings = {}
            for name in _SEARCHED:
                grid = _grid(getattr(self, name), name)
                if len(grid) == 1:
                    settings[name] = grid[0]
            self.fallback_params_ = settings
            if self.refit:
                self._refit(clone(template).set_params(**settings), X, y)
            self.search_time_ = time.perf_counter() - t_start
            return self
        cache = None
        if self.cv == "loo":
            cache = self._search_loo(template, X, y, lab_mask)
        else:
            self._search(template, X, y, lab_mask)
        self.search_time_ = time.perf_counter() - t_start
        if self.refit:
            est = clone(template).set_params(**self.best_params_)
            # the search's K and L of the chosen candidate (cv='loo', when kept)
            if cache is not None and cache.get(est, X, True) is None:
                cache = None
            # a width of the rule's grid (not the user's): the refit runs the
            # estimators' extension check as LapSVM() does (models._extension)
            if self.gamma is None and resolved_options(est).extension_width == "auto":
                est.set_params(options__extension_width="always")
            # the weights the search chose are checked against the labels-only
            # models as LapSVM() checks its own (models._baseline); weights the
            # user fixed are kept
            searched = any(
                len(_grid(getattr(self, name), name)) != 1
                for name in ("gamma_a", "gamma_i")
            )
            if searched and resolved_options(est).labels_only_check == "auto":
                est.set_params(options__labels_only_check="always")
            self._refit(est, X, y, cache)
        return self

    def _refit(self, est: Any, X: Any, y: np.ndarray, cache: Any = None) -> None:
        t0 = time.perf_counter()
        est.fit(X, y, operator_cache=cache)
        self.refit_time_ = time.perf_counter() - t0
        self.best_estimator_ = est
        self.classes_ = est.classes_

    def _folds(
        self, X: Any, y: np.ndarray, lab_mask: np.ndarray
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """``(y_fold, test)`` per fold: the labels the fold trains on (held-out
        and unused labeled points marked -1: they stay in the kernel and the graph
        as unlabeled points) and the held-out labeled points (indices into X)."""
        Q = np.flatnonzero(lab_mask)
        yq = y[Q]
        n = y.shape[0]
        splits: list[tuple[np.ndarray, np.ndarray]] = []
        if isinstance(self.cv, numbers.Integral):
            _, counts = np.unique(yq, return_counts=True)
            n_splits = int(min(self.cv, counts.min()))
            if n_splits < self.cv:
                warnings.warn(
                    f"{type(self).__name__}: the smallest class has {counts.min()} "
                    f"labeled points; using {n_splits} folds instead of cv={self.cv}.",
                    UserWarning,
                    stacklevel=4,
                )
            skf = StratifiedKFold(
                n_splits, shuffle=True, random_state=resolve_seed(self.random_state)
            )
            for _, te in skf.split(np.zeros((Q.size, 1)), yq):
                keep = np.ones(n, dtype=bool)
                keep[Q[te]] = False
                splits.append((np.flatnonzero(keep), Q[te]))
        else:  # a scikit-learn splitter, on all the points (as in GridSearchCV)
            splitter: Any = self.cv
            splits = [
                (np.asarray(tr), np.asarray(te)) for tr, te in splitter.split(X, y)
            ]
        classes = np.unique(yq)
        folds = []
        for f, (tr, te) in enumerate(splits):
            in_train = np.zeros(n, dtype=bool)
            in_train[tr] = True
            test = np.unique(te)
            test = test[lab_mask[test]]  # unlabeled test points have no score
            if test.size == 0:
                raise ValueError(
                    f"fold {f} of cv={self.cv!r} holds no labeled point to score."
                )
            y_fold = y.copy()
            y_fold[lab_mask & ~in_train] = -1
            missing = np.setdiff1d(classes, y_fold[lab_mask & in_train])
            if missing.size:
                raise ValueError(
                    f"fold {f} of cv={self.cv!r} leaves class(es) "
                    f"{missing.tolist()} without a training label; use a stratified "
                    "splitter over the labeled points (LabeledStratifiedKFold)."
                )
            folds.append((y_fold, test))
        return folds

    def _search(
        self, template: Any, X: Any, y: np.ndarray, lab_mask: np.ndarray
    ) -> None:
        """K-fold: every candidate fitted on every fold by the plain estimator."""
        folds = self._folds(X, y, lab_mask)
        self.n_splits_ = len(folds)
        widths = self._width_grid(template, X)
        ks = _grid(self.n_neighbors, "n_neighbors") or [template.n_neighbors]
        gas = [float(v) for v in _grid(self.gamma_a, "gamma_a")]
        gis = [float(v) for v in _grid(self.gamma_i, "gamma_i")]
        if min(gas) <= 0 or min(gis) < 0:
            raise ValueError("gamma_a values must be > 0 and gamma_i values >= 0.")
        rows: list[dict] = []
        progress = _Progress(len(widths) * len(ks), type(self).__name__, self.verbose)
        t_factor = 0.0
        n_fits = 0
        n_lu = 0
        ctx = dict(
            folds=folds,
            y=y,
            score=_SCORERS[self.scoring],
            gas=gas,
            gis=gis,
            default_width=self._default_width,
        )
        # one job per (width, n_neighbors), sharing its K and L between its fits;
        # the jobs run in turn (n_jobs=None), on local processes, or on a Dask
        # cluster under joblib.parallel_backend("dask")
        jobs = (
            delayed(self._search_group)(template, X, w, k, ctx)
            for w in widths
            for k in ks
        )
        try:
            for g_rows, g_factor, g_fits, g_lu in Parallel(
                n_jobs=self.n_jobs, return_as="generator"
            )(jobs):
                rows.extend(g_rows)
                t_factor += g_factor
                n_fits += g_fits
                n_lu += g_lu
                best = min(rows, key=lambda r: (-np.mean(r["scores"]), r["loss"]))
                progress.step(
                    f"gamma={_fmt(g_rows[0]['gamma'])} k={g_rows[0]['n_neighbors']} "
                    f"best so far {np.mean(best['scores']):.4f}"
                )
        finally:
            progress.close()
        self.factor_time_ = t_factor
        self.n_newton_fallbacks_ = 0
        self.n_factorizations_ = n_lu
        self.n_fits_ = n_fits
        self._store_results(rows, self.n_splits_)

    def _search_group(
        self, template: Any, X: Any, w: Any, k: int, ctx: dict
    ) -> tuple[list[dict], float, int, int]:
        """Every (gamma_a, gamma_i) and fold for one kernel width and graph size.

        Each fold is ``clone(template).set_params(**candidate).fit(X, y_fold)``,
        scored on its held-out points by its own ``decision_function`` and
        ``predict``; the fits share the kernel and the graph (an
        :class:`~semisvm.models._base.OperatorCache`, built once per group).
        The exact solvers (LapRLS ``'direct'``, LapSVM ``'newton'``) share one
        factorization per ratio gamma_i / gamma_a through it
        (:mod:`semisvm.models._factorized`).  Returns the rows, the kernel/graph
        time, the number of fits and of factorizations.
        """
        from ..models._base import OperatorCache

        folds, score, y = ctx["folds"], ctx["score"], ctx["y"]
        # every fold's labeled points lie in the labeled set of y: the exact
        # solvers share one factorization per ratio gamma_i / gamma_a
        cache = OperatorCache(labeled=np.flatnonzero(labeled_mask(y)))
        pairs = list(itertools.product(ctx["gas"], ctx["gis"]))
        rows: list[dict] = [{} for _ in pairs]
        t_factor = 0.0
        n_fits = 0
        width_value = w
        # the graph candidates first: their kernel then serves gamma_i = 0 too
        for j in sorted(range(len(pairs)), key=lambda j: pairs[j][1] == 0):
            ga, gi = pairs[j]
            cand = clone(template).set_params(
                gamma=w, n_neighbors=k, gamma_a=ga, gamma_i=gi
            )
            scores, losses = [], []
            for y_fold, test in folds:
                est = clone(cand)
                with warnings.catch_warnings():
                    # said once, by the refit: not once per fold and candidate
                    warnings.filterwarnings("ignore", message=UNREACHABLE_PATTERN)
                    est.fit(X, y_fold, operator_cache=cache)
                n_fits += 1
                t_factor += est.fit_times_["kernel"] + est.fit_times_["graph"]
                if est.gamma_ is not None:
                    width_value = est.gamma_
                O = np.asarray(est.decision_function(X[test]), dtype=np.float64)
                O = O.reshape(test.size, -1)
                scores.append(score(y[test], est.predict(X[test])))
                losses.append(self._loss(O, one_vs_rest(y[test], est.classes_)))
            rows[j] = {
                "gamma_a": ga,
                "gamma_i": gi,
                "gamma": width_value,
                "n_neighbors": k,
                "scores": scores,
                "loss": float(np.mean(losses)),
                "losses": losses,
                "is_default": bool(
                    w == ctx.get("default_width")
                    and k == template.n_neighbors
                    and ga == _defaults.GAMMA_A
                    and gi == _defaults.GAMMA_I
                ),
            }
        return rows, t_factor, n_fits, cache.n_factorizations

    # ------------------------------------------------------ LOO search
    def _configs(
        self, template: Any, X: Any, fewest: int | None = None
    ) -> tuple[list[dict], list[dict]]:
        """Kernel configurations and graph configurations of the search, the
        estimator's defaults first in each (``fewest``: the fewest labels per
        class, which the default ``laplacian_power="auto"`` reads)."""
        n = X.shape[0]
        fixed = self.estimator_params or {}
        kernels = _grid(self.kernel, "kernel") or (
            [template.kernel]
            if "kernel" in fixed or template.kernel != "rbf"
            else [template.kernel, "linear"]
        )
        kconfs: list[dict] = []
        for kern in dict.fromkeys(kernels):
            est = clone(template).set_params(kernel=kern)
            if kern == "rbf":
                for w in self._width_grid(est, X):
                    kconfs.append({"kernel": kern, "gamma": w})
                if self._default_width is not None and kern == template.kernel:
                    d = [c for c in kconfs if c.get("gamma") == self._default_width]
                    kconfs = d + [c for c in kconfs if c not in d]
            else:
                kconfs.append({"kernel": kern})
        k0 = template.n_neighbors
        ks = _grid(self.n_neighbors, "n_neighbors") or [k0, max(2, k0 // 2), 2 * k0]
        ks = [k for k in dict.fromkeys(ks) if k < n]
        norms = _grid(self.normalize_laplacian, "normalize_laplacian") or (
            [template.normalize_laplacian]
            if "normalize_laplacian" in fixed
            else [template.normalize_laplacian, not template.normalize_laplacian]
        )
        p0, _ = resolve_laplacian_power(template, X, fewest_labels=fewest)
        powers = _grid(self.laplacian_power, "laplacian_power") or (
            [p0] if "laplacian_power" in fixed else [p0, p0 + 1]
        )
        gconfs = [
            {
                "n_neighbors": int(k),
                "normalize_laplacian": bool(nl),
                "laplacian_power": int(p),
            }
            for k, nl, p in itertools.product(
                ks, dict.fromkeys(norms), dict.fromkeys(powers)
            )
        ]
        return kconfs, gconfs

    @on_one_blas_thread
    def _search_loo(
        self, template: Any, X: Any, y: np.ndarray, lab_mask: np.ndarray
    ) -> Any:
        """Every configuration scored by the estimators' own ``"auto"`` engine
        (:func:`semisvm.models._autoreg.loo_evidence`), in two rounds.  Returns
        the chosen candidate's operators for the refit (an
        :class:`~semisvm.models._base.OperatorCache`, or None)."""
        from ..models._autoreg import LOOEvidence, z_threshold

        gas = [float(v) for v in _grid(self.gamma_a, "gamma_a")]
        gis = [float(v) for v in _grid(self.gamma_i, "gamma_i")]
        if min(gas) <= 0 or min(gis) < 0:
            raise ValueError("gamma_a values must be > 0 and gamma_i values >= 0.")
        default_pair = (_defaults.GAMMA_A, _defaults.GAMMA_I)
        kconfs, gconfs = self._configs(template, X, encode_targets(y).fewest_labels)
        progress = _Progress(
            len(kconfs) * (len(gconfs) + 1), type(self).__name__, self.verbose
        )
        scorer = _LOOScorer(
            template,
            X,
            y,
            sup_pairs=[(a, 0.0) for a in gas if 0.0 in gis],
            graph_pairs=[(a, i) for a in gas for i in gis if i > 0],
            default_pair=default_pair,
            progress=progress,
            max_neighbors=max(g["n_neighbors"] for g in gconfs),
        )
        # round 1: every configuration on a coarse factor (ROUND1_FEATURES landmarks);
        # the defaults' kernel scored last (its K is kept for round 2), the rows
        # stored in the order of kconfs
        parts: list[list] = [[] for _ in kconfs]
        try:
            for j in list(range(1, len(kconfs))) + [0]:
                start = len(scorer.rows)
                scorer.score_kernel(kconfs[j], gconfs, ROUND1_FEATURES, True, True)
                parts[j] = scorer.rows[start:]
                progress.step(f"{kconfs[j]}")
        finally:
            progress.close()
        scorer.rows = [row for part in parts for row in part]
        flat = self._flatten(scorer.rows)
        n_candidates = len(flat)
        # round 2: the defaults' configuration, the supervised one and the three
        # best others, re-scored exactly as the "auto" rule scores (finer factor,
        # more unlabeled points, the estimator's own loss), decide
        rows_r1, scorer.rows = scorer.rows, []
        for key, entries in _round2_kernels(rows_r1, default_pair).items():
            graphs = [(g, p) for g, p in entries if g is not None]
            scorer.score_kernel(
                dict(key),
                [g for g, _ in graphs],
                None,
                len(graphs) < len(entries),
                False,
                pairs_of=[p for _, p in graphs],
            )
        rows = scorer.rows
        flat2 = self._flatten(rows)
        ev2 = LOOEvidence.concatenate([e for _, e in rows])
        k, z, why = _loo_choice(
            flat2, ev2, kconfs[0], gconfs[0], default_pair, n_candidates
        )
        cache = None
        if self.refit:
            chosen = clone(template).set_params(**self._params_of(*flat2[k]))
            cache = scorer.refit_cache(chosen)
        self._n_kernel_builds = scorer.n_kernels
        self.factor_time_ = scorer.t_factor
        self.n_newton_fallbacks_ = 0
        self.n_factorizations_ = 0
        self.n_splits_ = int(lab_mask.sum())
        self.selection_ = dict(
            reason=why,
            z=float(z),
            n_candidates=n_candidates,
            threshold=z_threshold(n_candidates, ev2.per_point.shape[1]),
        )
        self._store_loo_results(flat, rows, flat2, ev2, k)
        return cache

    @staticmethod
    def _flatten(rows):
        return [(conf, pair) for conf, ev in rows for pair in ev.pairs]

    def _params_of(self, conf: dict, pair: tuple) -> dict:
        p: dict[str, Any] = {
            "kernel": conf["kernel"],
            "gamma_a": pair[0],
            "gamma_i": pair[1],
        }
        if "gamma" in conf:
            p["gamma"] = conf["gamma"]
        if conf["graph"] is not None:
            p.update(conf["graph"])
        return p

    def _store_loo_results(self, flat1, rows1_final, flat2, ev2, k) -> None:
        params = [self._params_of(c, p) for c, p in flat2]
        err = ev2.errors
        order = np.lexsort((np.arange(err.size), err, ev2.scores))
        order = np.concatenate([[k], order[order != k]])
        rank = np.empty(err.size, dtype=np.int32)
        rank[order] = np.arange(1, err.size + 1)
        res: dict[str, Any] = {"params": params}
        for key in (
            "kernel",
            "gamma",
            "gamma_a",
            "gamma_i",
            "n_neighbors",
            "normalize_laplacian",
            "laplacian_power",
        ):
            res[f"param_{key}"] = np.array([q.get(key) for q in params], dtype=object)
        res["mean_test_score"] = 1.0 - err
        res["mean_test_loss"] = ev2.scores
        res["rank_test_score"] = rank
        self.cv_results_ = res
        self.best_index_ = int(k)
        self.best_score_ = float(1.0 - err[k])
        self.best_params_ = dict(params[k])

    @staticmethod
    def _loss(O: np.ndarray, T: np.ndarray) -> float:
        raise NotImplementedError

    def _store_results(self, rows: list[dict], n_splits: int) -> None:
        S = np.array([r["scores"] for r in rows])
        mean, std = S.mean(axis=1), S.std(axis=1)
        loss = np.array([r["loss"] for r in rows])
        LS = np.array([r["losses"] for r in rows])
        loss_se = (
            LS.std(axis=1, ddof=1) / np.sqrt(LS.shape[1])
            if LS.shape[1] > 1
            else (np.zeros(len(rows)))
        )
        # ranked by the held-out loss (smooth, far less variance than accuracy with
        # few labels), then score, then grid order; one-standard-error rule: the
        # default configuration is chosen when its loss is within one standard
        # error of the best
        order = np.lexsort((np.arange(mean.size), -mean, loss))
        chosen = int(order[0])
        default = [i for i, r in enumerate(rows) if r.get("is_default")]
        if default and loss[default[0]] <= loss[chosen] + loss_se[chosen]:
            chosen = default[0]
        order = np.concatenate([[chosen], order[order != chosen]])
        rank = np.empty(mean.size, dtype=np.int32)
        rank[order] = np.arange(1, mean.size + 1)
        res: dict[str, Any] = {
            "params": [
                {k: r[k] for k in ("gamma", "gamma_a", "gamma_i", "n_neighbors")}
                for r in rows
            ]
        }
        for key in ("gamma", "gamma_a", "gamma_i", "n_neighbors"):
            res[f"param_{key}"] = np.array([r[key] for r in rows])
        for s in range(n_splits):
            res[f"split{s}_test_score"] = S[:, s]
        res["mean_test_score"] = mean
        res["std_test_score"] = std
        res["mean_test_loss"] = loss
        res["std_error_test_loss"] = loss_se
        res["rank_test_score"] = rank
        self.cv_results_ = res
        self.best_index_ = int(order[0])
        self.best_score_ = float(mean[self.best_index_])
        self.best_params_ = dict(res["params"][self.best_index_])

    # ----------------------------------------------------------- predict
    def _check(self) -> Any:
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_

    def decision_function(self, X: Any) -> np.ndarray:
        """Decision values of the refitted estimator (see its ``decision_function``)."""
        return self._check().decision_function(X)

    def predict(self, X: Any) -> np.ndarray:
        """Labels predicted by the refitted estimator."""
        return self._check().predict(X)

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Accuracy on the labeled rows (``y != -1``) of ``(X, y)``."""
        return self._check().score(X, y, sample_weight=sample_weight)

    @property
    def transduction_(self) -> np.ndarray:
        """Labels of the training points from the refitted estimator."""
        return self._check().transduction_

    def __sklearn_tags__(self):  # noqa: D105
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        kernel = (self.estimator_params or {}).get("kernel", "rbf")
        tags.input_tags.pairwise = kernel == "precomputed"
        return tags


def _fmt(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


_CV_DOC = r"""

    **Default search (``cv='loo'``): the estimators' own selection engine.**
    Every candidate -- kernel (``kernel``: RBF at the default width times
    :math:`\sigma`-factors 0.5, 1, 2, and linear), graph (``n_neighbors``:
    the default k, k/2, 2k; ``normalize_laplacian``: both; ``laplacian_power``:
    p and p + 1) and weights (``gamma_a`` x ``gamma_i``, normalized as in the
    estimators) -- is scored by the balanced, scale-free transductive
    leave-one-out of :mod:`semisvm.models._autoreg`, the engine of
    ``gamma_a="auto"``: exact held-out outputs of every labeled point (LapRLS
    closed form, LapSVM re-solved error sets), each held-out fit balanced on its
    own unlabeled outputs, scored by the squared hinge after the best rescaling.
    Round 1 screens every configuration on a 300-landmark factor (LapSVM
    candidates with the LapRLS closed form, each held-out fit balanced on 250
    unlabeled points); round 2 re-scores, exactly as the ``"auto"`` rule does,
    the defaults' configuration, the supervised models and the three best
    configurations, each graph with the five (gamma_a, gamma_i) pairs round 1
    ranks first (and the defaults' pair on the defaults' graph).  The prior is what the plain estimator fits
    (its ``"auto"`` choice on its default kernel and graph); another candidate
    replaces it only when its criterion is lower by more than
    :func:`~semisvm.models._autoreg.z_threshold` standard errors of the paired
    per-point differences (1.645 for the 8 candidates of ``"auto"``, raised by the
    Bonferroni factor for the size of the search, on Student's t with one
    degree of freedom fewer than the held-out labels) without significantly
    more LOO errors.  The
    chosen candidate is refitted with the plain estimator (numbers for every
    searched parameter), whose check against the labels-only models (the
    majority class, a kernel machine on the labels;
    :mod:`semisvm.models._baseline`) runs on the chosen weights as on its own
    (option ``labels_only_check='always'`` when ``gamma_a`` or ``gamma_i`` was
    searched).  ``cv_results_`` holds the round-2 candidates
    (``mean_test_score``: LOO accuracy, ``mean_test_loss``: the criterion) and
    ``selection_`` the decision (reason, z, number of candidates, threshold).
    Cost (``benchmarks/results/cv_cost.md``): one K per kernel configuration
    (the defaults' kept from round 1 for round 2 and, when chosen, for the
    refit, with its Laplacian), one kNN adjacency per (kernel,
    ``n_neighbors``) shared by its Laplacians (the linear kernel's read off one
    kNN search when no point has a tie at its k-th neighbour), the class
    balance of every held-out fit from the full fit's by one Newton run from a
    first-order start (:func:`~semisvm.solvers._loo.balanced_loo`), and one
    Cholesky factorization
    per (configuration, ratio :math:`\gamma_I/\gamma_A`) of the grid shared by
    every pair with that ratio (8 for the default 21 pairs) instead of an
    eigendecomposition; the refit runs on the search's K and L (with LapRLS's
    ``'direct'`` or LapSVM's ``'newton'`` solver through one LU factorization
    of :math:`I + rLK`, :mod:`semisvm.models._factorized`, instead of a dense
    system per Newton step and class).  The choices are
    those of the search without this sharing (tested).  At n = 2,000 a search
    costs 5-7 default fits in CPU time on one core (two moons, digits, a
    784-dimension set with 10 classes); at n = 10,000 (784 dimensions, 10
    classes) 48-62 s with the default BLAS threads (2.2x a default fit).
    Where the plain estimator would not hold a dense K (its
    ``kernel_approximation`` resolves to another operator: past memory, above
    about 50,000 points on 24 GiB, or with PCG from a few thousand points where
    the block operator is predicted faster) the search does not build one either:
    the LOO features read their kernel columns from X (the streamed operator)
    and every graph is the estimator's own kNN search at that size (blocked
    exact or approximate, one per ``n_neighbors``), which for the RBF kernel
    gives the graphs read off the dense K (tested: the same scores as the
    dense search); two moons at 100,000 points (75,000 training), 5 labels
    per class: 64-69 s with the refit.

    **K-fold search (``cv`` an integer or a scikit-learn splitter).**  Runs over
    the Cartesian product of the kernel widths ``gamma``, graph sizes
    ``n_neighbors``, ambient weights ``gamma_a`` and intrinsic weights
    ``gamma_i``.  Every candidate is scored on every fold by **the plain
    estimator**: ``clone(template).set_params(**candidate).fit(X, y_fold)``,
    where ``y_fold`` marks the held-out labeled points ``-1`` (they stay in the
    kernel and the graph as unlabeled points: transductive cross-validation),
    and the held-out points are scored with that estimator's own
    ``decision_function`` and ``predict``.  So a fold's model is exactly what
    ``fit`` returns for those labels (same regularization mapping, class
    weights, class balance, solver), and ``best_score_`` is the
    cross-validated score of exactly the refitted configuration.  An integer
    gives stratified K-fold over the labeled points (shuffled with
    ``random_state``); a splitter is applied to all the points, as in
    :class:`~sklearn.model_selection.GridSearchCV` (only its labeled test
    points are scored; labeled points outside its training set are hidden).
    The fits of one (width, ``n_neighbors``) group share the kernel and the
    graph (:class:`~semisvm.models._base.OperatorCache`: neither depends on the
    labels nor on the weights), and the estimator's exact solvers (LapRLS
    ``'direct'``, LapSVM ``'newton'``, when ``estimator_params`` selects
    them) share one LU factorization of
    :math:`I + rLK` per ratio :math:`r = \gamma_I/\gamma_A` (the default grids
    are geometric with a common step :math:`10^{1.5}`: 8 factorizations for
    their 25 pairs), after which a fit costs :math:`O(n l + l^3)`
    (:mod:`semisvm.models._factorized`; tested equal to the plain solvers).  Candidates are ranked by their mean
    held-out **loss** -- squared hinge for LapSVM, squared error for LapRLS
    (two classes; with more, the squared hinge of the multi-class margin
    :math:`f_y - \max_{c\ne y} f_c`, see
    :func:`semisvm.solvers._loo.pointwise_loss`) on the estimator's decision
    values -- which varies far less between folds than accuracy with 10 to 100
    labels (ties: higher mean score, then grid order).  One-standard-error
    rule: the estimator's default configuration (``gamma_a=1e-6``,
    ``gamma_i=1``, the default width and ``n_neighbors``, always in the default
    grid) is chosen whenever its loss is within one standard error (over the
    folds) of the best.  The chosen candidate is refitted on all the data with
    the plain estimator, with the same check against the labels-only models.
    Cost (digits, n = 1,797, 10 classes, 5 labels per class, the default 75
    candidates x 5 folds, ``cv=5``): LapRLSCV with ``solver='direct'`` 6.9 s,
    LapSVMCV with ``solver='newton'`` 10.7 s (one default LapSVM fit: 2.2 s);
    without the shared factorizations LapRLSCV took 101 s.

    With fewer than five labeled points in some class (two are the minimum of any
    cross-validation, and below five the held-out labels rank the candidates
    worse than the defaults do) the estimator warns, says why, and fits the base
    estimator with its default parameters (``fallback_reason_`` records the
    reason) with every single-valued candidate (a scalar ``gamma_a``, a
    one-element ``gamma`` grid, ...) as a setting (``fallback_params_``);
    with ``refit=False`` it fits nothing.

    Memory is that of one fit of the estimator plus one kernel and graph per
    (width, ``n_neighbors``) group; time one fit per candidate and fold.

    Parameters
    ----------
    gamma_a : float or sequence of float, default=10**(-6, -4.5, -3, -1.5, 0)
        Candidate :math:`\gamma_A > 0`.
    gamma_i : float or sequence of float, default=(0, 10**(-3, -1.5, 0, 1.5))
        Candidate :math:`\gamma_I \ge 0` (0: the supervised model on the labels).
    gamma : float, str or sequence, default=None
        Candidate kernel parameters (values of the estimator's ``gamma``).  ``None``:
        for the RBF kernel, the estimator's default width times
        :math:`\sigma`-factors 0.5, 1 and 2 (``gamma`` times 4, 1, 1/4); else the
        estimator's default.
    n_neighbors : int or sequence of int, default=None
        Candidate graph sizes; ``None``: the estimator's default only.
    kernel : str or sequence of str, default=None
        Candidate kernels (``cv='loo'``); ``None``: RBF and linear when the
        estimator's kernel is RBF (a ``kernel`` in ``estimator_params`` fixes it).
    normalize_laplacian : bool or sequence of bool, default=None
        Candidate Laplacians (``cv='loo'``); ``None``: both.
    laplacian_power : int or sequence of int, default=None
        Candidate powers of the Laplacian (``cv='loo'``); ``None``: the
        estimator's (``"auto"`` resolved from the data's intrinsic dimension,
        :mod:`semisvm.graph._dimension`) and the next.
    cv : 'loo', int or splitter, default='loo'
        ``'loo'``: the leave-one-out engine above.  An integer: stratified K-fold
        over the labeled points (lowered, with a warning, to the size of the
        smallest labeled class).  A scikit-learn splitter (e.g.
        :class:`~semisvm.model_selection.LabeledStratifiedKFold`): its folds.
    scoring : {'accuracy', 'balanced_accuracy'}, default='accuracy'
        Computed on the held-out labeled points of each fold.
    estimator_params : dict, default=None
        Other parameters of the base estimator (``kernel``, ``graph_weight``,
        ``normalize_laplacian``, ``solver``, ...; the expert options as
        ``{'options': SolverOptions(...)}``, :class:`~semisvm.SolverOptions`),
        used for the search and the refit.  The base estimator keeps its own
        defaults otherwise: the refit runs PCG with its ``"auto"`` early stop,
        as ``LapSVM()`` and ``LapRLS()`` fit the choice of their ``"auto"`` rule
        (the LOO engine scores each candidate at its exact optimum; on planar
        data the stopped iterate errs less: docs/rules.rst); pass
        ``{'solver': 'newton'}`` (LapSVM) or ``{'solver': 'direct'}`` (LapRLS)
        for the exact minimiser.
    refit : bool, default=True
        Refit the best candidate on all the data (needed for ``predict``).
    random_state : int, RandomState or None, default=None
        Shuffling of the labeled points into folds, and the estimators' own
        ``random_state`` unless ``estimator_params`` sets one.  ``None``: the
        library's fixed seed (:func:`semisvm._validation.resolve_seed`).
    verbose : int, default=0
        Progress per (width, n_neighbors): a tqdm bar when tqdm is installed,
        else a line on stderr.
    n_jobs : int, default=None
        K-fold: the (width, ``n_neighbors``) groups of the grid run in parallel
        through joblib (``None``: one after the other; each job holds its own
        n x n kernel).  Under ``joblib.parallel_backend("dask")`` they run on the workers
        of the current Dask client.  The results do not depend on it.

    Attributes
    ----------
    cv_results_ : dict of ndarray
        As scikit-learn's: ``params``, ``param_<name>``, ``split<k>_test_score``,
        ``mean_test_score``, ``std_test_score``, ``rank_test_score`` (1 = the
        chosen candidate), ``mean_test_loss`` (the ranking criterion) and
        ``std_error_test_loss``.
    best_params_ : dict
        ``gamma`` (the resolved float for RBF), ``gamma_a``, ``gamma_i``,
        ``n_neighbors``; empty after a fallback.
    best_score_ : float or None
    best_index_ : int
    best_estimator_ : estimator
        The refitted base estimator.
    classes_ : ndarray
    transduction_ : ndarray
        Labels of the training points (from ``best_estimator_``).
    n_splits_ : int
        Folds; with ``cv='loo'`` the number of labeled points.
    selection_ : dict
        ``cv='loo'`` only: ``reason`` (the decision in words), ``z`` (paired
        z-statistic of the best candidate against the prior), ``n_candidates``
        (the whole search) and ``threshold``.
    fallback_reason_ : str or None
    fallback_params_ : dict
        After a fallback: the single-valued candidates used as settings.
    n_fits_ : int
        K-fold: fits of the estimator (candidates x folds).
    search_time_, factor_time_, refit_time_ : float
        Seconds: whole fit, kernel/graph part, refit.

    References
    ----------
    S. Melacci and M. Belkin, "Laplacian Support Vector Machines Trained in the
    Primal", JMLR 12:1149-1184, 2011 (Sections 5-6: parameters chosen on labeled
    validation data).
"""


class LapRLSCV(_ManifoldCV):
    _base = LapRLS

    @staticmethod
    def _loss(O: np.ndarray, T: np.ndarray) -> float:
        return float(np.mean(pointwise_loss(O, T, "squared")))


LapRLSCV.__doc__ = (
    r"""Laplacian RLS with :math:`\gamma_A`, :math:`\gamma_I`, kernel width and graph
    size chosen by cross-validation on the labeled points.

    Each candidate is fitted by :class:`~semisvm.LapRLS` itself with its
    defaults and ``estimator_params`` (PCG with the ``"auto"`` early stop), in
    the K-fold search and in the refit; the LOO engine (``cv='loo'``) scores the
    exact minimisers of Eq. 15 of Melacci & Belkin 2011, as the ``"auto"`` rule
    of ``LapRLS()`` does."""
    + _CV_DOC
    + r"""
    Examples
    --------
    >>> from semisvm.model_selection import LapRLSCV
    >>> from semisvm.datasets import make_two_moons
    >>> X, y, y_true = make_two_moons(200, n_labeled_per_class=5, random_state=0)
    >>> clf = LapRLSCV(cv=3, random_state=0).fit(X, y)
    >>> float((clf.transduction_ == y_true).mean()) > 0.95
    True
"""
)


class LapSVMCV(_ManifoldCV):
    _base = LapSVM

    @staticmethod
    def _loss(O: np.ndarray, T: np.ndarray) -> float:
        return float(np.mean(pointwise_loss(O, T, "squared_hinge")))


LapSVMCV.__doc__ = (
    r"""Laplacian SVM with :math:`\gamma_A`, :math:`\gamma_I`, kernel width and graph
    size chosen by cross-validation on the labeled points.

    Each candidate is fitted by :class:`~semisvm.LapSVM` itself with its defaults
    and ``estimator_params`` (primal PCG of Melacci & Belkin 2011 with the
    ``"auto"`` early stop), in the K-fold search and in the refit; the LOO
    engine (``cv='loo'``) scores the exact minimisers of Eq. 7, as the ``"auto"``
    rule of ``LapSVM()`` does."""
    + _CV_DOC
    + r"""
    Examples
    --------
    >>> from semisvm.model_selection import LapSVMCV
    >>> from semisvm.datasets import make_two_moons
    >>> X, y, y_true = make_two_moons(200, n_labeled_per_class=5, random_state=0)
    >>> clf = LapSVMCV(cv=3, random_state=0).fit(X, y)
    >>> float((clf.transduction_ == y_true).mean()) > 0.95
    True
"""
)
