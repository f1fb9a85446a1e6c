"""hsdp.feature_ranges: the public feature ranges shipped with the package.

The files of data/feature-ranges/ (generated from each data set's own documentation by
scripts/feature_ranges.py; docs/data.md, "Public feature ranges") are installed as package data
in hsdp/feature_ranges/ (python/CMakeLists.txt copies them next to the module; the wheel and
`cmake --install` carry them), so an installed hsdp finds them without the source tree.
"""

from __future__ import annotations

import importlib.resources
from typing import List


def _names() -> List[str]:
    folder = importlib.resources.files("hsdp").joinpath("feature_ranges")
    if not folder.is_dir():
        return []
    return sorted(p.name[: -len(".txt")] for p in folder.iterdir() if p.name.endswith(".txt"))


def feature_ranges(name: str) -> str:
    """feature_ranges(name: str) -> str
    The path of the public feature ranges file hsdp ships for data set `name` (one of
    breast_cancer, digits, wine): "min max" per feature, from the data set's documentation;
    pass it as hsdp.train(feature_ranges=...) or `hsdp train --feature-ranges`. Ranges fixed
    before anyone looks at the records cost no privacy (docs/data.md, "Public feature ranges")."""
    if not isinstance(name, str):
        raise TypeError("feature_ranges(): keyword 'name' expects str, got %s (%r)" % (type(name).__name__, name))
    names = _names()
    if name not in names:
        raise ValueError("name = %r: must be one of %s (the ranges hsdp ships; any other data set's come from "
                         "its documentation, as a file of 'min max' lines)" % (name, ", ".join(names) or "none"))
    return str(importlib.resources.files("hsdp").joinpath("feature_ranges", name + ".txt"))
