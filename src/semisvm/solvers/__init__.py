"""Solvers: plain functions over arrays and operators.

Every solver takes the Gram matrix (or an operator with ``@``), the targets and
the regularisation weights, and returns a small result object derived from
:class:`SolverResult` (one stop-reason field, ``reason``, in the vocabulary of
:data:`STOP_REASONS`); estimators in :mod:`semisvm.models` validate input, call
these and store the fitted state.

Target convention
-----------------
Every numeric solver function (:func:`lapsvm_pcg`, :func:`lapsvm_newton`,
:func:`laprls_direct`, :func:`lapsvm_dual`, :func:`lapsvm_path`,
:func:`l2svm_primal`, the low-rank and TSVM solvers) takes the targets as one
matrix, checked in one place (:func:`semisvm.solvers._targets.as_targets`)

``Y`` : ndarray of shape (n, C), entries in {-1, 0, +1}
    Row i is training point i (the rows of K); column c is one binary
    (one-vs-rest) problem; +1 / -1 is the class of a labeled point in that
    problem and **0 marks an unlabeled point**.  A 1-D array of length n is one
    column (C = 1); :func:`l2svm_primal` solves one column (there a 0 marks a
    point that is not in the problem).

So -1 always means "negative class" here, never "unlabeled": the estimators'
class labels (scikit-learn's convention, -1 for unlabeled points) are encoded
once, by :func:`semisvm.models._problem.encode_targets`, before any solver sees
them.  Entries other than -1, 0, +1 raise a ``ValueError``.

Tolerances
----------
Every epsilon of the solvers is named in one table per dtype,
:data:`semisvm.solvers._tolerances.TOLERANCES`.
"""

from ._dual import lapsvm_dual, lapsvm_dual_objective
from ._l2svm import l2svm_primal
from ._linesearch import exact_line_search
from ._newton import laprls_direct, lapsvm_newton
from ._objective import primal_objective
from ._path import LapSVMPathResult, PathWarning, lapsvm_path, translating_matrix
from ._pcg import lapsvm_pcg
from ._result import STOP_REASONS, SolveResult, SolverResult
from ._tsvm import TSVMResult, tsvm_branch_and_bound, tsvm_randomized

__all__ = [
    "LapSVMPathResult",
    "PathWarning",
    "STOP_REASONS",
    "SolveResult",
    "SolverResult",
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
