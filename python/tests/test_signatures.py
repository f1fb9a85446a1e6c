"""Every public callable of the module has a real signature (its py::arg names and defaults,
readable by inspect.signature and help()) and a docstring. The module is enumerated, so a
function, class, method or property added without them fails here."""

import inspect
import re
import types

import pytest

import hsdp


def public_classes():
    return [getattr(hsdp, n) for n in sorted(dir(hsdp)) if not n.startswith("_") and inspect.isclass(getattr(hsdp, n))]


def public_callables():
    """(qualified name, object) of every public function, class and method; constructors as
    their class."""
    out = []
    for name in sorted(dir(hsdp)):
        obj = getattr(hsdp, name)
        if name.startswith("_"):
            continue
        if inspect.isclass(obj):
            for member in sorted(vars(obj)):
                raw = inspect.getattr_static(obj, member)
                if member.startswith("_") or isinstance(raw, property):
                    continue
                out.append((f"{name}.{member}", getattr(obj, member)))
        elif callable(obj):
            out.append((name, obj))
    return out


def public_properties():
    return [(f"{cls.__name__}.{member}", raw) for cls in public_classes() for member, raw in sorted(vars(cls).items())
            if not member.startswith("_") and isinstance(raw, property)]


def constructible(cls) -> bool:
    # pybind11 gives a class without py::init a slot __init__ that raises "No constructor defined"
    return not isinstance(vars(cls).get("__init__", object.__init__), types.WrapperDescriptorType)


def typed_line_names(obj) -> list:
    """The parameter names of pybind11's typed first docstring line ("f(a: int, *, b: str = 'x') -> R")."""
    line = obj.__doc__.lstrip().splitlines()[0]
    inner = line[line.index("(") + 1: line.rindex(")")]
    names, depth, current = [], 0, ""
    for ch in inner + ",":
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            part = current.strip()
            if part and part not in ("*", "/"):
                names.append(part.split(":")[0].split("=")[0].strip())
            current = ""
        else:
            current += ch
    return names


def test_the_module_has_functions_classes_methods_and_properties():
    names = dict(public_callables())
    for expected in ("account", "calibrate", "train", "plan", "read_csv", "audit_exact", "audit_mia",
                     "calibrate_parameter", "compare", "analysis", "analyses", "Report.to_json",
                     "Accountant.get_epsilon", "Run.replace", "TrainResult.predict", "Comparison.to_svg"):
        assert expected in names, expected
    assert len(public_properties()) > 50


@pytest.mark.parametrize("name,obj", public_callables(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_callable_has_a_real_signature(name, obj):
    sig = inspect.signature(obj)  # raises ValueError "no signature found" without one
    for p in sig.parameters.values():
        assert not re.fullmatch(r"arg\d+", p.name), f"{name}: unnamed parameter {p.name} (add py::arg)"
        assert p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD), f"{name}: *{p.name} is no signature"
    # the names are pybind11's own (its typed line; a method's first is self)
    assert list(sig.parameters) == typed_line_names(obj), name
    if "." in name:
        assert next(iter(sig.parameters)) == "self", name


@pytest.mark.parametrize("name,obj", public_callables(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_callable_has_a_docstring(name, obj):
    doc = (obj.__doc__ or "").strip().splitlines()
    # pybind11's first line is the typed signature: there must be text after it
    assert len([line for line in doc[1:] if line.strip()]) >= 1, f"{name}: no docstring"


@pytest.mark.parametrize("cls", public_classes(), ids=lambda c: c.__name__)
def test_every_class_has_a_docstring_and_a_signature_or_none_to_call(cls):
    assert (cls.__doc__ or "").strip(), cls.__name__
    if constructible(cls):
        sig = inspect.signature(cls)
        assert all(p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in sig.parameters.values()), cls
    else:
        # a result type: made by hsdp only
        with pytest.raises(TypeError, match="No constructor defined"):
            cls()


@pytest.mark.parametrize("name,prop", public_properties(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_property_has_a_docstring(name, prop):
    assert (prop.__doc__ or "").strip(), f"{name}: no docstring"


def test_signatures_carry_the_defaults():
    sig = inspect.signature(hsdp.account)
    assert sig.parameters["run"].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert sig.parameters["delta"].kind is inspect.Parameter.KEYWORD_ONLY
    assert sig.parameters["delta"].default is None
    assert sig.parameters["per_index_points"].default == 1000
    assert sig.parameters["alphas"].default == []
    assert inspect.signature(hsdp.plan).parameters["diameter"].default == float("inf")
    assert inspect.signature(hsdp.calibrate).parameters["epsilon"].default is inspect.Parameter.empty
    assert list(inspect.signature(hsdp.Accountant).parameters) == ["run", "analyses"]
    run = hsdp.Run(example=True)
    assert list(inspect.signature(run.to_json).parameters) == ["indent"]
    # Run and Run.replace: the run's keywords, keyword-only
    keywords = list(inspect.signature(hsdp.Run).parameters)
    assert keywords == list(inspect.signature(hsdp.Run(example=True).replace).parameters)
    assert "noise_multiplier" in keywords and "convex" in keywords
    assert run.replace(n=200, convex=None).n == 200  # None keeps a field
    # help() shows the signature
    assert "account(run, *, delta=None" in inspect.getdoc(hsdp.account) or \
        str(inspect.signature(hsdp.account)).startswith("(run, *, delta=None")
