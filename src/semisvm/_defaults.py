"""One set of defaults shared by every estimator.

Each estimator's ``__init__`` takes its default values from here, so that a
parameter with the same name has the same default (and meaning) everywhere:
``LapSVM``, ``LapRLS``, ``LapSVC``, ``SemiSupervisedKernel``, ``LapSVMPath``
and ``ExactTSVM`` (for the parameters it has).  Change a default here, not in
an estimator.

Meaning of the shared parameters:

* ``gamma``: RBF/poly parameter, :math:`k(x, z) = \\exp(-\\gamma\\|x - z\\|^2)`;
  ``"knn"`` (default, ``ExactTSVM`` included) sets :math:`1/(2\\gamma)` to the mean squared distance to the
  ``n_neighbors``-th neighbour; ``"median"`` sets :math:`1/\\gamma` to the median squared distance between
  points (``"scale"``: scikit-learn's ``1 / (n_features X.var())``).
* ``n_neighbors``: neighbours of the symmetric kNN graph over all points (itself
  excluded); must be smaller than ``n_samples``.
* ``graph_weight``, ``heat_t``: binary, heat, self-tuning (``'local'``) or
  ``'auto'`` weights of the graph.
* ``normalize_laplacian``: ``True`` uses :math:`I - D^{-1/2} W D^{-1/2}`,
  ``False`` :math:`D - W`.
* ``laplacian_power``: the Laplacian is raised to this integer power;
  ``"auto"`` (default) picks it from the data's intrinsic dimension.
* ``gamma_a``, ``gamma_i``: ambient and intrinsic regularization weights
  :math:`\\gamma_A \\|f\\|_K^2 + \\gamma_I \\mathbf f^T L \\mathbf f`.  Every
  estimator that takes them (``LapSVM``, ``LapRLS``, ``LapSVC``,
  ``SemiSupervisedKernel``) reads them as *normalized* weights by default (loss
  averaged over the labels, graph term divided by :math:`n \\bar d^p`);
  ``regularization="paper"`` (an option of ``LapSVM``/``LapRLS``, a parameter of
  ``LapSVC``/``SemiSupervisedKernel``) gives the raw weights.  ``LapSVMPath``
  has no ``gamma_a``: it follows the raw :math:`\\lambda` path at a fixed ratio
  ``rho``.
"""

from __future__ import annotations

__all__ = [
    "GAMMA",
    "GAMMA_A",
    "GAMMA_I",
    "GRAPH_WEIGHT",
    "LAPLACIAN_POWER",
    "N_NEIGHBORS",
    "NORMALIZE_LAPLACIAN",
]

#: RBF/poly kernel parameter rule (``"knn"``: sigma^2 = mean squared distance to the
#: ``n_neighbors``-th neighbour, see :func:`semisvm.kernels.knn_gamma`).
GAMMA = "knn"
#: Neighbours of the kNN graph.
N_NEIGHBORS = 10
#: Edge weights of the kNN graph (``"auto"``: self-tuning ``"local"`` weights, heat
#: weights where the graph resolves the density finer than a 2,000-point sample; see
#: :func:`semisvm.models._problem.resolve_graph_weight`).
GRAPH_WEIGHT = "auto"
#: Normalized graph Laplacian (False: L = D - W).
NORMALIZE_LAPLACIAN = False
#: Power of the graph Laplacian (``"auto"``: from the data's intrinsic dimension,
#: see :mod:`semisvm.graph._dimension`).
LAPLACIAN_POWER = "auto"
#: Ambient regularization gamma_A (LapSVM / LapRLS / LapSVC / SemiSupervisedKernel).
GAMMA_A = 1e-6
#: Intrinsic regularization gamma_I (LapSVM / LapRLS / LapSVC / SemiSupervisedKernel).
GAMMA_I = 1.0
