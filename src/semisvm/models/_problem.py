r"""One problem preparation for every estimator: targets, kernel and graph.

Every estimator (``LapSVM``, ``LapRLS``, ``LapSVC``, ``SemiSupervisedKernel``,
``LapSVMPath``, ``ExactTSVM``), the CV estimators and the reproduction of the
paper's experiments go through these functions, so that the same parameters give
the same K, the same Laplacian and the same targets:

* :func:`encode_targets` -- the one label decoder (``-1`` / ``"-1"`` unlabeled);
* :func:`prepare_kernel` -- K and the resolved width ``gamma_`` from an
  estimator's kernel parameters (:func:`build_kernel` on explicit ones);
* :func:`prepare_graph` -- the Laplacian from its graph parameters and options
  (:func:`build_laplacian` on explicit ones); :func:`prepare_operators` is the
  two together for the manifold estimators' dense, streamed, Nyström and
  distributed operators;
* :func:`prediction_kernel` -- :math:`k(X, X_{train})` with the *fitted* kernel,
  the one kernel every ``decision_function`` (and the reproduction's test and
  validation rows) evaluates.

**Target convention.**  The public API takes class labels with ``-1`` marking
an unlabeled point (scikit-learn's semi-supervised convention; an object array
of strings may use the integer ``-1`` or the string ``"-1"``).
:func:`encode_targets` turns them into what every numerical solver of
:mod:`semisvm.solvers` takes: an (n, C) matrix ``Y`` with entries in
{-1, 0, +1}, 0 on unlabeled rows, C = 1 column for two classes (+1 means
``classes[1]``) and one one-vs-rest column per class otherwise.
"""

from __future__ import annotations

import numbers
import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils.multiclass import check_classification_targets

from .. import _defaults
from .._sample import sample_indices
from .._validation import (
    UNLABELED,
    decode_labels,
    labeled_mask,
    plain,
    split_labeled,
)
from ..graph import (
    check_adjacency,
    graph_laplacian,
    knn_graph,
    knn_graph_from_kernel,
    resolve_graph_weight,
)
from ..kernels import kernel_matrix, knn_scale_ratio, resolve_gamma
from ..kernels._distributed import distributed_kernel, is_distributed_array
from ..kernels._nystroem import nystroem_factor
from ..solvers._landmarks import LandmarkSpace, landmark_space
from ._options import resolved_options
from ._scale import (
    build_scalable_kernel,
    distributed_adjacency,
    knn_method,
    scalable_adjacency,
    scalable_knn,
)
from ._solve import fewest_labels

__all__ = [
    "FittedKernel",
    "Targets",
    "UNLABELED",
    "build_kernel",
    "build_laplacian",
    "encode_targets",
    "graph_scale",
    "labeled_mask",
    "one_vs_rest",
    "fitted_kernel_params",
    "prediction_centers",
    "prediction_kernel",
    "prepare_graph",
    "prepare_kernel",
    "Operators",
    "prepare_operators",
    "fewest_labels",
    "resolve_laplacian_power",
]


@dataclass(frozen=True)
class Targets:
    """Encoded targets (:func:`encode_targets`).

    Attributes
    ----------
    labeled : ndarray of bool of shape (n,)
    classes : ndarray of shape (n_classes,)
        Sorted distinct labels of the labeled points.
    y_idx : ndarray of int of shape (n,)
        Index into ``classes``; -1 on unlabeled rows.
    Y : ndarray of shape (n, C)
        The solvers' ±1/0 one-vs-rest matrix (C = 1 for two classes).
    """

    labeled: np.ndarray
    classes: np.ndarray
    y_idx: np.ndarray
    Y: np.ndarray

    @property
    def labeled_idx(self) -> np.ndarray:
        """Rows of the labeled points."""
        return np.flatnonzero(self.labeled)

    @property
    def fewest_labels(self) -> int:
        """Labeled points of the class with the fewest (``laplacian_power="auto"``)."""
        return fewest_labels(self.Y, self.labeled)


def encode_targets(y: Any) -> Targets:
    """Labels with -1 for unlabeled points -> :class:`Targets`.

    Parameters
    ----------
    y : array-like of shape (n_samples,)

    Returns
    -------
    Targets

    Raises
    ------
    ValueError
        No labeled point, a single class (with a hint when -1 may be a class),
        infinite labels, or labels that are not classes (e.g. continuous values).
    """
    y_arr = decode_labels(y) if np.ndim(y) == 1 else np.asarray(y)
    mask = labeled_mask(y_arr) if y_arr.ndim == 1 else None
    if mask is not None and mask.any():
        lab_vals = y_arr[mask]
        if lab_vals.dtype.kind == "O":
            kinds = {type(v) for v in lab_vals}
            if len({str in kinds and "s", bool(kinds - {str}) and "o"} - {False}) > 1:
                raise ValueError(
                    "y mixes strings and other values among the labeled points "
                    f"(types {sorted(t.__name__ for t in kinds)}); use one type of "
                    "class label, and -1 for the unlabeled points."
                )
            if kinds <= {str}:
                lab_vals = lab_vals.astype(str)
        check_classification_targets(lab_vals)
    try:
        labeled, classes, y_enc = split_labeled(y_arr)
    except ValueError as exc:
        if "single class" in str(exc) and np.any(~labeled_mask(y_arr)):
            raise ValueError(
                f"{exc} Note: -1 marks unlabeled points; if -1 is a class label in "
                "your data, recode the labels (e.g. to 0/1)."
            ) from None
        raise
    Y = np.zeros((y_enc.size, 1 if classes.size == 2 else classes.size))
    Y[labeled] = one_vs_rest(classes[y_enc[labeled]], classes)
    return Targets(labeled=labeled, classes=classes, y_idx=y_enc, Y=Y)


def one_vs_rest(y: Any, classes: np.ndarray) -> np.ndarray:
    """±1 one-vs-rest targets (m, C) of labels ``y`` (all among ``classes``).

    One column (+1 for ``classes[1]``) for two classes, one per class otherwise.

    Raises
    ------
    ValueError
        If a label is not among ``classes``.
    """
    y = np.asarray(y)
    unknown = ~np.isin(y, classes)
    if unknown.any():
        raise ValueError(
            f"labels {plain(np.unique(y[unknown]))!r} are not among the classes of "
            f"the labeled training points {plain(classes)!r}."
        )
    if classes.size == 2:
        return np.where(y == classes[1], 1.0, -1.0)[:, None]
    return np.where(y[:, None] == classes[None, :], 1.0, -1.0)


def build_kernel(
    X: Any,
    *,
    kernel: Any,
    gamma: Any,
    degree: int,
    coef0: float,
    kernel_params: dict | None,
    n_neighbors: int = 10,
) -> tuple[Any, float | None]:
    """Gram matrix of the training points and the resolved RBF/poly ``gamma``.

    A ``dask.array`` X gives a :class:`~semisvm.kernels.DistributedKernelOperator`
    (the rows of K on the cluster's workers) instead of an ndarray.
    """
    if is_distributed_array(X):
        return distributed_kernel(
            X,
            kernel=kernel,
            gamma=gamma,
            degree=degree,
            coef0=coef0,
            kernel_params=kernel_params,
            store="dense",
            n_neighbors=n_neighbors,
        )
    if kernel == "precomputed":
        K = np.asarray(X.toarray() if sp.issparse(X) else X)
        if K.shape[0] != K.shape[1]:
            raise ValueError(
                f"With kernel='precomputed', X must be the square training Gram matrix;"
                f" got shape {K.shape}."
            )
        if not np.allclose(K, K.T, rtol=1e-8, atol=1e-10 * max(1.0, np.abs(K).max())):
            raise ValueError("The precomputed kernel matrix X is not symmetric.")
        return K, None
    g = (
        None
        if callable(kernel) or kernel == "linear"
        else resolve_gamma(X, gamma, kernel, n_neighbors)
    )
    K = kernel_matrix(
        X,
        kernel=kernel,
        gamma=g if g is not None else 1.0,
        degree=degree,
        coef0=coef0,
        kernel_params=kernel_params,
    )
    return K, g


def resolve_laplacian_power(
    est: Any,
    X: Any,
    adjacency: Any = None,
    *,
    measure: bool = True,
    fewest_labels: int | None = None,
) -> tuple[int, float]:
    """The integer power of ``est``'s Laplacian and the intrinsic dimension
    measured for it (``nan`` when not measured).

    A number is kept.  ``"auto"`` is :func:`~semisvm.graph.auto_laplacian_power`
    of the intrinsic dimension of X (:func:`~semisvm.graph.intrinsic_dimension`
    on the same fixed-size sample in process and on a dask array) and of
    ``fewest_labels`` (the labeled points of the class with the fewest, None
    when the fit has no labels); 1 when the points have no features to measure
    (a user graph or a precomputed kernel) and when ``measure`` is False (a fit
    without a graph).
    """
    from ..graph import auto_laplacian_power, intrinsic_dimension

    p = est.laplacian_power
    dim = float("nan")
    if isinstance(p, str):
        if (
            measure
            and adjacency is None
            and not (isinstance(est.kernel, str) and est.kernel == "precomputed")
        ):
            S = X
            if is_distributed_array(X):  # the rows the in-process estimate samples
                S = np.asarray(X[sample_indices(X.shape[0], 2000)].compute())
            dim = intrinsic_dimension(S, est.n_neighbors)
        p = auto_laplacian_power(dim, fewest_labels)
    return int(p), dim


def graph_scale(
    X: Any,
    kernel: Any,
    n_neighbors: int,
    adjacency: Any = None,
    *,
    knn_dist2: np.ndarray | None = None,
) -> float:
    """The graph term's length normalization rho (1 for a user graph/precomputed).

    ``knn_dist2``: the graph search's squared distances (n, k), when the graph
    was searched from X; :func:`~semisvm.kernels.knn_scale_ratio` reads the
    n-point scale off them instead of a second search.
    """
    if adjacency is not None or (isinstance(kernel, str) and kernel == "precomputed"):
        return 1.0
    if is_distributed_array(X):
        from ..kernels._distributed import distributed_scale_ratio

        return distributed_scale_ratio(X, n_neighbors)
    return knn_scale_ratio(X, n_neighbors, knn_dist2=knn_dist2)


def build_adjacency(
    X: Any,
    K: np.ndarray,
    *,
    kernel: Any,
    gamma_: float | None,
    n_neighbors: int,
    graph_weight: str,
    heat_t: float | None,
    adjacency: Any = None,
    neighbors: tuple[np.ndarray, np.ndarray] | None = None,
) -> sp.csr_array:
    """Adjacency of the training points (the graph of :func:`build_laplacian`).

    The user's (``adjacency``), else a symmetric kNN graph: read off K for the
    RBF kernel (no second distance pass), built from the kernel-induced distance
    for a precomputed kernel, and from X otherwise (``neighbors``: that
    search's result when known, :func:`semisvm.graph._graph.knn_query`).
    ``graph_weight`` is resolved here when ``'auto'``.
    """
    n = X.shape[0]
    if graph_weight == "auto":
        graph_weight = resolve_graph_weight(
            graph_weight, graph_scale(X, kernel, n_neighbors, adjacency)
        )
    if adjacency is not None:
        W = check_adjacency(adjacency, n)
        deg = np.asarray(W.sum(axis=1)).ravel()
        n_iso = int((deg <= 0).sum())
        if n_iso == n:
            raise ValueError("adjacency has no edge: every point is isolated.")
        if n_iso:
            warnings.warn(
                f"The graph has {n_iso} isolated point(s) (no edge); the intrinsic "
                "regularizer does not constrain them.",
                UserWarning,
                stacklevel=4,
            )
        return W
    if kernel == "rbf" and gamma_ is not None:
        return knn_graph_from_kernel(
            K, gamma_, n_neighbors, weight=graph_weight, t=heat_t
        )
    if kernel == "precomputed":
        d = np.diag(K)
        D2 = np.maximum(d[:, None] + d[None, :] - 2 * K, 0.0)
        # a monotone map of the kernel distance into (0, 1] for the kNN search
        return knn_graph_from_kernel(
            np.exp(-D2), 1.0, n_neighbors, weight=graph_weight, t=heat_t
        )
    return knn_graph(X, n_neighbors, weight=graph_weight, t=heat_t, neighbors=neighbors)


def build_laplacian(
    X: Any,
    K: np.ndarray,
    *,
    kernel: Any,
    gamma_: float | None,
    n_neighbors: int,
    graph_weight: str,
    heat_t: float | None,
    normalize_laplacian: bool,
    laplacian_power: int,
    adjacency: Any = None,
) -> sp.csr_array:
    """Graph Laplacian of the training points (the graph of
    :func:`build_adjacency`)."""
    W = build_adjacency(
        X,
        K,
        kernel=kernel,
        gamma_=gamma_,
        n_neighbors=n_neighbors,
        graph_weight=graph_weight,
        heat_t=heat_t,
        adjacency=adjacency,
    )
    return graph_laplacian(
        W, normalized=normalize_laplacian, power=laplacian_power, form="operator"
    )


@dataclass(frozen=True)
class Operators:
    """The kernel operator and the Laplacian of one training set, and what was
    resolved to build them (:func:`prepare_operators`).

    Attributes
    ----------
    K : ndarray or operator
    L : Laplacian operator or None
    gamma_ : float or None
        The resolved RBF/poly parameter.
    graph_scale : float
        The graph term's length normalization rho (1 without a graph).
    graph_weight : str
        The resolved edge weights.
    laplacian_power : int
    intrinsic_dimension : float
        ``nan`` when not measured.
    knn : tuple of ndarray or None
        The kNN lists (indices, squared distances) of a scalable search.
    graph_method : str or None
        The kNN search used by a scalable or distributed graph.
    times : dict
        Seconds spent on ``"kernel"`` and ``"graph"``.
    """

    K: Any
    L: Any
    gamma_: float | None
    graph_scale: float
    graph_weight: str
    laplacian_power: int
    intrinsic_dimension: float
    knn: tuple[np.ndarray, np.ndarray] | None
    graph_method: str | None
    times: dict


def prepare_operators(
    params: Any,
    X: Any,
    *,
    adjacency: Any = None,
    need_graph: bool = True,
    kind: str = "dense",
    fewest_labels: int | None = None,
    knn: tuple[np.ndarray, np.ndarray] | None = None,
    labeled_idx: np.ndarray | None = None,
) -> Operators:
    """Kernel operator and Laplacian from an estimator's parameters.

    Parameters
    ----------
    params : FitParams or estimator
        Reads ``kernel``, ``gamma``, ``degree``, ``coef0``, ``kernel_params``,
        ``n_neighbors``, ``graph_weight``, ``normalize_laplacian``,
        ``laplacian_power``, ``verbose`` and the options ``heat_t``,
        ``graph_method``, ``graph_pca`` (:func:`~semisvm.models._options.resolved_options`).
    X : array-like, sparse matrix or dask array
    adjacency : array-like or sparse matrix, optional
        The user's graph instead of the kNN graph.
    need_graph : bool, default=True
    kind : {'dense', 'streamed', 'nystroem', 'fitc', 'blocks'}, default='dense'
        How K is held (see :mod:`semisvm.models._scale`).
    fewest_labels : int or None, default=None
        Labeled points of the class with the fewest (``laplacian_power="auto"``,
        :func:`resolve_laplacian_power`).
    knn : tuple of ndarray, optional
        The kNN lists of an earlier scalable search of the same X: reused.
    labeled_idx : ndarray of int, optional
        Rows that are Nyström landmarks whatever the draw (the labeled points).

    Returns
    -------
    Operators
    """
    verbose = getattr(params, "verbose", 0)
    name = getattr(params, "name", type(params).__name__)
    t0 = time.perf_counter()
    if verbose:
        print(f"[{name}] kernel: {X.shape[0]} points, {kind} operator ...", flush=True)
    if kind == "dense":
        K, g = prepare_kernel(params, X)
    else:
        K, g = build_scalable_kernel(params, X, kind, include=labeled_idx)
    t1 = time.perf_counter()
    if verbose:
        print(f"[{name}] kernel done in {t1 - t0:.2f} s", flush=True)
    L = None
    opts = resolved_options(params)
    scalable = (
        need_graph
        and adjacency is None
        and not is_distributed_array(X)
        and (
            kind != "dense"
            or opts.graph_method == "approx"
            or isinstance(opts.graph_pca, numbers.Integral)
        )
    )
    method = None
    if scalable:
        method = knn_method(opts.graph_method, X.shape[0])
        if knn is None:
            knn = scalable_knn(params, X)
    else:
        knn = None
    # the graph term's length normalization (knn_scale_ratio): 1 for a user graph
    # or a precomputed kernel, whose length scale is unknown
    scale = 1.0
    if need_graph:
        scale = graph_scale(
            X,
            params.kernel,
            params.n_neighbors,
            adjacency,
            knn_dist2=None if knn is None else knn[1],
        )
    weight = resolve_graph_weight(params.graph_weight, scale)
    power, dim = resolve_laplacian_power(
        params, X, adjacency, measure=need_graph, fewest_labels=fewest_labels
    )
    if verbose and need_graph and adjacency is None:
        print(
            f"[{name}] graph: {params.n_neighbors}-NN, {weight} weights "
            f"(graph_weight={params.graph_weight!r}); length ratio rho = "
            f"{scale:.3g} (graph term x rho^{power}); Laplacian power {power}"
            + (
                f" (laplacian_power='auto', intrinsic dimension {dim:.1f})"
                if isinstance(params.laplacian_power, str)
                else ""
            ),
            flush=True,
        )
    if need_graph and adjacency is None and is_distributed_array(X):
        adjacency, method = distributed_adjacency(params, X, K, g, weight=weight)
    elif knn is not None:
        adjacency = scalable_adjacency(params, X, knn=knn, weight=weight)
    if need_graph:
        L = build_laplacian(
            X,
            K,
            kernel=params.kernel,
            gamma_=g,
            n_neighbors=params.n_neighbors,
            graph_weight=weight,
            heat_t=opts.heat_t,
            normalize_laplacian=params.normalize_laplacian,
            laplacian_power=power,
            adjacency=adjacency,
        )
    t2 = time.perf_counter()
    if verbose and need_graph:
        print(f"[{name}] graph done in {t2 - t1:.2f} s", flush=True)
    return Operators(
        K=K,
        L=L,
        gamma_=g,
        graph_scale=scale,
        graph_weight=weight,
        laplacian_power=power,
        intrinsic_dimension=dim,
        knn=knn,
        graph_method=method,
        times={"kernel": t1 - t0, "graph": t2 - t1},
    )


def prepare_kernel(est: Any, X: Any) -> tuple[Any, float | None]:
    """K of the training points and the resolved width from ``est``'s parameters.

    Parameters
    ----------
    est : estimator
        Reads ``kernel``, ``gamma``, ``degree``, ``coef0``, ``kernel_params`` and
        ``n_neighbors`` (the ``'knn'`` width rule; the shared default when the
        estimator has no graph, as :class:`~semisvm.models._tsvm.ExactTSVM`).
    X : array-like, sparse matrix or dask array

    Returns
    -------
    K : ndarray (or a distributed operator for a dask array)
    gamma_ : float or None
        ``None`` for the linear, callable and precomputed kernels.
    """
    return build_kernel(
        X,
        kernel=est.kernel,
        gamma=est.gamma,
        degree=est.degree,
        coef0=est.coef0,
        kernel_params=est.kernel_params,
        n_neighbors=getattr(est, "n_neighbors", _defaults.N_NEIGHBORS),
    )


def prepare_graph(
    est: Any,
    X: Any,
    K: Any,
    gamma_: float | None,
    *,
    adjacency: Any = None,
    fewest_labels: int | None = None,
) -> tuple[Any, float, int, float]:
    """Laplacian of the training points from ``est``'s graph parameters.

    Parameters
    ----------
    est : estimator
        Reads ``kernel``, ``n_neighbors``, ``graph_weight``,
        ``normalize_laplacian``, ``laplacian_power`` and the option ``heat_t``
        (:func:`~semisvm.models._options.resolved_options`: the estimator's own
        parameter, its ``options``' value, or the default).
    X : array-like or sparse matrix
    K : ndarray
        The training Gram matrix (:func:`prepare_kernel`).
    gamma_ : float or None
        The resolved RBF width (the graph is read off K for the RBF kernel).
    adjacency : array-like or sparse matrix, optional
        The user's graph instead of the kNN graph.
    fewest_labels : int or None, default=None
        Labeled points of the class with the fewest (``laplacian_power="auto"``,
        :func:`resolve_laplacian_power`; None for an unsupervised fit).

    Returns
    -------
    L : Laplacian operator (``.tocsr()`` gives the matrix of :math:`L^p`)
    scale : float
        The graph term's length normalization rho (:func:`graph_scale`).
    power : int
        The Laplacian's resolved power (:func:`resolve_laplacian_power`).
    intrinsic_dimension : float
        The dimension measured for ``laplacian_power="auto"`` (``nan`` when not).
    """
    scale = graph_scale(X, est.kernel, est.n_neighbors, adjacency)
    power, dim = resolve_laplacian_power(est, X, adjacency, fewest_labels=fewest_labels)
    L = build_laplacian(
        X,
        K,
        kernel=est.kernel,
        gamma_=gamma_,
        n_neighbors=est.n_neighbors,
        graph_weight=resolve_graph_weight(est.graph_weight, scale),
        heat_t=resolved_options(est).heat_t,
        normalize_laplacian=est.normalize_laplacian,
        laplacian_power=power,
        adjacency=adjacency,
    )
    return L, scale, power, dim


@dataclass(frozen=True)
class FittedKernel:
    """A kernel with its resolved width: what :func:`prediction_kernel` reads.

    Estimators carry these attributes themselves; code without an estimator
    (the reproduction of the paper's experiments) passes one of these.
    """

    kernel: Any = "rbf"
    gamma_: float | None = None
    degree: int = 3
    coef0: float = 1.0
    kernel_params: dict | None = None


def prediction_centers(est: Any) -> Any:
    """The points a fitted model's kernel expansion runs over.

    The Nyström landmarks (``landmarks_``), else the support vectors
    (``support_vectors_``, :class:`~semisvm.models._tsvm.ExactTSVM`), else the
    training points (``X_fit_``).
    """
    for name in ("landmarks_", "support_vectors_", "X_fit_"):
        centers = getattr(est, name, None)
        if centers is not None:
            return centers
    raise AttributeError(f"{type(est).__name__} has no fitted training points.")


def prediction_kernel(
    est: Any, X: Any, Z: Any = "fit", *, dtype: Any = None
) -> np.ndarray:
    r""":math:`k(X, Z)` with the fitted kernel of ``est``: the one prediction kernel.

    Every ``decision_function`` (and every validation or test kernel) is
    computed through this function, so that prediction uses the kernel, width
    and parameters the model was fitted with.

    Parameters
    ----------
    est : fitted estimator or FittedKernel
        Reads ``kernel``, ``gamma_`` (``None``/NaN: unused by the kernel),
        ``degree``, ``coef0`` and ``kernel_params``.
    X : array-like or sparse matrix of shape (m, n_features)
        With ``kernel='precomputed'``: the (m, n_train) kernel, returned as it is.
    Z : array-like, None or 'fit', default='fit'
        ``'fit'``: the model's expansion points (:func:`prediction_centers`);
        ``None``: ``X`` itself (an exactly symmetric Gram matrix).
    dtype : dtype, default=None
        Output dtype (see :func:`semisvm.kernels.kernel_matrix`).

    Returns
    -------
    ndarray of shape (m, p)
    """
    if isinstance(est.kernel, str) and est.kernel == "precomputed":
        return X
    if isinstance(Z, str) and Z == "fit":
        Z = prediction_centers(est)
    return kernel_matrix(X, Z, dtype=dtype, **fitted_kernel_params(est))


def fitted_kernel_params(est: Any) -> dict[str, Any]:
    """The kernel arguments a fitted ``est`` predicts with (``kernel``, resolved
    ``gamma``, ``degree``, ``coef0``, ``kernel_params``): read here once for the
    in-process :func:`prediction_kernel` and the distributed product on a
    cluster's training points."""
    g = getattr(est, "gamma_", None)
    return dict(
        kernel=est.kernel,
        gamma=1.0 if g is None or not np.isfinite(g) else g,
        degree=est.degree,
        coef0=est.coef0,
        kernel_params=est.kernel_params,
    )


#: the graph-width rule and the count reading of the proportions run when the
#: data's intrinsic dimension is below this (planar data and curves)
MAX_DIMENSION = 3.0


def data_dimension(measured: float, X: Any, n_neighbors: int) -> float:
    """The intrinsic dimension the fit measured for ``laplacian_power="auto"``
    (``measured``), else measured here on the same fixed-size sample
    (:func:`semisvm.graph.intrinsic_dimension`); ``nan`` (the rule does not
    run) when the points have no dimension to measure."""
    from ..graph import intrinsic_dimension

    dim = float(measured)
    if np.isnan(dim):
        dim = intrinsic_dimension(X, n_neighbors)
    return dim


@dataclass(frozen=True)
class Problem:
    """Everything a fit's choices and solvers read, prepared once
    (:func:`prepare_problem`).

    Attributes
    ----------
    X : array-like, sparse matrix or dask array
        The training points (validated).
    y : ndarray of shape (n,)
        The labels as given (``-1`` unlabeled; held-out validation rows keep
        their labels here).
    targets : Targets
        The training labels encoded (validation rows held out as unlabeled).
    sample_weight : ndarray or None
        The ``class_weight`` loss weights.
    weight_sum : float
        Sum of the loss weights of the labeled points.
    kind : {'dense', 'streamed', 'nystroem', 'fitc', 'blocks'}
        The kernel operator (``kernel_operator_``).
    solver : str
        The resolved solver.
    early_stopping : str or None
        PCG's rule (``'auto'`` resolved; the components test comes later).
    ops : Operators
        K, L and what was resolved to build them.
    K_val, Y_val : validation kernel rows and targets, or None
    X_val, y_val : the validation data given to ``fit``, or None
    adjacency : the user's graph, or None
    cache : OperatorCache or None
        The operators and factorizations shared with other fits.
    operator_info : dict or None
        Why ``kind`` (``operator_selection_``: the request, the reason, with
        ``'auto'`` and PCG the predicted seconds of each operator).
    landmarks : LandmarkSpace or None
        The landmark space of a FITC or block K with L: its graph Gram, formed
        once, serves the selection, the coarse start and the preconditioner
        (:mod:`semisvm.solvers._landmarks`).
    """

    X: Any
    y: np.ndarray
    targets: Targets
    sample_weight: np.ndarray | None
    weight_sum: float
    kind: str
    solver: str
    early_stopping: str | None
    ops: Operators
    K_val: Any = None
    Y_val: Any = None
    X_val: Any = None
    y_val: Any = None
    adjacency: Any = None
    cache: Any = None
    operator_info: dict | None = None
    landmarks: LandmarkSpace | None = None


def needs_graph(params: Any) -> bool:
    """Whether the fit has a graph term (``gamma_i`` ``'auto'`` or positive)."""
    return isinstance(params.gamma_i, str) or float(params.gamma_i) > 0


def resolve_early_stopping(params: Any, solver: str) -> str | None:
    """PCG's early-stopping rule: ``'auto'`` is the stability rule with PCG and
    none with a direct solver; a rule with a direct solver is an error."""
    es = getattr(params, "early_stopping", None)
    if es == "auto":
        return "stability" if solver == "pcg" else None
    if es is not None and solver != "pcg":
        raise ValueError(
            f"early_stopping={es!r} applies to solver='pcg' only; solver="
            f"{solver!r} is a direct method that runs to its exact solution. Use "
            "early_stopping=None (or 'auto') with this solver."
        )
    return es


def choose_operator(
    params: Any,
    X: Any,
    solver: str,
    n_columns: int,
    adjacency: Any = None,
    cluster_operator: str | None = None,
) -> tuple[str, dict]:
    """The kernel operator of a fit (``kernel_operator_``) and why
    (``operator_selection_``), memory checked first
    (:func:`~semisvm.models._scale.resolve_operator`; on a dask array, the
    cluster plan's ``cluster_operator`` for ``'auto'``)."""
    from ..kernels._distributed import resolve_distributed_operator
    from ._scale import resolve_operator

    opts = resolved_options(params)
    if params.kernel == "precomputed" and opts.kernel_approximation in (
        "streamed",
        "nystroem",
        "fitc",
        "blocks",
    ):
        raise ValueError(
            f"kernel_approximation={opts.kernel_approximation!r} computes kernel "
            "values from the features; with kernel='precomputed' use 'dense' "
            "(or 'auto')."
        )
    requested = "dense" if params.kernel == "precomputed" else opts.kernel_approximation
    name = getattr(params, "name", type(params).__name__)
    if is_distributed_array(X):
        if requested == "auto" and cluster_operator is not None:
            requested = cluster_operator
        kind = resolve_distributed_operator(
            requested, n=X.shape[0], solver=solver, verbose=params.verbose, name=name
        )
        return kind, {
            "requested": requested,
            "chosen": kind,
            "reason": "dask array: the cluster plan's operator",
        }
    return resolve_operator(
        requested,
        n=X.shape[0],
        d=X.shape[1],
        n_columns=n_columns,
        itemsize=X.dtype.itemsize,
        n_neighbors=params.n_neighbors,
        n_components=opts.n_components,
        graph=opts.graph_method,
        need_graph=needs_graph(params) and adjacency is None,
        solver=solver,
        dense_only_solvers=("dual",),
        verbose=params.verbose,
        name=name,
        block_size=opts.block_size,
    )


def validation_split(
    y: np.ndarray, labeled: np.ndarray, fraction: float, random_state: Any
) -> tuple[np.ndarray, np.ndarray]:
    """Hold out ``fraction`` of the labeled points (at least one per class
    stays for training): the training labels and the held-out rows."""
    from sklearn.utils import check_random_state

    from .._validation import resolve_seed

    rng = check_random_state(resolve_seed(random_state))
    lab_idx = np.flatnonzero(labeled)
    yl = y[lab_idx]
    val = []
    for c in np.unique(yl):
        idx = lab_idx[yl == c]
        k = int(np.floor(fraction * idx.size))
        if idx.size - k < 1:
            k = idx.size - 1
        if k > 0:
            val.extend(rng.choice(idx, size=k, replace=False))
    if not val:
        raise ValueError(
            "validation_fraction leaves no labeled point for validation: each class"
            " needs at least two labeled points, or pass X_val and y_val to fit."
        )
    val_idx = np.sort(np.asarray(val))
    y_train = y.copy()
    y_train[val_idx] = -1
    return y_train, val_idx


def sample_weights(
    y: np.ndarray, labeled: np.ndarray, classes: np.ndarray, class_weight: Any
) -> np.ndarray | None:
    """The loss weights of ``class_weight`` (:func:`~semisvm.models._adaptive.label_weights`)."""
    from ._adaptive import label_weights

    y_enc = np.zeros(y.shape[0], dtype=np.intp)
    y_enc[labeled] = np.searchsorted(classes, y[labeled])
    return label_weights(y_enc, labeled, classes, class_weight)


def fitted_kernel(params: Any, gamma_: float | None) -> FittedKernel:
    """The kernel of ``params`` at the resolved width ``gamma_``."""
    return FittedKernel(
        kernel=params.kernel,
        gamma_=gamma_,
        degree=params.degree,
        coef0=params.coef0,
        kernel_params=params.kernel_params,
    )


def kernel_columns(params: Any, X: Any, K: Any, gamma_: float | None) -> Any:
    """``idx -> K[:, idx]`` as float64, for the leave-one-out features."""
    from ..kernels._distributed import DistributedKernelColumns

    fitted = fitted_kernel(params, gamma_)
    if isinstance(K, np.ndarray):
        return lambda idx: np.asarray(K[:, idx], dtype=np.float64)
    if is_distributed_array(X):
        # the same columns as in process, read or computed on the workers
        if hasattr(K, "columns"):
            return K.columns
        return DistributedKernelColumns(X, **fitted_kernel_params(fitted))

    def columns(idx: np.ndarray) -> np.ndarray:
        return np.asarray(prediction_kernel(fitted, X, X[idx]), dtype=np.float64)

    factor = nystroem_factor(K)
    rows = getattr(factor, "landmark_indices_", None)
    if rows is not None and _same_kernel(factor, fitted):
        return FactorColumns(factor.C_, rows, columns)
    return columns


def _same_kernel(factor: Any, fitted: FittedKernel) -> bool:
    """Whether a Nyström factor's ``C = k(X, Z)`` is in the fitted kernel."""
    if factor is None or not hasattr(factor, "C_") or callable(fitted.kernel):
        return False
    return bool(
        factor.kernel == fitted.kernel
        and factor.gamma == fitted.gamma_
        and factor.degree == fitted.degree
        and factor.coef0 == fitted.coef0
        and not factor.kernel_params
        and not fitted.kernel_params
    )


class FactorColumns:
    r"""Exact kernel columns ``idx -> K[:, idx]`` (float64), read from a
    Nyström factor's :math:`C = k(X, Z)` where a column is one of its landmark
    rows and computed (``compute``) elsewhere.

    ``preferred`` names those rows: the leave-one-out features draw their
    landmarks among them (:func:`semisvm.solvers._loo.loo_features`; a uniform
    subset of a uniform draw is a uniform draw), so that the selection reads its
    kernel columns instead of computing them (n r d flops: 2 s at 100,000 x 784).
    """

    def __init__(self, C: np.ndarray, rows: np.ndarray, compute: Any) -> None:
        self.C = C
        self.preferred = np.asarray(rows, dtype=np.intp)
        self._compute = compute
        self._position = np.full(C.shape[0], -1, dtype=np.intp)
        self._position[self.preferred] = np.arange(self.preferred.size)

    def __call__(self, idx: Any) -> np.ndarray:
        idx = np.asarray(idx, dtype=np.intp)
        pos = self._position[idx]
        have = pos >= 0
        if not have.any():
            return self._compute(idx)
        n = self.C.shape[0]
        out = np.empty((n, idx.size))
        cols, read = pos[have], np.flatnonzero(have)
        step = 2048  # row blocks: a gather of a few MB at a time
        for s in range(0, n, step):
            block = np.take(self.C[s : s + step], cols, axis=1)
            if read.size == idx.size:
                out[s : s + step] = block
            else:
                out[s : s + step, read] = block
        if not have.all():
            out[:, ~have] = self._compute(idx[~have])
        return out


def prepare_problem(
    X: Any,
    y: np.ndarray,
    params: Any,
    *,
    adjacency: Any = None,
    X_val: Any = None,
    y_val: Any = None,
    cache: Any = None,
    knn: tuple[np.ndarray, np.ndarray] | None = None,
    cluster_operator: str | None = None,
) -> Problem:
    """The problem a fit solves: targets, weights, operator, K, L, validation rows.

    A pure function of validated data and a :class:`~semisvm.models._params.FitParams`:
    it reads no estimator and writes nothing.

    Parameters
    ----------
    X : array-like, sparse matrix or dask array
        Validated training points.
    y : ndarray of shape (n,)
        Labels, ``-1`` unlabeled.
    params : FitParams
    adjacency : array-like or sparse matrix, optional
        The user's graph instead of the kNN graph.
    X_val, y_val : validated validation data, optional
    cache : OperatorCache, optional
        Operators built by an earlier fit on the same X (and its shared
        factorizations): used where they match, filled where they do not.
    knn : tuple of ndarray, optional
        The kNN lists of an earlier scalable search of the same X.
    cluster_operator : str, optional
        The operator the cluster plan chose for a dask array.

    Returns
    -------
    Problem
    """
    from ._solve import resolve_solver

    solver = resolve_solver(params, X.shape[0])
    t = encode_targets(y)
    kind, kind_info = choose_operator(
        params, X, solver, t.Y.shape[1], adjacency, cluster_operator=cluster_operator
    )
    es = resolve_early_stopping(params, solver)
    if kind == "nystroem":
        es = None
    val_idx = None
    if es in ("validation", "mixed") and X_val is None:
        fraction = params.options.validation_fraction
        if fraction is None:
            raise ValueError(
                f"early_stopping={es!r} needs validation data: pass X_val and "
                "y_val to fit, or set options=SolverOptions("
                "validation_fraction=...) to hold out part of the labeled "
                "points."
            )
        y_tr, val_idx = validation_split(y, t.labeled, fraction, params.random_state)
        t = encode_targets(y_tr)
    need_graph = needs_graph(params)
    ops = _operators(params, X, adjacency, need_graph, kind, t, cache, knn)
    sw = sample_weights(y, t.labeled, t.classes, params.class_weight)
    wsum = float(t.labeled.sum() if sw is None else sw[t.labeled].sum())
    K_val = Y_val = None
    if es in ("validation", "mixed") or X_val is not None:
        K_val, Y_val = _validation_rows(
            params, X, y, ops, kind, t.classes, val_idx, X_val, y_val
        )
    return Problem(
        X=X,
        y=y,
        targets=t,
        sample_weight=sw,
        weight_sum=wsum,
        kind=kind,
        solver=solver,
        early_stopping=es,
        ops=ops,
        operator_info=kind_info,
        K_val=K_val,
        Y_val=Y_val,
        X_val=X_val,
        y_val=y_val,
        adjacency=adjacency,
        cache=cache,
        landmarks=landmark_space(ops.K, ops.L),
    )


def _operators(params, X, adjacency, need_graph, kind, t, cache, knn) -> Operators:
    """The cache's operators when it holds this fit's, else built (and cached)."""
    shared = cache is not None and adjacency is None and kind == "dense"
    if shared:
        hit = cache.get(params, X, need_graph, t.fewest_labels)
        if hit is not None:
            K, L, g, scale, weight, power, dim = hit
            return Operators(
                K,
                L,
                g,
                scale,
                weight,
                power,
                dim,
                None,
                None,
                {"kernel": 0.0, "graph": 0.0},
            )
    ops = prepare_operators(
        params,
        X,
        adjacency=adjacency,
        need_graph=need_graph,
        kind=kind,
        fewest_labels=t.fewest_labels,
        knn=knn,
        labeled_idx=t.labeled_idx,
    )
    if shared:
        cache.put(
            params,
            X,
            need_graph,
            (
                ops.K,
                ops.L,
                ops.gamma_,
                ops.graph_scale,
                ops.graph_weight,
                ops.laplacian_power,
                ops.intrinsic_dimension,
            ),
        )
    return ops


def _validation_rows(params, X, y, ops, kind, classes, val_idx, X_val, y_val):
    """Kernel rows and targets of the validation points: the held-out labeled
    points ``val_idx``, else ``(X_val, y_val)``."""
    if val_idx is not None:
        K = ops.K
        K_val = (
            K.rows(val_idx) if kind in ("streamed", "fitc", "blocks") else K[val_idx]
        )
        yv = np.asarray(y)[val_idx]
    else:
        if y_val is None:
            raise ValueError("X_val was given without y_val.")
        yv = np.asarray(y_val)
        if yv.shape[0] != X_val.shape[0]:
            raise ValueError(
                f"X_val has {X_val.shape[0]} rows but y_val has {yv.shape[0]}."
            )
        if params.kernel == "precomputed":
            K_val = np.asarray(X_val)
        elif kind in (
            "fitc",
            "blocks",
        ):  # as predict sees them (kernels._fitc, _blocks)
            K_val = ops.K.cross(X_val)
        else:
            K_val = prediction_kernel(fitted_kernel(params, ops.gamma_), X_val, X)
    try:
        return K_val, one_vs_rest(yv, classes)
    except ValueError as exc:
        raise ValueError(f"y_val: {exc}") from None
