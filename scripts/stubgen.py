#!/usr/bin/env python3
"""Writes the type stubs of the hsdp package (its extension's names) from the package itself.

    PYTHONPATH=build/python python3 scripts/stubgen.py build/python/hsdp/__init__.pyi

Run by the build after the module is linked (python/CMakeLists.txt), so the stubs name
exactly what the module defines: pybind11 puts each function's signature on the first line
of its docstring ("name(a: int, *, b: Optional[float] = None) -> hsdp.Report"), and hsdp.Run
carries an inspect.Signature of its keywords. (pybind11-stubgen does the same in general; it
is not packaged in Debian 12.)
"""

import inspect
import pathlib
import re
import sys

import hsdp

HEADER = '''"""Type stubs of the hsdp package, generated from it by scripts/stubgen.py.

{doc}
"""

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy
import numpy.typing as npt

# The pure-Python submodules, imported on first use (hsdp/__init__.py's __getattr__): after a
# plain `import hsdp`, hsdp.sklearn and hsdp.torch are typed by their own sources.
from hsdp import sklearn as sklearn
from hsdp import torch as torch

__version__: str
'''


def clean(text: str) -> str:
    """A pybind11 type as a stub type: hsdp.X -> X, numpy arrays as npt.NDArray."""
    text = re.sub(r"\bhsdp\.", "", text)
    text = re.sub(r"numpy\.ndarray\[[^\]]*\]", "npt.NDArray[Any]", text)
    text = text.replace("numpy.float64", "float")
    text = re.sub(r"\b(os\.PathLike|function|capsule|handle|kwargs|args)\b", "Any", text)
    return text


def clean_parameter(text: str) -> str:
    """A parameter's stub type: what the module accepts, which is more than what it returns.
    An array parameter takes anything numpy turns into an array (lists, tuples, scalars:
    npt.ArrayLike), a list parameter any sequence (pybind11 converts tuples and other sequences
    to its std::vector), so that hsdp.train(X=[[0.0, 1.0]], y=[0]) type-checks as it runs."""
    text = re.sub(r"numpy\.ndarray\[[^\]]*\]", "npt.ArrayLike", text)
    text = re.sub(r"\bList\[", "Sequence[", text)
    text = re.sub(r"\bDict\[", "Mapping[", text)
    return clean(text)


def split_top(text: str) -> list[str]:
    """Splits an argument list at the commas outside brackets."""
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current.strip())
    return parts


def signature_line(obj) -> str:
    """The first signature of a pybind11 docstring ("name(args) -> ret")."""
    lines = (obj.__doc__ or "").strip().splitlines()
    for line in lines:
        line = re.sub(r"^\d+\.\s*", "", line.strip())
        # a property's getter has no name: "(arg0: hsdp.Run) -> int"
        if re.match(r"^\w*\(.*\)( -> .+)?$", line):
            return line
    return ""


def stub_def(name: str, obj, indent: str, method: bool, owner: str = "") -> str:
    line = signature_line(obj)
    m = re.match(r"^\w+\((.*)\)(?: -> (.+))?$", line)
    if not m:
        args, ret = (["self", "*args: Any", "**kwargs: Any"] if method else ["*args: Any", "**kwargs: Any"]), "Any"
    else:
        args = []
        for part in split_top(m.group(1)):
            if part in ("*", "/") or part.startswith("**") or part.startswith("*"):
                args.append(clean(part) if ":" in part else (part + ": Any" if part.startswith("*") and part not in ("*", "/") else part))
                continue
            head, _, default = part.partition(" = ")
            arg, _, annotation = head.partition(": ")
            if method and not args:
                args.append("self")  # the instance, whatever pybind11 names it
                continue
            text = f"{arg}: {clean_parameter(annotation) or 'Any'}"
            args.append(text + (" = ..." if default else ""))
        ret = clean(m.group(2) or "None")
        ret = RETURNS.get((owner, name), "Dict[str, Any]" if name in DICT_METHODS and ret == "object" else ret)
    doc = [l for l in (obj.__doc__ or "").strip().splitlines() if l.strip() and l.strip() != line]
    body = f'\n{indent}    """{doc[0].strip()}"""' if doc and '"""' not in doc[0] else " ..."
    return f"{indent}def {name}({', '.join(args)}) -> {ret}:{body}\n"


# The members whose binding returns a Python object built by hand (pybind11 types them
# `object`): their real types, so that type checkers see Optional results as Optional and
# dicts as dicts. tests/test_stubs_and_example.py checks every entry names a real member and
# that no `-> object` is left.
RETURNS = {
    ("AnalysisResult", "delta"): "Optional[float]",
    ("AnalysisResult", "epsilon"): "Optional[float]",
    ("CalibrationResult", "add_remove"): "Optional[CalibrationResult]",
    ("CompareCurve", "ys"): "List[float]",
    ("Model", "feature_center"): "Optional[npt.NDArray[Any]]",
    ("Model", "feature_scale"): "Optional[npt.NDArray[Any]]",
    ("Model", "intercept"): "Optional[List[float]]",
    ("Report", "add_remove_best"): "Optional[AnalysisResult]",
    ("Report", "add_remove_epsilon"): "Optional[float]",
    ("Report", "best"): "Optional[AnalysisResult]",
    ("Report", "per_index"): "Optional[Dict[str, Any]]",
    ("Run", "cli_args"): "List[str]",
    ("Run", "eta"): "Union[None, float, List[float]]",
    ("Run", "noise_std"): "Union[float, List[float]]",
    ("TrainResult", "epsilon"): "Optional[float]",
    ("TrainResult", "intercept"): "Optional[List[float]]",
    ("TrainResult", "plan"): "Optional[Dict[str, Any]]",
    ("TrainResult", "report"): "Optional[Report]",
    ("TrainResult", "test_evaluation"): "Optional[Dict[str, Any]]",
    ("TrainResult", "user_level"): "Optional[Dict[str, Any]]",
    ("TrainResult", "model_document"): "Dict[str, Any]",
    ("", "audit_mia"): "Dict[str, Any]",
    ("", "grid_charges"): "Tuple[float, float, float]",
    ("Generator", "add_grid_noise"): "Tuple[npt.NDArray[Any], int]",
}
# Every to_dict() returns the JSON document as a dict.
DICT_METHODS = {"to_dict"}


def stub_property(name: str, prop, indent: str, owner: str = "") -> str:
    line = signature_line(prop.fget) if prop.fget else ""
    m = re.match(r"^\w*\(.*\)(?: -> (.+))?$", line)
    ret = clean(m.group(1)) if m and m.group(1) else "Any"
    ret = RETURNS.get((owner, name), ret)
    return f"{indent}@property\n{indent}def {name}(self) -> {ret}: ...\n"


def stub_init_from_signature(sig: inspect.Signature, indent: str) -> str:
    args = ["self", "*"]
    for p in sig.parameters.values():
        ann = p.annotation
        ann_text = getattr(ann, "__name__", None) or str(ann).replace("NoneType", "None")
        ann_text = ann_text.replace("int | None", "Optional[int]").replace("float | None", "Optional[float]")
        ann_text = ann_text.replace("str | None", "Optional[str]")
        args.append(f"{p.name}: {ann_text} = ...")
    return f"{indent}def __init__({', '.join(args)}) -> None: ...\n"


def stub_class(name: str, cls) -> str:
    out = [f"class {name}:\n"]
    doc = (cls.__doc__ or "").strip().splitlines()
    if doc:
        out.append(f'    """{doc[0].strip()}"""\n\n')
    sig = cls.__dict__.get("__signature__")
    # hsdp.Run's carries the keywords' types; a signature without annotations (the module
    # gives every class with a constructor one, python/src/signatures.cpp) leaves the types
    # to pybind11's typed line of __init__.
    typed = isinstance(sig, inspect.Signature) and all(
        p.annotation is not inspect.Parameter.empty for p in sig.parameters.values())
    if typed:
        out.append(stub_init_from_signature(sig, "    "))
    elif "__init__" in cls.__dict__ and signature_line(cls.__init__):
        out.append(stub_def("__init__", cls.__init__, "    ", method=True))
    for member in sorted(n for n in dir(cls) if not n.startswith("_")):
        value = inspect.getattr_static(cls, member)
        if isinstance(value, property):
            out.append(stub_property(member, value, "    ", owner=name))
        elif isinstance(value, staticmethod):
            out.append("    @staticmethod\n" + stub_def(member, getattr(cls, member), "    ", method=False))
        elif callable(getattr(cls, member)):
            out.append(stub_def(member, getattr(cls, member), "    ", method=True, owner=name))
        else:
            out.append(f"    {member}: Any\n")
    return "".join(out) + "\n"


def main() -> int:
    target = pathlib.Path(sys.argv[1])
    doc = (hsdp.__doc__ or "").strip()
    parts = [HEADER.format(doc=doc), "\n"]
    names = sorted(n for n in dir(hsdp) if not n.startswith("_"))
    for name in names:
        obj = getattr(hsdp, name)
        if inspect.isclass(obj):
            parts.append(stub_class(name, obj))
    for name in names:
        obj = getattr(hsdp, name)
        if not inspect.isclass(obj) and callable(obj):
            parts.append(stub_def(name, obj, "", method=False, owner="") + "\n")
    text = "".join(parts).rstrip() + "\n"
    if not target.exists() or target.read_text() != text:
        target.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
