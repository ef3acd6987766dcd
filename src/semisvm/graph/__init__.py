"""Neighbourhood graphs and graph Laplacians."""

from ._graph import check_adjacency, graph_laplacian, knn_graph, knn_graph_from_kernel

__all__ = ["check_adjacency", "graph_laplacian", "knn_graph", "knn_graph_from_kernel"]
