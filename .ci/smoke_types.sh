#!/usr/bin/env bash
# Type checking with mypy (configured in pyproject.toml, [tool.mypy]: the package
# root, the command line, the plotting helpers, and the solvers, kernels and
# datasets subpackages; the other modules they import are followed silently).
# About 30 s.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet "mypy>=1.8" >/dev/null 2>&1 || python3 -m pip install --quiet "mypy>=1.8"
python3 -m mypy
