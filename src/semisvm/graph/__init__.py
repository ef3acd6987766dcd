"""Neighbourhood graphs and graph Laplacians."""

from ._dimension import auto_laplacian_power, intrinsic_dimension
from ._graph import (
    HEAT_SCALE_RATIO,
    check_adjacency,
    graph_laplacian,
    heat_width,
    knn_graph,
    knn_graph_from_kernel,
    resolve_graph_weight,
)
from ._power import LaplacianPower

__all__ = [
    "HEAT_SCALE_RATIO",
    "resolve_graph_weight",
    "LaplacianPower",
    "auto_laplacian_power",
    "intrinsic_dimension",
    "check_adjacency",
    "graph_laplacian",
    "heat_width",
    "knn_graph",
    "knn_graph_from_kernel",
]
