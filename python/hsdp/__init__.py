"""hsdp: differential privacy of the last iterate of noisy gradient descent.

The package: everything of the extension module (hsdp._hsdp: hsdp.Run, hsdp.account,
hsdp.calibrate, hsdp.plan, hsdp.train, hsdp.load_model, ...; its docstring below) and two
pure-Python submodules, imported on first use so that `import hsdp` needs neither torch nor
scikit-learn:
  hsdp.torch    a privacy engine for convex models in PyTorch, certified from its ledger
  hsdp.sklearn  scikit-learn estimators (fit / predict / score, privacy_report_)
"""

import importlib as _importlib
import types as _types
import typing as _typing

try:
    from hsdp import _hsdp
except ImportError as _error:  # pragma: no cover - what a user sees when the build is missing
    raise ImportError(
        f"hsdp: the extension module hsdp._hsdp cannot be loaded ({_error}). It is built for one "
        "interpreter: use the python3 it was built with (Debian's /usr/bin/python3, or a venv made "
        "from it with --system-site-packages; docs/python.md)") from _error

from hsdp._hsdp import *  # noqa: F401,F403  (every public name of the extension)

__doc__ = (__doc__ or "") + "\n" + (_hsdp.__doc__ or "")
__version__ = _hsdp.__version__
from hsdp._feature_ranges import feature_ranges  # noqa: E402,F401  (the ranges files shipped as package data)
__all__ = [_name for _name in dir(_hsdp) if not _name.startswith("_")]
_train_fields = _hsdp._train_fields  # the training request's table (tests and tools read it)

_SUBMODULES = ("torch", "sklearn")

if _typing.TYPE_CHECKING:  # what the lazy attributes below are (the generated __init__.pyi says the same)
    from hsdp import sklearn as sklearn  # noqa: F401
    from hsdp import torch as torch  # noqa: F401


def __getattr__(name: str) -> _types.ModuleType:
    # `import hsdp; hsdp.sklearn.LogisticRegression(...)` imports the submodule on first use.
    if name in _SUBMODULES:
        return _importlib.import_module(f"hsdp.{name}")
    raise AttributeError(f"module 'hsdp' has no attribute '{name}'")
