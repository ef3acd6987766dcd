#!/usr/bin/env bash
# Packaging smoke test: `python -m build` gives a wheel and an sdist; each is
# installed in a fresh virtual environment (reusing the already installed
# numpy/scipy/scikit-learn/pandas through --system-site-packages, so nothing big
# is downloaded) and must pass a smoke run from an empty directory: import,
# `semisvm --version`, fit on a CSV written by pandas with string labels and
# blank cells for the unlabeled rows, predict writing the class names back.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip install --quiet "build>=1" >/dev/null 2>&1 || python3 -m pip install --quiet "build>=1"
echo "== python -m build"
python3 -m build --outdir "$work/dist" "$root" > "$work/build.log" 2>&1 || { tail -30 "$work/build.log"; exit 1; }
ls "$work/dist"
wheel=$(ls "$work"/dist/*.whl)
sdist=$(ls "$work"/dist/*.tar.gz)
python3 - "$wheel" "$sdist" <<'PY'
import sys, tarfile, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
for need in ("semisvm/py.typed", "semisvm/cli.py"):
    assert need in names, f"wheel lacks {need}"
assert any(n.endswith("LICENSE") for n in names), "wheel lacks LICENSE"
snames = tarfile.open(sys.argv[2]).getnames()
for need in ("LICENSE", "README.md", "CHANGELOG.md", "pyproject.toml"):
    assert any(n.endswith("/" + need) for n in snames), f"sdist lacks {need}"
print("wheel and sdist contents ok")
PY
version=$(python3 -c "import re,sys; print(re.search(r'__version__ = \"(.+?)\"', open('src/semisvm/__init__.py').read()).group(1))")
for artefact in "$wheel" "$sdist"; do
  echo "== install $(basename "$artefact") in a fresh venv"
  rm -rf "$work/venv" "$work/run"
  # a fresh venv that sees the packages of the Python running this script (also
  # when that Python is itself a venv, where --system-site-packages would point
  # at the bare base interpreter): its site directories go in through a .pth
  python3 -m venv "$work/venv"
  vsite=$("$work/venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
  python3 -c "import site, sys; print('\n'.join(p for p in site.getsitepackages() + [site.getusersitepackages()]))" > "$vsite/_outer_site.pth"
  "$work/venv/bin/python" -m pip install --quiet --no-deps "$artefact"
  mkdir "$work/run"
  (
    cd "$work/run"
    py="$work/venv/bin/python"
    "$py" - <<'PY'
import numpy as np, pandas as pd, semisvm, sys
assert semisvm.__file__.startswith(sys.prefix), f"imported {semisvm.__file__}, not the venv's"
from semisvm.datasets import make_two_moons
X, y, _ = make_two_moons(150, n_labeled_per_class=3, random_state=0)
names = np.array(["north", "south"], dtype=object)
pd.DataFrame({"a": X[:, 0], "b": X[:, 1],
              "y": np.where(y == -1, None, names[np.maximum(y, 0)])}).to_csv("data.csv", index=False)
Xq, _, _ = make_two_moons(40, n_labeled_per_class=None, random_state=1)
pd.DataFrame({"a": Xq[:, 0], "b": Xq[:, 1]}).to_csv("query.csv", index=False)
PY
    got=$("$work/venv/bin/semisvm" --version)
    [ "$got" = "semisvm $version" ] || { echo "semisvm --version printed '$got'"; exit 1; }
    "$work/venv/bin/semisvm" fit data.csv --label-column y -o model
    "$work/venv/bin/semisvm" predict model query.csv -o pred.csv
    "$py" -c "
import pandas as pd
p = pd.read_csv('pred.csv')
assert len(p) == 40 and set(p['prediction']) <= {'north', 'south'}, p.head()
print('predictions ok:', p['prediction'].value_counts().to_dict())"
  )
done
echo "smoke_package: ok"
