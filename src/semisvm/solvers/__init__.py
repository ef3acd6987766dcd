"""Solvers: plain functions over arrays and operators.

Every solver takes the Gram matrix (or an operator with ``@``), the targets and
the regularisation weights, and returns a small result object; estimators in
:mod:`semisvm.models` validate input, call these and store the fitted state.
"""

from ._dual import lapsvm_dual, lapsvm_dual_objective
from ._l2svm import l2svm_primal
from ._linesearch import exact_line_search
from ._newton import laprls_direct, lapsvm_newton
from ._objective import primal_objective
from ._path import LapSVMPathResult, PathWarning, lapsvm_path, translating_matrix
from ._pcg import lapsvm_pcg
from ._result import SolveResult
from ._tsvm import TSVMResult, tsvm_branch_and_bound, tsvm_randomized

__all__ = [
    "LapSVMPathResult",
    "PathWarning",
    "SolveResult",
    "TSVMResult",
    "l2svm_primal",
    "tsvm_branch_and_bound",
    "tsvm_randomized",
    "exact_line_search",
    "laprls_direct",
    "lapsvm_dual",
    "lapsvm_dual_objective",
    "lapsvm_newton",
    "lapsvm_path",
    "lapsvm_pcg",
    "primal_objective",
    "translating_matrix",
]
