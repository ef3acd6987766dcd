"""Shared helpers of the benchmark scripts (not part of the package).

Machine and library description, median timing, peak memory, results files, and
the data sets (a synthetic digits-like mixture and the full USPS set).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
DEFAULT_DATA = HERE.parent.parent / "shared" / "data"


def data_dir(arg: str | None = None) -> Path:
    """Data folder: the ``--data`` flag, else ``$SEMISVM_DATA``, else ../shared/data."""
    return Path(arg or os.environ.get("SEMISVM_DATA") or DEFAULT_DATA)


def cpu_model() -> str:
    """CPU model name from /proc/cpuinfo (``platform.processor()`` elsewhere)."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:  # pragma: no cover - non-Linux
        pass
    return platform.processor() or "unknown"


def mem_total_gib() -> float:
    """Total memory in GiB from /proc/meminfo."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) / 2**20
    except OSError:  # pragma: no cover
        pass
    return float("nan")


def blas_info() -> list[str]:
    """One line per BLAS library loaded (numpy's and scipy's may differ)."""
    import scipy.linalg  # noqa: F401 - loads scipy's BLAS
    from threadpoolctl import threadpool_info

    out = []
    for lib in threadpool_info():
        if lib.get("user_api") != "blas":
            continue
        out.append(
            f"{lib.get('internal_api')} {lib.get('version')} "
            f"({Path(lib.get('filepath', '')).name}, kernel {lib.get('architecture')}, "
            f"{lib.get('num_threads')} threads)"
        )
    return out


def machine_description() -> dict[str, Any]:
    """Everything a results row needs to be read later."""
    import scipy
    import sklearn

    try:
        load = os.getloadavg()
    except OSError:  # pragma: no cover
        load = (float("nan"),) * 3
    env = {
        k: os.environ[k]
        for k in (
            "OPENBLAS_CORETYPE",
            "OPENBLAS_L2_SIZE",
            "OMP_NUM_THREADS",
            "OPENBLAS_NUM_THREADS",
        )
        if k in os.environ
    }
    return {
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "memory_gib": round(mem_total_gib(), 1),
        "load_avg_1m_at_start": round(load[0], 2),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "sklearn": sklearn.__version__,
        "blas": blas_info(),
        "blas_env": env or "none set",
        "commit": _git_commit(),
    }


def _git_commit() -> str:
    try:
        return (
            subprocess.run(
                ["git", "rev-parse", "--short", "HEAD"],
                cwd=HERE,
                capture_output=True,
                text=True,
                check=False,
            ).stdout.strip()
            or "unknown"
        )
    except OSError:  # pragma: no cover
        return "unknown"


def timeit(fn: Callable[[], Any], repeat: int = 5) -> tuple[float, Any]:
    """Median wall time of ``repeat`` calls of ``fn`` and the last result."""
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out


def interleaved(fns: dict[str, Callable[[], Any]], repeat: int = 5) -> dict[str, float]:
    """Median times of several functions run in turn, ``repeat`` rounds.

    Running them in alternation keeps a ratio between them honest on a machine
    whose load changes during the run (other processes share the cores).
    """
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeat):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    return {k: float(np.median(v)) for k, v in times.items()}


def touch_memory(gib: float) -> float:
    """Write ``gib`` GiB once and free them; the seconds it took.

    On a virtual machine the first write to each page of guest memory faults at
    the host (1-2 s per GiB on the benchmark machine, 0.06 s per GiB for pages
    the process has touched before): without this, the first method a benchmark
    times pays that for the methods after it.  Called once per process, before
    any timed fit.
    """
    t = time.perf_counter()
    if gib > 0:
        buf = np.empty(int(gib * 2**30) // 8)
        buf.fill(0.0)
        del buf
    return time.perf_counter() - t


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far (MiB)."""
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / 1024.0


def run_worker(
    script: Path,
    args: list[str],
    python: str | None = None,
    timeout: float | None = None,
) -> dict[str, Any]:
    """Run ``script --worker ...`` in a fresh process; return the JSON it prints last.

    A fresh process per run gives each run its own peak memory (ru_maxrss).
    """
    cmd = [python or sys.executable, str(script), "--worker", *args]
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        return {"error": " | ".join(tail) or f"exit code {proc.returncode}"}
    return json.loads(lines[-1])


def fmt_cell(v: Any) -> str:
    """A table cell: floats to 3 significant digits, NaN/None as n/a, booleans yes/no."""
    if v is None:
        return "n/a"
    if isinstance(v, bool | np.bool_):
        return "yes" if v else "no"
    if isinstance(v, float | np.floating):
        if v != v:
            return "n/a"
        return f"{v:.3g}" if abs(v) < 1000 else f"{v:.0f}"
    return str(v)


def markdown_table(
    header: list[str], rows: list[list[Any]], fmt: Callable[[Any], str] = fmt_cell
) -> str:
    """A GitHub markdown table; ``fmt`` formats each cell (default :func:`fmt_cell`)."""
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    lines += ["| " + " | ".join(fmt(v) for v in r) + " |" for r in rows]
    return "\n".join(lines)


def records_table(
    records: list[dict[str, Any]],
    columns: list[str],
    fmt: Callable[[Any], str] = fmt_cell,
) -> str:
    """A markdown table of dict records, one column per key (missing keys blank)."""
    return markdown_table(
        columns, [[r.get(c, "") for c in columns] for r in records], fmt=fmt
    )


def bench_parser(
    doc: str | None,
    *,
    data: bool = True,
    worker: bool = False,
    quick_help: str = "small sizes (CI smoke test)",
) -> argparse.ArgumentParser:
    """Argument parser with the options every benchmark script shares.

    ``--quick`` (CI smoke mode), ``--no-save`` (print only, do not append to
    ``results/``), ``--data`` (data folder: ``$SEMISVM_DATA``, else
    ../shared/data) and the hidden ``--worker`` of scripts that run each
    measurement in a fresh process (:func:`run_worker`).
    """
    ap = argparse.ArgumentParser(description=(doc or "").strip().split("\n")[0])
    ap.add_argument("--quick", action="store_true", help=quick_help)
    ap.add_argument("--no-save", action="store_true", help="do not append to results/")
    if data:
        ap.add_argument(
            "--data",
            default=None,
            help="data folder (default $SEMISVM_DATA, else ../shared/data)",
        )
    if worker:
        ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    return ap


def append_results(
    name: str, title: str, command: str, body: str, machine: dict[str, Any]
) -> Path:
    """Append one run (machine, versions, command, tables) to results/<name>.md."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.md"
    new = not path.exists()
    with open(path, "a") as fh:
        if new:
            fh.write(f"# {title}\n\nAppend-only: one section per run, newest last.\n")
        fh.write(f"\n## Run {machine['date']}\n\n")
        fh.write(f"Command: `{command}`\n\n")
        fh.write(
            f"- CPU: {machine['cpu']}, {machine['cores']} cores, "
            f"{machine['memory_gib']} GiB; load average at start "
            f"{machine['load_avg_1m_at_start']}\n"
        )
        fh.write(
            f"- Python {machine['python']}, numpy {machine['numpy']}, scipy "
            f"{machine['scipy']}, scikit-learn {machine['sklearn']}, commit "
            f"{machine['commit']}\n"
        )
        for b in machine["blas"]:
            fh.write(f"- BLAS: {b}\n")
        fh.write(f"- BLAS environment variables: {machine['blas_env']}\n\n")
        fh.write(body.rstrip() + "\n")
    return path


# ----------------------------------------------------------------- data sets
def digits_like(
    n: int,
    d: int = 784,
    n_classes: int = 10,
    *,
    n_protos: int = 4,
    latent: int = 6,
    noise: float = 0.08,
    random_state: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Synthetic digits-like mixture in [0, 1]^d (a stand-in for MNIST).

    Each class is a union of ``n_protos`` smooth low-dimensional manifolds: a
    prototype "image" (a random smooth 28x28 blob pattern when ``d == 784``) plus a
    ``latent``-dimensional nonlinear deformation, plus pixel noise; intensities are
    squashed to [0, 1].  Classes overlap a little, so the task needs the unlabeled
    points.
    """
    rng = np.random.default_rng(random_state)
    side = int(round(np.sqrt(d)))
    grid = side * side == d
    protos = rng.standard_normal((n_classes, n_protos, d))
    if grid:  # smooth the prototypes spatially so they look like strokes
        from scipy.ndimage import gaussian_filter

        protos = gaussian_filter(
            protos.reshape(n_classes, n_protos, side, side), sigma=(0, 0, 2.0, 2.0)
        ).reshape(n_classes, n_protos, d)
        protos /= protos.std(axis=-1, keepdims=True)
    # a class-shared component makes the classes close to each other
    protos = 0.6 * protos + 0.8 * protos.mean(axis=(0, 1), keepdims=True)
    dirs = rng.standard_normal((n_classes, n_protos, latent, d)) / np.sqrt(latent)
    y = rng.integers(0, n_classes, size=n)
    p = rng.integers(0, n_protos, size=n)
    z = rng.uniform(-1.0, 1.0, size=(n, latent))
    X = np.empty((n, d))
    for c in range(n_classes):
        for q in range(n_protos):
            m = (y == c) & (p == q)
            if not m.any():
                continue
            zz = z[m]
            X[m] = (
                protos[c, q]
                + np.sin(2.0 * zz) @ dirs[c, q]
                + 0.5 * (zz**2) @ dirs[c, (q + 1) % n_protos]
            )
    X += noise * np.sqrt(d) ** 0.5 * rng.standard_normal((n, d)) / np.sqrt(d) ** 0.5
    X = 1.0 / (1.0 + np.exp(-1.5 * X))
    return X.astype(np.float32), y


def load_usps(folder: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Full USPS (9298 x 256 float32), labels 0-9 and the ``is_test`` mask."""
    with np.load(folder / "usps_full.npz") as f:
        return (
            np.asarray(f["X"]),
            np.asarray(f["y"]).astype(int),
            np.asarray(f["is_test"]).astype(bool),
        )


def pick_labeled(y: np.ndarray, n_labeled: int, random_state: int = 0) -> np.ndarray:
    """Indices of ``n_labeled`` labeled points, at least one per class."""
    rng = np.random.default_rng(random_state)
    classes = np.unique(y)
    first = [rng.choice(np.flatnonzero(y == c)) for c in classes]
    rest = np.setdiff1d(np.arange(y.size), first)
    more = rng.choice(rest, size=max(0, n_labeled - len(first)), replace=False)
    return np.sort(np.concatenate([first, more]).astype(int))
