"""The package: one version (CMake's project version) in hsdp.__version__, `hsdp --version`
and the installed distribution; installed with its stubs; the wheel installs in a fresh venv
(no system site packages, no index) and works there."""

import importlib.metadata
import os
import pathlib
import re
import subprocess
import sys

import pytest

import hsdp
from conftest import REPO, run_cli

INSTALLED = os.environ.get("HSDP_EXPECT_INSTALLED") == "1"
BUILD_DIR = os.environ.get("HSDP_BUILD_DIR")


def cmake_version() -> str:
    return re.search(r"project\(\s*hsdp\s+VERSION\s+([0-9.]+)", (REPO / "CMakeLists.txt").read_text()).group(1)


def test_one_version():
    assert hsdp.__version__ == cmake_version()
    assert run_cli("--version").stdout.strip() == f"hsdp {cmake_version()}"


@pytest.mark.skipif(not INSTALLED, reason="runs against the module installed by scripts/test.sh")
def test_the_tests_run_against_the_installed_package():
    package = pathlib.Path(hsdp.__file__).resolve().parent
    assert package.is_relative_to(pathlib.Path(sys.prefix).resolve()), package
    assert importlib.metadata.version("hsdp") == hsdp.__version__
    stubs = package / "__init__.pyi"
    assert "def account(" in stubs.read_text()
    files = {str(f) for f in importlib.metadata.files("hsdp")}
    extension = pathlib.Path(hsdp._hsdp.__file__).name
    sources = {f"hsdp/{p.name}" for p in (REPO / "python" / "hsdp").iterdir() if p.suffix == ".py"}
    assert {f"hsdp/{extension}", "hsdp/__init__.pyi", "hsdp/py.typed"} | sources <= files, files


@pytest.mark.skipif(not BUILD_DIR, reason="needs HSDP_BUILD_DIR, the CMake tree to pack (scripts/test.sh)")
def test_the_wheel_installs_in_a_fresh_venv(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist),
                    f"-Cbuild-dir={BUILD_DIR}", str(REPO)], check=True, capture_output=True, timeout=900)
    wheels = list(dist.glob("hsdp-*.whl"))
    assert len(wheels) == 1 and re.fullmatch(rf"hsdp-{cmake_version()}-cp3\d+-cp3\d+-linux_\w+\.whl", wheels[0].name)
    venv = tmp_path / "fresh"
    subprocess.run(["/usr/bin/python3", "-m", "venv", str(venv)], check=True, timeout=300)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-index", str(wheels[0])], check=True, timeout=300)
    # Without numpy (not in this venv): accounting needs nothing else.
    script = ("import hsdp, inspect; "
              "r = hsdp.account(hsdp.Run(n=60000, batch_size=256, sampling='poisson', noise_multiplier=1.1, "
              "clip=1, steps=14062)); "
              "print(hsdp.__version__, r.epsilon, r.add_remove_epsilon, inspect.signature(hsdp.account))")
    out = subprocess.run([python, "-c", script], check=True, capture_output=True, text=True, timeout=300,
                         cwd=tmp_path).stdout.split(" ", 3)
    assert out[0] == cmake_version()
    assert float(out[1]) == pytest.approx(4.22, abs=0.01) and float(out[2]) == pytest.approx(2.38, abs=0.01)
    assert out[3].startswith("(run, *, delta=None")
    package = subprocess.run([python, "-c", "import hsdp, pathlib; print(pathlib.Path(hsdp.__file__).parent)"],
                             check=True, capture_output=True, text=True, cwd=tmp_path).stdout.strip()
    assert (pathlib.Path(package) / "__init__.pyi").exists() and (pathlib.Path(package) / "py.typed").exists()
    # package data: the public feature ranges (hsdp.feature_ranges)
    assert (pathlib.Path(package) / "feature_ranges" / "wine.txt").read_bytes() == \
        (REPO / "data" / "feature-ranges" / "wine.txt").read_bytes()


def test_metadata_is_prepared_without_compiling(tmp_path):
    # pip's "Preparing metadata" step: the backend writes the dist-info from pyproject.toml and
    # CMakeLists.txt alone (no CMake run: it returns at once, even with no build tree).
    sys.path.insert(0, str(REPO / "python" / "build_backend"))
    try:
        import hsdp_build
    finally:
        sys.path.pop(0)
    name = hsdp_build.prepare_metadata_for_build_wheel(str(tmp_path), {"build-dir": str(tmp_path / "none")})
    assert name == f"hsdp-{cmake_version()}.dist-info"
    assert f"Version: {cmake_version()}" in (tmp_path / name / "METADATA").read_text()
    assert not (tmp_path / "none").exists()
