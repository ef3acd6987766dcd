r"""The ``"auto"`` early stop and graph components without labels.

The stability rule (:mod:`semisvm.solvers._early_stopping`; Melacci & Belkin
2011, Sec. 4.1) stops PCG when the predicted labels of the unlabeled points have
stopped changing.  Its premise is that the labels' information reaches the
unlabeled points through the graph term, one hop per iteration, so that once the
labels of U are stable the information has arrived.

**A component of the graph that holds no labeled point breaks that premise.**
Let :math:`C` be such a component and :math:`v_C` the null vector of the
Laplacian supported on it (:math:`1_C` for :math:`D - W`,
:math:`D^{1/2} 1_C` for the normalized :math:`I - D^{-1/2} W D^{-1/2}`;
:math:`L v_C = 0` because no edge leaves C, and so for every power of L).  The
graph term :math:`f^T L f` does not change when :math:`f` moves along
:math:`v_C`, and no loss term sees the points of C.  So the outputs on C along
that direction are set by the ambient term
:math:`\gamma_A \|f\|_K^2` alone: the curvature of the objective along it is of
order :math:`\gamma_A` (1e-6 for the graph-trusting defaults) against
:math:`\gamma_I` along the graph's other directions, and these are the
directions a Krylov method resolves last.  Until then the outputs on C sit near
the start's (near zero, where the class-mass balance, not the model, picks
their labels) and do not move: a plateau that the stability rule reads as
convergence, far from the optimum (measurements: docs/rules.rst).

Hence ``early_stopping="auto"`` means the stability rule only when every
connected component of the graph holds a labeled point; otherwise PCG runs to
``tol`` (the exact model).  An explicit ``early_stopping="stability"`` is kept.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def unlabeled_components(L: Any, labeled: np.ndarray) -> tuple[int, int] | None:
    """``(components, components without a labeled point)`` of the graph behind
    the Laplacian ``L`` (its base for a power: the same components), or None
    when ``L`` is not a sparse matrix of the training points (an operator, a
    distributed graph) or there is no graph.

    Components are those of the undirected graph of the off-diagonal nonzeros of
    ``L`` (:func:`scipy.sparse.csgraph.connected_components`, O(nnz)).
    """
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    base = getattr(L, "base", L)
    labeled = np.asarray(labeled, dtype=bool)
    if base is None or not sp.issparse(base) or base.shape[0] != labeled.size:
        return None
    n_comp, comp = connected_components(base, directed=False)
    if n_comp == 1:
        return 1, 0
    return int(n_comp), int(n_comp - np.unique(comp[labeled]).size)


def unreachable_points(L: Any, labeled: np.ndarray) -> np.ndarray | None:
    """Indices of the training points in components of the graph behind ``L``
    that hold no labeled point: no label reaches them through the graph, so
    their outputs are set by the ambient term and the bias (module docstring).
    None when ``L`` is not a sparse matrix of the training points."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    base = getattr(L, "base", L)
    labeled = np.asarray(labeled, dtype=bool)
    if base is None or not sp.issparse(base) or base.shape[0] != labeled.size:
        return None
    n_comp, comp = connected_components(base, directed=False)
    if n_comp == 1:
        return np.zeros(0, dtype=np.intp)
    reached = np.zeros(n_comp, dtype=bool)
    reached[comp[labeled]] = True
    return np.flatnonzero(~reached[comp])


#: a regular expression matching :func:`unreachable_message` (for filters)
UNREACHABLE_PATTERN = r".*graph components that hold no labeled point"


def unreachable_message(name: str, n_points: int, n_train: int) -> str:
    """The warning of a fit whose graph leaves ``n_points`` points unreached."""
    one = n_points == 1
    return (
        f"{name}: {n_points} of the {n_train} training points "
        f"{'lies' if one else 'lie'} in graph components that hold no labeled "
        f"point; the graph cannot carry a label to {'it' if one else 'them'}, so "
        f"{'its label is' if one else 'their labels are'} decided by the kernel's "
        "extension of the labeled points and the bias (the ambient term), not by "
        "the graph. The indices are in unreachable_. Label a point there, or "
        "connect the graph with a larger n_neighbors."
    )


def auto_early_stopping(
    params: Any, es: str | None, L: Any, labeled: np.ndarray
) -> tuple[str | None, dict | None]:
    """The early-stopping rule to run, and the graph's component counts.

    ``es`` unless the user left ``early_stopping="auto"``, the rule is
    ``"stability"`` and some component of the graph holds no labeled point
    (module docstring), then None.  The counts (``graph_components_``) are
    ``{"n_components", "n_unlabeled"}`` when measured, else None.
    """
    if es != "stability" or getattr(params, "early_stopping", None) != "auto":
        return es, None
    counts = unlabeled_components(L, labeled)
    if counts is None:
        return es, None
    info = {"n_components": counts[0], "n_unlabeled": counts[1]}
    if counts[1] == 0:
        return es, info
    if getattr(params, "verbose", 0):
        print(
            f"[{params.name}] early stop off: {counts[1]} of the graph's "
            f"{counts[0]} connected components hold no labeled point (their outputs "
            "are set by the ambient term alone, which PCG resolves last); PCG runs "
            "to tol"
        )
    return None, info
