"""Shared helpers of the Python tests: the module under test and the `hsdp` command of the
same build (HSDP_CLI, or build/hsdp next to build/python/hsdp*.so)."""

import json
import os
import pathlib
import subprocess

import pytest

import hsdp

REPO = pathlib.Path(__file__).resolve().parents[2]


def cli_path() -> str:
    env = os.environ.get("HSDP_CLI")
    if env:
        return env
    return str(pathlib.Path(hsdp.__file__).resolve().parent.parent / "hsdp")


def run_cli(*args, check=True):
    """Runs `hsdp ARGS`; returns the CompletedProcess (text)."""
    proc = subprocess.run([cli_path(), *map(str, args)], capture_output=True, text=True, timeout=600)
    if check and proc.returncode != 0:
        raise AssertionError(f"hsdp {' '.join(map(str, args))} exited {proc.returncode}: {proc.stderr}")
    return proc


def cli_json(*args):
    """`hsdp ARGS --json`: (the exact stdout, the parsed document)."""
    proc = run_cli(*args, "--json")
    return proc.stdout, json.loads(proc.stdout)


def cli_error(*args) -> str:
    """The message of a failing `hsdp ARGS` (exit 2, 'hsdp: error: <message>')."""
    proc = run_cli(*args, check=False)
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    prefix = "hsdp: error: "
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith(prefix), proc.stderr
    return line[len(prefix):]


@pytest.fixture(scope="session")
def cli():
    path = cli_path()
    if not os.access(path, os.X_OK):
        pytest.fail(f"the hsdp command is not at {path} (set HSDP_CLI)")
    return path
