#!/usr/bin/env python3
"""Golden outputs: what a user sees must not change when the code underneath is reorganised.

Runs every command of tests/golden/commands.txt (the examples of README.md and docs/, plus
error cases) and the Python examples (tests/golden/python_examples.py: docs/python.md and
examples/python_tour.py), and compares stdout, stderr, the exit status and every file the
commands write, byte for byte, with the files under tests/golden/.

    scripts/golden.py [--update] [--build DIR]

--update rewrites the golden files (only when a change of output is intended). Every run is
seeded; the only fields masked are the wall-clock time and the thread count of `hsdp audit
mia` (its results do not depend on them: each trial has its own seed). Python error messages
are not part of the golden output: they name keywords.

The numbers the docs quote cannot drift from what the code prints: after the comparison, every
line of README.md and docs/**/*.md of the forms

    best: NAME (epsilon = X, delta = Y)
    best under add/remove-one: ...
    achieved: NAME epsilon = X at delta = Y

(leading white space aside) must be a line of some golden output (the files under
tests/golden/out/, written by --update); a line that is not fails the run with its file:line.
To quote a new result in the docs, add its command to tests/golden/commands.txt (at the end, so
that the earlier cmd-NNN files keep their numbers) and run --update. --update still reports the
doc lines it cannot find (and exits 1); --docs-only checks the docs against the stored golden
files without running anything.
"""

import argparse
import difflib
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
GOLDEN = REPO / "tests" / "golden"
DATA = pathlib.Path("/usr/lib/python3/dist-packages/sklearn/datasets/data/breast_cancer.csv")
DESCR = pathlib.Path("/usr/lib/python3/dist-packages/sklearn/datasets/descr/breast_cancer.rst")
# Subcommands whose output has a --json form (the others print text only).
JSON_COMMANDS = {"account", "calibrate", "plan", "train", "predict", "audit exact", "audit mia"}


def scale30() -> str:
    """A public feature scale of breast_cancer for the --feature-scale examples: 1 / (max_j
    sqrt(30)) per feature, from the Max column of the dataset's documentation."""
    rule, out = 0, []
    for line in DESCR.read_text().splitlines():
        if line.startswith("    =") and set(line.strip()) <= {"=", " "} and len(line.split()) == 3:
            rule += 1
            continue
        fields = line.split()
        if rule == 2 and len(fields) >= 3:
            out.append("%.9g" % (1 / (float(fields[-1]) * 30 ** 0.5)))
    assert len(out) == 30, out
    return ",".join(out)


# Time and machine dependent: masked (hsdp audit mia: "(2000 trainings, 2 threads, 1.08 s)").
MASKS = [(re.compile(r"\d+ threads, [0-9.]+ s\)"), "N threads, T s)"),
         (re.compile(r'"seconds": [0-9.e+-]+'), '"seconds": T'),
         (re.compile(r'"threads": \d+'), '"threads": N')]


def mask(text: str) -> str:
    for pattern, replacement in MASKS:
        text = pattern.sub(replacement, text)
    return text


def subcommand(args: list[str]) -> str:
    return " ".join(args[:2]) if args[0] == "audit" else args[0]


def run(cli: str, line: str, work: pathlib.Path) -> str:
    proc = subprocess.run(f"{shlex.quote(cli)} {line}", shell=True, cwd=work, capture_output=True,
                          text=True, timeout=900, executable="/bin/bash")
    out = f"$ hsdp {line}\n{proc.stdout}"
    if proc.stderr:
        out += f"[stderr]\n{proc.stderr}"
    return mask(out + f"[exit {proc.returncode}]\n")


def outputs(build: pathlib.Path) -> dict[str, str]:
    """name -> text of every golden output."""
    cli = str((build / "hsdp").resolve())
    result: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="hsdp-golden-") as tmp:
        work = pathlib.Path(tmp)
        os.symlink(DATA, work / "breast_cancer.csv")
        os.symlink(REPO / "data", work / "data")  # the files hsdp ships (data/feature-ranges/)
        (work / "scale30.txt").write_text(scale30() + "\n")
        (work / "out").mkdir()
        inputs = {p.name for p in work.iterdir()}
        number = 0
        for raw in (GOLDEN / "commands.txt").read_text().splitlines():
            if not raw.strip() or raw.startswith("#"):
                continue
            number += 1
            failing = raw.startswith("!")
            line = raw[1:] if failing else raw
            text = run(cli, line, work)
            args = shlex.split(line.replace('"$(cat scale30.txt)"', "x"))
            if not failing and subcommand(args) in JSON_COMMANDS and "--json" not in args:
                text += run(cli, line + " --json", work)
            result[f"{'error' if failing else 'cmd'}-{number:03d}.txt"] = text
        # Every file the commands wrote (CSV, SVG, model files, predictions).
        for path in sorted(work.rglob("*")):
            if path.is_file() and path.relative_to(work).parts[0] not in inputs - {"out"}:
                result["files/" + str(path.relative_to(work)).replace("/", "_")] = path.read_text()
        env = dict(os.environ, PYTHONPATH=str((build / "python").resolve()), HSDP_CLI=cli)
        proc = subprocess.run(["/usr/bin/python3", str(GOLDEN / "python_examples.py"), str(work / "py")],
                              capture_output=True, text=True, env=env, timeout=1800)
        result["python.txt"] = proc.stdout + (f"[stderr]\n{proc.stderr}" if proc.stderr else "") + \
            f"[exit {proc.returncode}]\n"
    return result


# The lines of README.md and docs/ that quote a result; each must be a line of a golden output.
DOC_QUOTE = re.compile(r"^(best: \S+ \(epsilon = |best under add/remove-one: |achieved: \S+ epsilon = )")


def doc_drift(golden: dict[str, str]) -> list[str]:
    """file:line and text of every quoted result line of the docs found in no golden output."""
    printed = {line.strip() for text in golden.values() for line in text.splitlines()}
    drift = []
    for doc in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        for number, line in enumerate(doc.read_text().splitlines(), 1):
            quote = line.strip()
            if DOC_QUOTE.match(quote) and quote not in printed:
                drift.append(f"{doc.relative_to(REPO)}:{number}: {quote}")
    return drift


def stored() -> dict[str, str]:
    return {str(p.relative_to(GOLDEN / "out")): p.read_text()
            for p in sorted((GOLDEN / "out").rglob("*")) if p.is_file()}


def report_drift(golden: dict[str, str]) -> int:
    drift = doc_drift(golden)
    for line in drift:
        print(f"doc drift (in no golden output): {line}")
    print(f"docs: {len(drift)} quoted result line(s) found in no golden output")
    return 1 if drift else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update", action="store_true", help="rewrite the golden files")
    parser.add_argument("--build", default=str(REPO / "build"), help="build directory")
    parser.add_argument("--docs-only", action="store_true",
                        help="only check the docs' quoted results against the stored golden files")
    args = parser.parse_args()
    if args.docs_only:
        return report_drift(stored())
    got = outputs(pathlib.Path(args.build))
    if args.update:
        shutil.rmtree(GOLDEN / "out", ignore_errors=True)
        for name, text in got.items():
            path = GOLDEN / "out" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        print(f"wrote {len(got)} golden files under {GOLDEN / 'out'}")
        return report_drift(got)
    want = stored()
    failures = 0
    for name in sorted(set(want) | set(got)):
        if want.get(name) == got.get(name):
            continue
        failures += 1
        if name not in got:
            print(f"missing output: {name}")
        elif name not in want:
            print(f"new output (no golden file): {name}")
        else:
            sys.stdout.writelines(difflib.unified_diff(
                want[name].splitlines(keepends=True), got[name].splitlines(keepends=True),
                f"golden/{name}", f"now/{name}"))
    print(f"golden: {len(want) - failures} of {len(want)} outputs identical")
    drift = report_drift(want)
    return 1 if failures or drift else 0


if __name__ == "__main__":
    sys.exit(main())
