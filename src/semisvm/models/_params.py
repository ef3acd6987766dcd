"""The parameters of one fit, read once from the estimator.

``fit`` turns the estimator's constructor parameters and its resolved
:class:`~semisvm.SolverOptions` into one read-only :class:`FitParams`; every
step of the fit path (problem preparation, the automatic choices, the solvers'
calls) reads its settings from it and never from, or onto, the estimator.
"""

from __future__ import annotations

from typing import Any

from ._options import resolved_options

__all__ = ["FitParams", "fit_params"]


class FitParams:
    """Read-only view of an estimator's parameters for one fit.

    Attribute access returns the constructor parameter of that name
    (``params.kernel``, ``params.gamma``, ...), ``options`` is the resolved
    :class:`~semisvm.SolverOptions`; ``name`` is the estimator's class name
    (for messages) and ``objective`` the loss its solvers minimise
    (``'squared'`` or ``'squared_hinge'``).  A missing parameter raises
    ``AttributeError``, so ``getattr(params, "loss", default)`` works for
    estimators without it.
    """

    __slots__ = ("_values",)

    def __init__(self, values: dict[str, Any]) -> None:
        object.__setattr__(self, "_values", dict(values))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "_values":
            raise AttributeError(name)
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(name) from None

    def __reduce__(self) -> tuple:
        return (FitParams, (self._values,))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("FitParams is read-only; use replace(...)")

    def get_params(self, deep: bool = False) -> dict[str, Any]:
        """The constructor parameters (``options`` resolved)."""
        return {k: v for k, v in self._values.items() if k not in ("name", "objective")}

    def replace(self, **changes: Any) -> FitParams:
        """A copy with ``changes``; ``options__name=value`` changes one option."""
        values = dict(self._values)
        opt = {k[9:]: v for k, v in changes.items() if k.startswith("options__")}
        if opt:
            values["options"] = values["options"].replace(**opt)
        values.update(
            {k: v for k, v in changes.items() if not k.startswith("options__")}
        )
        return FitParams(values)

    def __repr__(self) -> str:
        return f"FitParams({self._values!r})"


def fit_params(est: Any) -> FitParams:
    """The :class:`FitParams` of ``est`` (parameters as given, options resolved)."""
    values = est.get_params(deep=False)
    values["options"] = resolved_options(est)
    values["name"] = type(est).__name__
    values["objective"] = getattr(est, "_loss", "squared_hinge")
    return FitParams(values)
