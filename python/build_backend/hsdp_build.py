"""The PEP 517 build backend of the hsdp Python module (pyproject.toml names it).

    python3 -m pip install . --no-build-isolation
    python3 -m build --wheel --no-isolation

CMake builds the package (target hsdp_python, python/CMakeLists.txt): the extension, its type
stubs (scripts/stubgen.py, run by the build) and the pure-Python files of python/hsdp/; this
file packs them into a wheel (PEP 427):

    hsdp/__init__.py, sklearn.py, torch.py   the package (python/hsdp/)
    hsdp/_hsdp.cpython-311-x86_64-linux-gnu.so  the extension
    hsdp/__init__.pyi, hsdp/py.typed         its stubs (PEP 561)
    hsdp/feature_ranges/*.txt                 the public feature ranges (package data, hsdp.feature_ranges)
    hsdp-<version>.dist-info/                METADATA, WHEEL, RECORD

pip asks for the metadata first (prepare_metadata_for_build_wheel): it is written from
pyproject.toml and CMakeLists.txt without compiling, so `pip install .` says what it builds
right away; the build itself prints CMake's and the compiler's output to stderr (shown with
`pip install -v`). Before it starts, the interpreter is checked for what the build needs
(numpy): a python3 that cannot see Debian's packages (a pyenv or
other non-Debian interpreter, a venv without --system-site-packages) gets a message that says
so instead of a CMake error.

Why a backend of our own: scikit-build-core is not packaged in Debian 12, and setuptools
would need a stand-in Extension and writes its own build/ directory where CMake's lives.
This one only runs CMake and zips files, with the standard library alone, so no network
and no build requirement beyond the Debian packages of scripts/install-deps.sh.

The version is CMake's project version (CMakeLists.txt), the one source of hsdp.__version__
and `hsdp --version`.

Where CMake builds: config setting "build-dir" (pip --config-settings build-dir=DIR, python3 -m build
-C build-dir=DIR), else $HSDP_BUILD_DIR, else build-python/ in the source tree. An existing
tree is reused as it is configured (scripts/test.sh installs from the test build, build/,
so the module is compiled once); a new one is configured for Release, module only. Parallel
jobs: $CMAKE_BUILD_PARALLEL_LEVEL, else every core.
"""

import base64
import csv
import hashlib
import io
import os
import pathlib
import re
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
NAME = "hsdp"


def _version() -> str:
    text = (ROOT / "CMakeLists.txt").read_text()
    match = re.search(r"project\(\s*hsdp\s+VERSION\s+([0-9][0-9.]*)", text)
    if not match:
        raise RuntimeError("CMakeLists.txt: no `project(hsdp VERSION x.y.z ...)`")
    return match.group(1)


def _project() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]


def _metadata() -> str:
    """METADATA (core metadata 2.1) from pyproject.toml's [project] table."""
    p = _project()
    lines = ["Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {_version()}"]
    if "description" in p:
        lines.append(f"Summary: {p['description']}")
    if "requires-python" in p:
        lines.append(f"Requires-Python: {p['requires-python']}")
    for requirement in p.get("dependencies", []):
        lines.append(f"Requires-Dist: {requirement}")
    for extra, requirements in p.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        for requirement in requirements:
            lines.append(f'Requires-Dist: {requirement}; extra == "{extra}"')
    for label, url in p.get("urls", {}).items():
        lines.append(f"Project-URL: {label}, {url}")
    body = ""
    readme = p.get("readme")
    if isinstance(readme, str):
        lines.append("Description-Content-Type: text/markdown")
        body = "\n" + (ROOT / readme).read_text()
    return "\n".join(lines) + "\n" + body


def _tag() -> str:
    """The wheel tag of the running interpreter: cp311-cp311-linux_x86_64."""
    impl = f"cp{sys.version_info.major}{sys.version_info.minor}"
    platform = re.sub(r"[-.]", "_", sysconfig.get_platform())
    return f"{impl}-{impl}-{platform}"


def _build_dir(config_settings) -> pathlib.Path:
    chosen = (config_settings or {}).get("build-dir") or os.environ.get("HSDP_BUILD_DIR")
    path = pathlib.Path(chosen) if chosen else ROOT / "build-python"
    return path if path.is_absolute() else ROOT / path


def _run(command: list) -> None:
    print("hsdp build:", " ".join(str(c) for c in command), file=sys.stderr, flush=True)
    subprocess.run([str(c) for c in command], cwd=ROOT, check=True, stdout=sys.stderr)


def _check_interpreter() -> None:
    """The module needs numpy at run time and Debian's Python headers: an interpreter that
    cannot import Debian's numpy is not the one the module is built for. (pybind11 is found by
    CMake, from pybind11-dev.)"""
    missing = []
    for module in ("numpy",):
        probe = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True)
        if probe.returncode != 0:
            missing.append(module)
    if missing:
        raise RuntimeError(
            f"hsdp build: {sys.executable} cannot import {', '.join(missing)}. The module is built "
            "against Debian's packages (python3-numpy, python3-dev, pybind11-dev; "
            "scripts/install-deps.sh installs them): use /usr/bin/python3, or a venv made from it "
            "with `/usr/bin/python3 -m venv --system-site-packages` (a pyenv python3, or a venv "
            "without system site packages, cannot see them). docs/python.md, \"Installing\".")


def _build_module(config_settings) -> dict:
    """Builds the package (extension, stubs, pure-Python files) with CMake; returns its files
    (archive name -> path)."""
    _check_interpreter()
    build = _build_dir(config_settings)
    if not (build / "CMakeCache.txt").exists():
        _run(["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
              "-DHSDP_BUILD_TESTS=OFF", "-DHSDP_BUILD_BENCH=OFF", "-DHSDP_BUILD_PYTHON=ON",
              f"-DPYTHON_EXECUTABLE={sys.executable}"])
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
    _run(["cmake", "--build", build, "--target", "hsdp_python", "--parallel", jobs])
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    package = build / "python" / NAME
    module = package / f"_hsdp{suffix}"
    if not module.exists():
        found = sorted(p.name for p in package.glob("_hsdp.*.so"))
        raise RuntimeError(
            f"{build}: no {module.name} for this interpreter ({sys.executable}); the tree holds "
            f"{', '.join(found) or 'no module'}: configure it with -DPYTHON_EXECUTABLE={sys.executable} "
            f"or choose another build directory (-C build-dir=DIR)")
    stubs = package / "__init__.pyi"
    if not stubs.exists():
        raise RuntimeError(f"{stubs}: missing (written by scripts/stubgen.py after the module is linked)")
    files = {f"{NAME}/{module.name}": module, f"{NAME}/__init__.pyi": stubs}
    for source in sorted((ROOT / "python" / NAME).iterdir()):  # the pure-Python files, as in git
        if source.is_file() and (source.suffix == ".py" or source.name == "py.typed"):
            files[f"{NAME}/{source.name}"] = package / source.name
    for ranges in sorted((ROOT / "data" / "feature-ranges").glob("*.txt")):  # package data (hsdp.feature_ranges)
        files[f"{NAME}/feature_ranges/{ranges.name}"] = package / "feature_ranges" / ranges.name
    return files


def _record_line(arcname: str, data: bytes) -> list:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return [arcname, f"sha256={digest}", str(len(data))]


def _write_wheel(directory: str, files: dict) -> str:
    """Writes the wheel of `files` (archive name -> bytes) and its dist-info."""
    version = _version()
    dist_info = f"{NAME}-{version}.dist-info"
    files = dict(files)
    files[f"{dist_info}/METADATA"] = _metadata().encode()
    files[f"{dist_info}/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: hsdp_build\nRoot-Is-Purelib: false\n"
        f"Tag: {_tag()}\n").encode()
    files[f"{dist_info}/top_level.txt"] = f"{NAME}\n".encode()
    rows = [_record_line(name, data) for name, data in files.items()]
    rows.append([f"{dist_info}/RECORD", "", ""])
    record = io.StringIO()
    csv.writer(record, lineterminator="\n").writerows(rows)
    files[f"{dist_info}/RECORD"] = record.getvalue().encode()
    wheel_name = f"{NAME}-{version}-{_tag()}.whl"
    with zipfile.ZipFile(pathlib.Path(directory) / wheel_name, "w", zipfile.ZIP_DEFLATED) as whl:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            executable = name.endswith(".so")
            info.external_attr = (0o755 if executable else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            whl.writestr(info, data)
    return wheel_name


# ---- PEP 517 hooks


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    """The dist-info directory without building anything (pip's "Preparing metadata")."""
    dist_info = pathlib.Path(metadata_directory) / f"{NAME}-{_version()}.dist-info"
    dist_info.mkdir(parents=True, exist_ok=True)
    (dist_info / "METADATA").write_text(_metadata())
    (dist_info / "WHEEL").write_text(
        f"Wheel-Version: 1.0\nGenerator: hsdp_build\nRoot-Is-Purelib: false\nTag: {_tag()}\n")
    (dist_info / "top_level.txt").write_text(f"{NAME}\n")
    return dist_info.name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = _build_module(config_settings)
    return _write_wheel(wheel_directory, {name: path.read_bytes() for name, path in files.items()})


def build_sdist(sdist_directory, config_settings=None):
    """The source tree without build trees, VCS data or caches, with PKG-INFO."""
    base = f"{NAME}-{_version()}"
    name = f"{base}.tar.gz"

    def skip(path: pathlib.Path) -> bool:
        rel = path.relative_to(ROOT).parts
        return bool(rel) and (rel[0].startswith(("build", ".git", "dist", "cmake-build", "out"))
                              or "__pycache__" in rel)

    with tarfile.open(pathlib.Path(sdist_directory) / name, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(ROOT.rglob("*")):
            if path.is_file() and not skip(path):
                tar.add(path, arcname=f"{base}/{path.relative_to(ROOT)}", recursive=False)
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = _metadata().encode()
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return name
