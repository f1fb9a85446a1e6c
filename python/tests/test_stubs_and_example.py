"""The type stubs describe the module (every public name, every keyword), every public object
has a docstring, and the examples/ tour runs and writes its figures."""

import ast
import inspect
import os
import pathlib
import re
import subprocess
import sys

import pytest

import hsdp
from conftest import REPO

# Generated from the module by the build (scripts/stubgen.py): the package's __init__.pyi, next
# to its py.typed (PEP 561), in the build tree and where it is installed alike.
_HERE = pathlib.Path(hsdp.__file__).resolve().parent
STUB = _HERE / "__init__.pyi"
# The directory that holds the package (for PYTHONPATH).
_ROOT = _HERE.parent


def stub_tree():
    return ast.parse(STUB.read_text())


def public_names():
    # The extension's names: a pure-Python submodule (hsdp.sklearn, hsdp.torch) is an attribute
    # of the package once some test imported it, and has its own source, not these stubs.
    return {n for n in dir(hsdp) if not n.startswith("_") and not inspect.ismodule(getattr(hsdp, n))}


def test_stub_names_match_the_module():
    tree = stub_tree()
    stubbed = {node.name for node in tree.body if isinstance(node, (ast.ClassDef, ast.FunctionDef))}
    assert public_names() <= stubbed | {"__version__"}
    # the stub's classes and functions exist (type aliases aside)
    assert stubbed <= public_names()


def test_stub_members_and_keywords_match():
    tree = stub_tree()
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            cls = getattr(hsdp, node.name)
            members = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
            real = {n for n in dir(cls) if not n.startswith("_")}
            assert members - {"__init__"} == real, node.name
        elif isinstance(node, ast.FunctionDef):
            doc = getattr(hsdp, node.name).__doc__
            # pybind11 puts the signature first in the docstring: each stubbed keyword appears
            for arg in node.args.args + node.args.kwonlyargs:
                assert f"{arg.arg}:" in doc.splitlines()[0], (node.name, arg.arg)


def test_run_keywords_match_stub():
    tree = stub_tree()
    run = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Run")
    init = next(n for n in run.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    for arg in init.args.kwonlyargs:
        assert re.search(rf"\b{arg.arg}\b", hsdp.Run.__doc__), arg.arg
    # and each is accepted
    for arg in init.args.kwonlyargs:
        with pytest.raises((ValueError, TypeError)) as info:
            hsdp.Run(**{arg.arg: None}) if arg.arg != "n" else hsdp.Run(n=None)
        assert "unexpected keyword" not in str(info.value)


def test_docstrings():
    for name in public_names() - {"__version__"}:
        obj = getattr(hsdp, name)
        assert obj.__doc__, name
    assert hsdp.__doc__


def test_stub_is_generated_from_this_module(tmp_path):
    # The build wrote it from the module it built: generating again gives the same text.
    again = tmp_path / "hsdp.pyi"
    env = dict(os.environ, PYTHONPATH=str(_ROOT))
    subprocess.run([sys.executable, str(REPO / "scripts" / "stubgen.py"), str(again)], check=True, env=env)
    assert STUB.exists() and again.read_text() == STUB.read_text()


def test_python_tour_runs(tmp_path):
    tour = REPO / "examples" / "python_tour.py"
    env = dict(os.environ, MPLBACKEND="Agg", HSDP_TOUR_QUICK="1", PYTHONPATH=str(_ROOT))
    proc = subprocess.run([sys.executable, str(tour), str(tmp_path)], capture_output=True, text=True,
                          env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "tour_epsilon_vs_steps.png").stat().st_size > 1000
    assert (tmp_path / "tour_accuracy_vs_epsilon.png").stat().st_size > 1000
    assert "test accuracy" in proc.stdout


def test_examples_and_docs_snippets_type_check_strictly(tmp_path):
    # mypy --strict (Debian's python3-mypy) over examples/, the golden Python examples and a
    # script made of the docs' Python snippets (docs/python.md, README.md; docs_snippets.py),
    # against the stubs the build wrote: arrays and lists where the module takes them, Optional
    # results Optional, dicts dicts, hsdp.sklearn / hsdp.torch after a plain `import hsdp`
    # (pyproject.toml [tool.mypy]). One mypy run for all: it reads torch's own types once.
    if not os.environ.get("HSDP_REQUIRE_TORCH"):  # CI installs python3-mypy with python3-torch
        pytest.importorskip("mypy")
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    try:
        import docs_snippets
    finally:
        sys.path.pop(0)
    text, where = docs_snippets.script()
    script = tmp_path / "docs_snippets_script.py"
    script.write_text(text)
    # The submodules after a plain `import hsdp` (the stubs declare them; __init__.py imports
    # them on first use), and lists where the module takes arrays.
    plain = tmp_path / "plain_import.py"
    plain.write_text("import hsdp\n\nclf = hsdp.sklearn.LogisticRegression(epsilon=1)\n"
                     "make = hsdp.torch.make_private_with_epsilon\n"
                     "r = hsdp.train([[0.0, 1.0], [1.0, 0.0]], [0, 1], sigma=1.0, seed=1)\n"
                     "g = hsdp.Generator(seed=1).add_grid_noise([0.0, 1.0], std=1.0)\n")
    env = dict(os.environ, PYTHONPATH=str(_ROOT), MYPY_CACHE_DIR=os.devnull)
    # --allow-redefinition: the docs' snippets reuse names (X, report, r) for new values, as
    # separate examples do; the examples and the golden script are checked the same way.
    proc = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--allow-redefinition", "--no-incremental",
                           "--config-file", str(REPO / "pyproject.toml"), str(REPO / "examples"),
                           str(REPO / "tests" / "golden" / "python_examples.py"), str(script), str(plain)],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=600)
    report = re.sub(rf"{re.escape(str(script))}:(\d+)", lambda m: docs_snippets.doc_line(int(m.group(1)), where),
                    proc.stdout)
    assert proc.returncode == 0, report + proc.stderr


def test_submodules_are_attributes_after_a_plain_import():
    code = "import hsdp; print(hsdp.sklearn.__name__, hsdp.torch.__name__ if hsdp.torch else '')"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(_ROOT)), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["hsdp.sklearn", "hsdp.torch"]


def test_no_member_is_typed_object():
    # Members whose binding builds a Python object by hand are typed by scripts/stubgen.py's
    # RETURNS table; each entry names a real member, and no `-> object` is left.
    assert "-> object" not in STUB.read_text()
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import stubgen
    finally:
        sys.path.pop(0)
    for owner, member in stubgen.RETURNS:
        assert hasattr(getattr(hsdp, owner) if owner else hsdp, member), (owner, member)
