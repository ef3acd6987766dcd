"""Neighbourhood graphs and graph Laplacians."""

from ._graph import (
    HEAT_SCALE_RATIO,
    check_adjacency,
    graph_laplacian,
    knn_graph,
    knn_graph_from_kernel,
    resolve_graph_weight,
)
from ._power import LaplacianPower

__all__ = [
    "HEAT_SCALE_RATIO",
    "resolve_graph_weight",
    "LaplacianPower",
    "check_adjacency",
    "graph_laplacian",
    "knn_graph",
    "knn_graph_from_kernel",
]
