"""Kernels and the operator interface the solvers use."""

from ._blocks import BlockResidualOperator, kmeans_blocks
from ._deformed import deformed_gram
from ._fitc import FITCOperator, kernel_diagonal
from ._kernels import (
    KERNELS,
    check_memory,
    kernel_matrix,
    knn_gamma,
    knn_scale_ratio,
    median_gamma,
    resolve_gamma,
    row_norms_sq,
)
from ._nystroem import LANDMARK_METHODS, LowRankOperator, NystroemFactor
from ._operators import (
    DenseKernelOperator,
    SparseOperator,
    SymmetricOperator,
    as_operator,
)
from ._streamed import StreamedKernelOperator

__all__ = [
    "BlockResidualOperator",
    "kmeans_blocks",
    "deformed_gram",
    "FITCOperator",
    "kernel_diagonal",
    "KERNELS",
    "check_memory",
    "kernel_matrix",
    "knn_gamma",
    "knn_scale_ratio",
    "median_gamma",
    "resolve_gamma",
    "row_norms_sq",
    "DenseKernelOperator",
    "SparseOperator",
    "SymmetricOperator",
    "as_operator",
    "LANDMARK_METHODS",
    "LowRankOperator",
    "NystroemFactor",
    "StreamedKernelOperator",
]
