#!/usr/bin/env bash
# The README's two commands, as a newcomer runs them: a fresh clone of the
# committed tree, a new virtual environment, the commands copied from the
# README's first code block (nothing else installed by hand).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone --quiet "$root" "$work/clone"
python3 -m venv "$work/venv"
export PATH="$work/venv/bin:$PATH"
export VIRTUAL_ENV="$work/venv"
hash -r
cd "$work/clone"
# the first ```bash block of the README: exactly two commands
python - > "$work/cmds.sh" <<'PY'
import re
text = open("README.md").read()
block = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
cmds = [ln for ln in block.splitlines() if ln.strip() and not ln.startswith("#")]
assert len(cmds) == 2, cmds
print("\n".join(cmds))
PY
n=0
while IFS= read -r cmd; do
  n=$((n + 1))
  echo "== README command $n: $cmd"
  bash -euo pipefail -c "$cmd"
done < "$work/cmds.sh"
echo "smoke_readme: both README commands passed in a fresh venv"
