"""Model selection for semi-supervised data (``y == -1`` marks unlabeled points).

- :class:`LapSVMCV`, :class:`LapRLSCV`: the estimators with their weights, kernel
  width and graph size chosen by cross-validation on the labeled points (every
  fold a fit of the plain estimator, one kernel and graph shared by all folds
  and weights);
- :class:`LabeledKFold`, :class:`LabeledStratifiedKFold`: splitters for
  scikit-learn's ``GridSearchCV`` / ``cross_validate`` that fold over the labeled
  points and keep every unlabeled point in every training set;
- :func:`labeled_scorer`, :func:`make_labeled_scorer`: scorers that ignore the
  unlabeled rows.
"""

from ._calibration import LabeledCalibratedClassifierCV
from ._scorer import LabeledScorer, labeled_mask, labeled_scorer, make_labeled_scorer
from ._search import LapRLSCV, LapSVMCV
from ._split import LabeledKFold, LabeledStratifiedKFold

__all__ = [
    "LabeledCalibratedClassifierCV",
    "LabeledKFold",
    "LabeledScorer",
    "LabeledStratifiedKFold",
    "LapRLSCV",
    "LapSVMCV",
    "labeled_mask",
    "labeled_scorer",
    "make_labeled_scorer",
]
