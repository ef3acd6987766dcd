"""Library-wide settings: :func:`get_config`, :func:`set_config`, :func:`config_context`.

One setting today, ``blas_threads``: whether the library limits the threads of
its own BLAS calls.

* ``None`` (default): the library never changes the BLAS threads; the BLAS
  default, the ``OMP_NUM_THREADS`` / ``OPENBLAS_NUM_THREADS`` variables and any
  ``threadpoolctl.threadpool_limits`` of the caller apply to every call.
* ``"auto"``: the one-thread policy for a machine shared with other jobs: the
  library runs on one BLAS thread its products with a dense matrix of 8 MB to
  2 GB, the ``"auto"`` selection and the ``*CV`` searches (thousands of small
  solves), the small factorizations of the preconditioners and the Nyström
  factor, the streamed kernel tiles, and leaves every other call to the BLAS
  default (docs: *Scaling*, "Threads"; measurements: docs/rules.rst).

The environment variable ``SEMISVM_BLAS_THREADS`` (``none`` or ``auto``) sets
the default at import.  The setting is process-wide (not per thread), so that
the threads of an in-process Dask cluster see it too; worker processes (a
``LocalCluster`` with processes, other machines) read their own
``SEMISVM_BLAS_THREADS``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["get_config", "set_config", "config_context"]

_BLAS_THREADS_VALUES = ("auto", None)


def _from_env() -> str | None:
    raw = os.environ.get("SEMISVM_BLAS_THREADS", "none").strip().lower()
    if raw == "auto":
        return "auto"
    if raw in ("none", ""):
        return None
    raise ValueError(f"SEMISVM_BLAS_THREADS must be 'auto' or 'none', got {raw!r}.")


_CONFIG: dict[str, Any] = {"blas_threads": _from_env()}


def get_config() -> dict[str, Any]:
    """The current settings (a copy): ``{'blas_threads': None or 'auto'}``."""
    return dict(_CONFIG)


def _check_blas_threads(value: Any) -> None:
    if value not in _BLAS_THREADS_VALUES:
        raise ValueError(
            f"blas_threads must be 'auto' (the library's one-thread policy) or None "
            f"(never limit the BLAS threads), got {value!r}."
        )


_UNSET = object()


def set_config(*, blas_threads: Any = _UNSET) -> None:
    """Change the settings for the rest of the process.

    Parameters
    ----------
    blas_threads : {None, 'auto'}
        ``None`` (default): the library never limits the BLAS threads;
        ``'auto'``: its one-thread policy for shared machines (module docstring).
    """
    if blas_threads is not _UNSET:
        _check_blas_threads(blas_threads)
        _CONFIG["blas_threads"] = blas_threads


@contextmanager
def config_context(*, blas_threads: Any = _UNSET) -> Iterator[None]:
    """Settings inside a ``with`` block only (restored on exit, errors included).

    Examples
    --------
    >>> import semisvm
    >>> with semisvm.config_context(blas_threads="auto"):
    ...     semisvm.get_config()["blas_threads"]
    'auto'
    >>> semisvm.get_config()["blas_threads"] is None
    True
    """
    old = get_config()
    set_config(blas_threads=blas_threads)
    try:
        yield
    finally:
        _CONFIG.update(old)


def blas_limits_enabled() -> bool:
    """Whether the library may limit its BLAS threads (``blas_threads='auto'``)."""
    return _CONFIG["blas_threads"] == "auto"
