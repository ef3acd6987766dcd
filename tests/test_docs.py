"""Every code block of the README and of docs/*.rst runs, and shows what it prints.

The Python blocks (```python fences of README.md; ``.. code-block:: python``
and ``>>>`` doctest blocks of the .rst pages) of one file run in order in one
namespace, fresh per file.  A block written with ``>>>`` prompts is a doctest:
the output it shows is checked (ELLIPSIS, NORMALIZE_WHITESPACE).  Shell blocks
are not run, but every ``semisvm <command>`` they name must be a real command
(``semisvm <command> --help`` exits 0).  The defaults the docs state are checked
against the code.
"""

from __future__ import annotations

import ast
import doctest
import inspect
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.rst"))]
SHELL_LANGS = {"bash", "sh", "shell", "console"}


@dataclass
class Block:
    path: Path
    line: int  # 1-based line of the first line of code
    lang: str  # "python", "doctest" or a shell language
    code: str


def _markdown_blocks(path: Path) -> list[Block]:
    blocks = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^\s*```\s*([\w-]*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        lang = m.group(1).lower()
        j = i + 1
        while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
            j += 1
        code = textwrap.dedent("\n".join(lines[i + 1 : j])) + "\n"
        if lang in ("python", "py", "pycon"):
            lang = "doctest" if code.lstrip().startswith(">>>") else "python"
        blocks.append(Block(path, i + 2, lang, code))
        i = j + 1
    return blocks


def _rst_blocks(path: Path) -> list[Block]:
    blocks = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^(\s*)\.\. (?:code-block|code|sourcecode)::\s*(\w*)\s*$", line)
        if m:
            indent = len(m.group(1))
            lang = (m.group(2) or "python").lower()
            j = i + 1
            while j < len(lines) and (  # options of the directive
                lines[j].strip().startswith(":") and lines[j].strip() != ""
            ):
                j += 1
            body = []
            start = None
            while j < len(lines):
                cur = lines[j]
                if cur.strip() and len(cur) - len(cur.lstrip()) <= indent:
                    break
                if cur.strip() and start is None:
                    start = j
                if start is not None:
                    body.append(cur)
                j += 1
            code = textwrap.dedent("\n".join(body)).rstrip() + "\n"
            if lang in ("python", "py", "pycon"):
                lang = "doctest" if code.lstrip().startswith(">>>") else "python"
            blocks.append(Block(path, (start or i) + 1, lang, code))
            i = j
            continue
        if line.lstrip().startswith(">>>"):  # a doctest block: up to a blank line
            j = i
            while j < len(lines) and lines[j].strip():
                j += 1
            code = textwrap.dedent("\n".join(lines[i:j])) + "\n"
            blocks.append(Block(path, i + 1, "doctest", code))
            i = j
            continue
        i += 1
    return blocks


def doc_blocks(path: Path) -> list[Block]:
    return _markdown_blocks(path) if path.suffix == ".md" else _rst_blocks(path)


def _python_files() -> list[Path]:
    return [p for p in DOC_FILES if any(
        b.lang in ("python", "doctest") for b in doc_blocks(p))]


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_the_extractor_sees_every_python_block():
    """No Python block is skipped by a format the extractor does not know."""
    for path in DOC_FILES:
        text = path.read_text(encoding="utf-8")
        blocks = doc_blocks(path)
        if path.suffix == ".md":
            n_fences = len(re.findall(r"^\s*```(?:python|py|pycon)\s*$", text, re.M))
        else:
            n_fences = len(re.findall(
                r"^\s*\.\. (?:code-block|code|sourcecode)::\s*(?:python|py|pycon)?\s*$",
                text, re.M))
            n_fences += len(re.findall(r"(?:\A|\n[ \t]*\n)[ \t]*>>>", text))
        n_python = sum(b.lang in ("python", "doctest") for b in blocks)
        assert n_python == n_fences, _name(path)
    names = {_name(p) for p in _python_files()}
    assert {"README.md", "docs/index.rst"} <= names


def _run_doctest(block: Block, ns: dict) -> None:
    parser = doctest.DocTestParser()
    name = f"{_name(block.path)}:{block.line}"
    test = parser.get_doctest(block.code, ns, name, str(block.path), block.line - 1)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    runner = doctest.DocTestRunner(optionflags=flags)
    out: list[str] = []
    runner.run(test, out=out.append, clear_globs=False)
    assert runner.failures == 0, "".join(out)


@pytest.mark.parametrize("path", _python_files(), ids=_name)
def test_python_blocks_run(path, tmp_path, monkeypatch):
    """The Python blocks of one file run in order in one fresh namespace."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    ns: dict = {"__name__": "__docs__"}
    try:
        for block in doc_blocks(path):
            if block.lang == "doctest":
                _run_doctest(block, ns)
            elif block.lang == "python":
                code = compile(block.code, f"{_name(path)}:{block.line}", "exec")
                exec(code, ns)
    finally:
        client = ns.get("client")
        if client is not None and hasattr(client, "close"):
            client.close()


def _semisvm_commands() -> dict[str, list[str]]:
    """``semisvm <command>`` named in the shell blocks -> where."""
    found: dict[str, list[str]] = {}
    for path in DOC_FILES:
        for block in doc_blocks(path):
            if block.lang not in SHELL_LANGS:
                continue
            for ln in block.code.splitlines():
                ln = ln.split("#", 1)[0]
                for m in re.finditer(r"(?:^|[\s;&|(])semisvm\s+([\w-]+)", ln):
                    found.setdefault(m.group(1), []).append(
                        f"{_name(path)}:{block.line}")
    return found


def test_shell_blocks_name_real_commands():
    cmds = _semisvm_commands()
    assert {"fit", "predict"} <= set(cmds)
    for sub, where in sorted(cmds.items()):
        args = [sub] if sub.startswith("-") else [sub, "--help"]
        res = subprocess.run(
            [sys.executable, "-m", "semisvm.cli", *args], capture_output=True,
            text=True, timeout=120,
        )
        assert res.returncode == 0, (sub, where, res.stderr[-2000:])


# ---------------------------------------------------------------------------
# what the docs say about defaults is what the code does

def _estimator_defaults() -> dict[str, list]:
    import semisvm

    out: dict[str, list] = {}
    for name in semisvm.__all__:
        obj = getattr(semisvm, name)
        if not inspect.isclass(obj):
            continue
        for pname, par in inspect.signature(obj).parameters.items():
            if par.default is not inspect.Parameter.empty:
                out.setdefault(pname, []).append(par.default)
    return out


def test_defaults_stated_in_the_docs_are_the_code_defaults():
    """```name=value``` followed by "(default" / "the default" / "by default"."""
    defaults = _estimator_defaults()
    pat = re.compile(r"`+(\w+)=([^`]+?)`+([^`]{0,25})")
    checked, wrong = 0, []
    for path in DOC_FILES:
        text = re.sub(r"\s+", " ", path.read_text(encoding="utf-8"))
        for m in pat.finditer(text):
            name, value, after = m.groups()
            if "default" not in after or name not in defaults:
                continue
            try:
                val = ast.literal_eval(value)
            except (ValueError, SyntaxError):
                val = value
            checked += 1
            if val not in defaults[name]:
                wrong.append(f"{_name(path)}: {m.group(0)!r} (code: {defaults[name]})")
    assert not wrong, "\n".join(wrong)
    assert checked >= 8


def test_core_dependencies_listed_in_install_page():
    import tomllib

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    core = {re.split(r"[<>=!~\[ ]", d, maxsplit=1)[0].lower() for d in deps}
    text = (ROOT / "docs" / "install.rst").read_text(encoding="utf-8")
    line = re.search(r"pip install semisvm\s+#(.*)", text).group(1)
    named = {w.lower() for w in re.findall(r"[\w-]+", line)} - {"only"}
    assert named == core, (named, core)


def test_default_unlabeled_markers_listed_in_the_docs():
    from semisvm import cli

    for rel in ("README.md", "docs/cli.rst"):
        text = (ROOT / rel).read_text(encoding="utf-8")
        para = re.sub(r"\s+", " ", text[text.index("unlabeled marker"):][:600])
        for mark in cli._DEFAULT_UNLABELED:
            if mark:
                assert f"`{mark}`" in para, (rel, mark)
        assert "empty cell" in para, rel
