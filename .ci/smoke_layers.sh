#!/usr/bin/env bash
# The package's import layers (pyproject.toml [tool.importlinter]): no upward import.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet "import-linter>=2" >/dev/null 2>&1 || python3 -m pip install --quiet "import-linter>=2"
lint-imports
