"""hsdp.train and hsdp.audit_mia state the training run with the fields of the library's
training request (TrainSpec::fields(), exposed as hsdp._train_fields): their keywords (the
explicit py::arg lists of python/src/train.cpp) must be the table's names, with its types and
defaults, so that the bindings cannot drift from the table the `hsdp train` flags come from."""

import re
import sys

import hsdp
from conftest import REPO, run_cli

sys.path.insert(0, str(REPO / "scripts"))
from stubgen import signature_line, split_top  # noqa: E402  (how the stubs read a signature)

# The keywords of hsdp.train that are not fields of the training run: the data (the data
# flags of `hsdp train`, or the arrays X, y) and the request's noise target, seed and output.
TRAIN_REQUEST = {"X", "y", "data", "format", "labels", "label_column", "classes", "test_data", "test_labels",
                 "test_fraction", "split_seed", "epsilon", "delta", "no_noise", "seed", "positive", "feature_scale",
                 "feature_ranges", "users", "feature_storage", "output"}


def keywords(function):
    """name -> (annotation, default text or None), from the signature pybind11 puts first in
    the docstring (from the py::arg list)."""
    line = signature_line(function)
    args = re.match(r"^\w+\((.*)\) -> .+$", line).group(1)
    out = {}
    for part in split_top(args):
        if part in ("*", "/"):
            continue
        head, _, default = part.partition(" = ")
        name, _, annotation = head.partition(": ")
        out[name] = (annotation, default or None)
    return out


def python_default(field):
    """The table's default as the binding writes it."""
    if field["keyword"] == "bias":
        return "True"  # no_bias = false
    if field["default"] is None:
        return None
    if field["type"] == "float":
        return repr(float(field["default"]))
    return repr(field["default"])


def check_fields(function):
    kw = keywords(function)
    fields = hsdp._train_fields
    names = [f["keyword"] for f in fields]
    assert len(set(names)) == len(names)
    assert set(names) <= set(kw), set(names) - set(kw)
    for f in fields:
        annotation, default = kw[f["keyword"]]
        assert annotation in (f["type"], f"Optional[{f['type']}]"), (f["keyword"], annotation)
        if f["required"]:
            # required by the command; the Python keyword defaults to one of its choices
            assert default.strip("'") in f["allowed"].split(" | "), (f["keyword"], default)
        elif f["default"] is None:
            assert default == "None" and annotation.startswith("Optional["), f["keyword"]
        else:
            assert default == python_default(f), (f["keyword"], default, f["default"])
    return set(kw) - set(names)


def test_train_keywords_are_the_table_and_the_request():
    assert check_fields(hsdp.train) == TRAIN_REQUEST


def test_audit_mia_keywords_include_the_table():
    # the audit's own keywords (trials, confidence, ...) are checked by test_audit_mia.py
    assert check_fields(hsdp.audit_mia) >= {"X", "y", "epsilon", "delta"}


def test_table_is_the_command_flags_in_order():
    # `hsdp train --help` lists the table's fields as flags, in the table's order.
    text = run_cli("train", "--help").stdout
    flags = ["--no-bias" if f["field"] == "no_bias" else "--" + f["field"].replace("_", "-")
             for f in hsdp._train_fields]
    positions = [text.find("  " + flag + " ") for flag in flags]
    assert all(p >= 0 for p in positions), dict(zip(flags, positions))
    assert positions == sorted(positions)
    for f in hsdp._train_fields:
        assert f["help"] in text, f["field"]


def test_docstring_lists_every_field():
    doc = hsdp.train.__doc__
    for f in hsdp._train_fields:
        line = next((l for l in doc.splitlines() if l.startswith(f"  {f['keyword']} (")), None)
        assert line is not None, f["keyword"]
        assert line.startswith(f"  {f['keyword']} ({f['type']}")
        if f["keyword"] != "bias":
            assert line.endswith(f["help"]), line
        if f["allowed"] and f["type"] == "float":
            assert f", {f['allowed']})" in line, line
