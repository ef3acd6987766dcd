"""Neighbourhood graphs and graph Laplacians."""

from ._graph import check_adjacency, graph_laplacian, knn_graph, knn_graph_from_kernel
from ._power import LaplacianPower

__all__ = [
    "LaplacianPower",
    "check_adjacency",
    "graph_laplacian",
    "knn_graph",
    "knn_graph_from_kernel",
]
