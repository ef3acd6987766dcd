"""scikit-learn estimators."""

from ._lapsvm import LapRLS, LapSVM

__all__ = ["LapRLS", "LapSVM"]
