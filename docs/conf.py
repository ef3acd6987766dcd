"""Sphinx configuration of the semisvm documentation.

The API reference (``api.rst``) and the command-line reference
(``_generated/cli_*.txt``) are generated at build time from the package itself:
every name in the ``__all__`` of the public modules gets an autosummary page
built from its numpydoc docstring, so the reference follows the code.
"""

from __future__ import annotations

import importlib
import inspect
import io
import os
import sys
from contextlib import redirect_stdout
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "src"))

import semisvm  # noqa: E402

project = "semisvm"
author = "the semisvm developers"
copyright = "2026, the semisvm developers"  # noqa: A001
version = release = semisvm.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
]

templates_path = ["_templates"]
# Docstrings write the set sizes of the papers as |L|, |U|, |V|, |T|: render
# them literally instead of as (undefined) reST substitutions.
rst_prolog = "\n".join(
    f".. |{s}| unicode:: U+007C U+{ord(s):04X} U+007C" for s in "LUVT"
) + "\n"
exclude_patterns = ["_build", "**.ipynb_checkpoints", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip"]
html_theme = "pydata_sphinx_theme"
html_title = f"semisvm {release}"
html_static_path = ["_static"]
html_theme_options = {"navigation_with_keys": False, "show_toc_level": 2}

autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": True, "inherited-members": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

intersphinx_mapping = {
    "python": ("https://docs.python.org/3", None),
    "numpy": ("https://numpy.org/doc/stable/", None),
    "scipy": ("https://docs.scipy.org/doc/scipy/", None),
    "sklearn": ("https://scikit-learn.org/stable/", None),
    "matplotlib": ("https://matplotlib.org/stable/", None),
}
# Offline builds (CI without network) must not warn about the inventories.
if os.environ.get("SEMISVM_DOCS_OFFLINE"):
    intersphinx_mapping = {}

# ---------------------------------------------------------------- gallery
# Examples named plot_long_*.py are not executed unless SEMISVM_GALLERY_ALL=1.
_run_all = bool(os.environ.get("SEMISVM_GALLERY_ALL"))
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_" if _run_all else r"/plot_(?!long_)",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "plot_gallery": "True",
}

# ---------------------------------------------------------------- generated pages
PUBLIC_MODULES = [
    ("semisvm", "Estimators and functions exported at the top level"),
    ("semisvm.model_selection", "Model selection"),
    ("semisvm.graph", "Graphs and Laplacians"),
    ("semisvm.kernels", "Kernels, kernel operators and the semi-supervised kernel"),
    ("semisvm.solvers", "Solvers (plain functions over operators)"),
    ("semisvm.datasets", "Data sets, loaders and splits"),
    ("semisvm.plotting", "Plots"),
    ("semisvm.experiments", "Reproduction of the papers' experiments"),
]


def _public_names(modname: str) -> tuple[list[str], list[str]]:
    mod = importlib.import_module(modname)
    classes, functions = [], []
    for name in getattr(mod, "__all__", []):
        if name.startswith("_"):
            continue
        obj = getattr(mod, name, None)
        if inspect.isclass(obj):
            classes.append(name)
        elif inspect.isfunction(obj):
            functions.append(name)
    return sorted(classes), sorted(functions)


def write_api_page() -> None:
    """api.rst: one autosummary table per public module, from ``__all__``."""
    seen: set[str] = set()
    lines = [
        "API reference",
        "=============",
        "",
        "Generated from the docstrings of every name in the ``__all__`` of the public",
        "modules (each object is listed once, under the first module exporting it).",
        "",
    ]
    for modname, title in PUBLIC_MODULES:
        try:
            classes, functions = _public_names(modname)
        except ImportError:
            continue
        entries = []
        for kind, names in (("Classes", classes), ("Functions", functions)):
            keep = []
            for n in names:
                obj = getattr(importlib.import_module(modname), n)
                key = f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', n)}"
                if key in seen:
                    continue
                seen.add(key)
                keep.append(n)
            if keep:
                entries.append((kind, keep))
        if not entries:
            continue
        lines += [f"``{modname}``: {title}", "-" * (len(modname) + len(title) + 6), "",
                  f".. currentmodule:: {modname}", ""]
        for kind, names in entries:
            lines += [f".. rubric:: {kind}", "", ".. autosummary::",
                      "   :toctree: generated/", "   :nosignatures:", ""]
            lines += [f"   {n}" for n in names]
            lines.append("")
    text = "\n".join(lines) + "\n"
    path = HERE / "api.rst"
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def write_cli_help() -> None:
    """_generated/cli_<command>.txt: the --help text of each subcommand."""
    from semisvm.cli import main

    out = HERE / "_generated"
    out.mkdir(exist_ok=True)
    for cmd in ("", "fit", "predict", "score", "info", "reproduce"):
        buf = io.StringIO()
        os.environ["COLUMNS"] = "88"
        with redirect_stdout(buf):
            main([cmd, "--help"] if cmd else ["--help"])
        (out / f"cli_{cmd or 'main'}.txt").write_text(buf.getvalue())


write_api_page()
write_cli_help()
