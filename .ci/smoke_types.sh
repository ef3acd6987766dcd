#!/usr/bin/env bash
# Type checking with mypy of the whole package (configured in pyproject.toml,
# [tool.mypy]: files = ["src/semisvm"]).  About 30 s.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet "mypy>=1.8" >/dev/null 2>&1 || python3 -m pip install --quiet "mypy>=1.8"
python3 -m mypy
