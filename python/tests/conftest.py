"""Shared helpers of the Python tests: the module under test and the `hsdp` command of the
same build (HSDP_CLI, or build/hsdp next to the package build/python/hsdp/)."""

import json
import os
import pathlib
import re
import subprocess

import pytest

import hsdp

REPO = pathlib.Path(__file__).resolve().parents[2]


def cli_path() -> str:
    env = os.environ.get("HSDP_CLI")
    if env:
        return env
    return str(pathlib.Path(hsdp.__file__).resolve().parents[2] / "hsdp")


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


# Flags whose keyword is not the flag's name with '_' for '-'.
_KEYWORDS = {"alpha": "alphas", "analysis": "analyses", "for": "parameter"}
# Flags that an error message shows with a word value ("--for noise" -> "parameter='noise'").
_WORD_VALUED = ("for", "setting", "algorithm", "noise-unit", "analysis")


def keyword_message(cli_message: str) -> str:
    """The message Python gives for a CLI error message: each flag named as its keyword. The
    reason of an analysis that does not apply is the text of a result, the same in both."""
    head, sep, reason = cli_message.partition(": not applicable: ")

    def keyword(flag: str) -> str:
        return _KEYWORDS.get(flag, flag.replace("-", "_"))

    head = re.sub(r"--(%s) ([a-z][a-z0-9-]*)" % "|".join(_WORD_VALUED),
                  lambda m: f"{keyword(m.group(1))}='{m.group(2)}'", head)
    head = re.sub(r"--([a-z][a-z0-9-]*) ([A-Z])\b", lambda m: f"{keyword(m.group(1))}={m.group(2)}", head)
    head = re.sub(r"--([a-z][a-z0-9-]*)", lambda m: keyword(m.group(1)), head)
    return head + sep + reason


@pytest.fixture(scope="session")
def cli():
    path = cli_path()
    if not os.access(path, os.X_OK):
        pytest.fail(f"the hsdp command is not at {path} (set HSDP_CLI)")
    return path
