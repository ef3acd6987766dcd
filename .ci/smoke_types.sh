#!/usr/bin/env bash
# Type checking of the public entry points with mypy (configured in pyproject.toml,
# [tool.mypy]: the package root, the command line and the plotting helpers; the
# modules they import are followed silently).  About 30 s.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet "mypy>=1.8" >/dev/null 2>&1 || python3 -m pip install --quiet "mypy>=1.8"
python3 -m mypy
