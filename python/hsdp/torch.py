"""hsdp.torch: a privacy engine for convex models in PyTorch, certified from its ledger.

The engine owns everything the certificate depends on (docs/python.md, "hsdp.torch: a privacy
engine"):

* the records: a copy of x and y made when the engine is made, every record checked against
  the stated bound (record_norm, with the bias feature) there, and the copy's digest checked
  again when the certificate is computed;
* the batch order: `engine.sampler` (a torch batch Sampler) and `engine.data_loader()` serve
  hsdp's orders -- shuffle (drop_last True or False), Poisson, fixed-size, cyclic -- drawn from
  hsdp's CSPRNG (hsdp.Generator, hsdp.BatchOrder: the orders of `hsdp train`); the order is
  private and every draw is served in turn (a batch drawn ahead and not stepped, e.g. by a
  DataLoader's workers when a loop leaves an epoch early, is served again first);
* the private step `engine.step(batch)`: closed-form per-example gradients of a linear model
  (exactly torch.nn.Linear) under the logistic, softmax or squared loss, the stated record
  bound enforced (or the gradients clipped), the batch mean (or sum), the step size, hsdp's
  noise on its grid (hsdp.Generator.add_grid_noise, the trainer's construction) and the
  projection onto a ball;
* a sealed ledger of every step: the batch drawn and the batch used, the largest per-example
  gradient norm against the bound, the noise std, the step size, the radius, a checksum of the
  parameters before and after, each entry chained to the previous one by SHA-256 and the chain's
  head sealed with a per-engine key (HMAC-SHA-256, the key drawn from hsdp's CSPRNG and never
  written); `state_dict()` / `load_state_dict()` carry the ledger across a resume.

`engine.certificate(delta)` recomputes the chain, builds the hsdp.Run from the ledger (never
from typed numbers) and calls hsdp.account. A step the ledger cannot vouch for -- parameters
changed outside the engine or not produced by the ledger's steps, a batch its sampler did not
serve for that step, records changed after the engine was made, the noise std or the step size
changed between steps, a record above the stated bound, noise that left the grid's exact range,
a broken chain, a declared data-dependent stop under the last-iterate analyses, a seeded
generator -- makes the certificate refuse: certificate() returns a Certificate with certified
False and the reason; get_epsilon() raises LedgerError with the same reason. Every number the
engine shows names its adjacency.

Threat model (docs/python.md, "What the seal protects"): the engine guards the certificate
against a training script's mistakes and misuse through its API (an optimizer step of its own,
another DataLoader, an edited tensor, a truncated ledger, a resumed run, a fresh engine on
trained weights in the same process). Code in the same process can read the engine's key and
rewrite anything; the seal is not a defence against it, and a state_dict file is as trustworthy
as the place it is kept.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import numbers
import struct
import time
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt
import torch
from torch.utils.data import DataLoader, Dataset, Sampler

import hsdp

__all__ = ["PrivacyEngine", "Certificate", "LedgerEntry", "LedgerError", "make_private",
           "make_private_with_epsilon", "adjacency_name"]

LOSSES = ("logistic", "softmax", "squared")
SAMPLINGS = ("shuffle", "poisson", "fixed", "cyclic")
STATE_FORMAT = "hsdp.torch.PrivacyEngine.state/1"

_ADJACENCY = {"replace": "replace-one adjacency (one record replaced)",
              "remove": "add/remove-one adjacency (one record added or removed; Opacus, dp_accounting)"}
# Norms within this relative slack of a bound are rounding: per-example gradients are scaled
# onto the bound (so it holds exactly); records are accepted (their gradients are then scaled).
_ROUNDING = 2.0 ** -40

Indices = npt.NDArray[np.int64]


def adjacency_name(adjacency: str) -> str:
    """The adjacency in words, as every number the engine shows names it."""
    return _ADJACENCY[adjacency]


class LedgerError(RuntimeError):
    """The ledger cannot vouch for the run: `reason` says which step and why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# ----------------------------------------------------------------- argument checks
# One validator for every entry point of this module, worded as the extension's call wrapper
# words them (python/src/call.cpp): a wrong type is a TypeError naming the function, the
# keyword and the type given; a value out of range a ValueError "name = value: must be ...".
# numpy and 0-d integer / floating values are accepted like Python numbers; bool is not a
# number (True would be 1).

def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _type_error(where: str, name: str, expected: str, value: Any) -> TypeError:
    return TypeError("%s(): keyword '%s' expects %s, got %s (%s)"
                     % (where, name, expected, type(value).__name__, _shown(value)))


def _scalar(value: Any) -> Any:
    """A 0-d numpy array or torch tensor as its Python scalar; anything else unchanged."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value.item()
    if isinstance(value, torch.Tensor) and value.dim() == 0:
        return value.item()
    return value


def _integer(where: str, name: str, value: Any, lo: int, hi: Optional[int] = None, hi_text: str = "") -> int:
    """An integer in [lo, hi] (hi None: no upper bound)."""
    value = _scalar(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, np.integer)):
        raise _type_error(where, name, "int", value)
    v = int(value)
    if hi is None and v < lo:
        raise ValueError("%s = %d: must be an integer >= %d" % (name, v, lo))
    if hi is not None and not lo <= v <= hi:
        raise ValueError("%s = %d: must be an integer in [%d, %s]" % (name, v, lo, hi_text or "%d" % hi))
    return v


def _real(where: str, name: str, value: Any, *, positive: bool = False, nonnegative: bool = False,
          below_one: bool = False) -> float:
    """A finite real number, > 0 (positive), >= 0 (nonnegative), in (0, 1) (below_one)."""
    value = _scalar(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise _type_error(where, name, "float", value)
    v = float(value)
    if below_one:
        if not (0.0 < v < 1.0):
            raise ValueError("%s = %r: must be a number in (0, 1)" % (name, v))
    elif positive and not (math.isfinite(v) and v > 0):
        raise ValueError("%s = %r: must be a positive finite number" % (name, v))
    elif nonnegative and not (math.isfinite(v) and v >= 0):
        raise ValueError("%s = %r: must be a finite number >= 0" % (name, v))
    elif not math.isfinite(v):
        raise ValueError("%s = %r: must be a finite number" % (name, v))
    return v


def _optional_real(where: str, name: str, value: Any) -> Optional[float]:
    """None, or a positive finite number."""
    if value is None:
        return None
    try:
        return _real(where, name, value, positive=True)
    except ValueError:
        raise ValueError("%s = %r: must be a positive finite number (or None)" % (name, _scalar(value))) from None
    except TypeError:
        raise _type_error(where, name, "Optional[float]", value) from None


def _choice(where: str, name: str, value: Any, options: Sequence[str]) -> str:
    if not isinstance(value, str):
        raise _type_error(where, name, "str (one of %s)" % ", ".join(options), value)
    if value not in options:
        raise ValueError("%s = %r: must be one of %s" % (name, value, ", ".join(options)))
    return value


def _flag(where: str, name: str, value: Any) -> bool:
    value = _scalar(value)
    if not isinstance(value, (bool, np.bool_)):
        raise _type_error(where, name, "bool", value)
    return bool(value)


# ----------------------------------------------------------------- the ledger
@dataclass(frozen=True)
class LedgerEntry:
    """One engine step as the ledger recorded it (sealed: `digest` chains it to the previous
    entry; an edit anywhere breaks the chain and the certificate refuses)."""
    step: int                       # 1-based, over the whole (resumed) run
    indices: Indices                # the records the step read
    drawn: bool                     # True when the engine's sampler served exactly this batch for this step
    batch_size: int
    normaliser: float               # the gradient is the sum over the batch divided by this
    bound: float                    # the per-example gradient bound enforced (L, or the clip norm C)
    max_gradient_norm: float        # the largest per-example gradient norm before clipping
    clipped: int                    # per-example gradients scaled down (clipping)
    eta: float
    noise_std: float
    radius: Optional[float]
    checksum_before: str
    checksum_after: str
    out_of_range: int               # noisy values outside the grid's exact range
    seconds: float
    problems: Tuple[str, ...] = ()  # why the ledger cannot vouch for this step
    segment: int = 0                # 0 for the first engine, k for the k-th resume
    randomness: str = ""            # the segment's generator, in words
    digest: str = ""                # SHA-256 of the previous digest and this entry's fields

    @property
    def vouched(self) -> bool:
        """True when the ledger vouches for this step (no problem recorded)."""
        return not self.problems

    def to_dict(self) -> Dict[str, Any]:
        """The entry as plain values (state_dict() stores these)."""
        return {"step": self.step, "indices": [int(i) for i in self.indices], "drawn": self.drawn,
                "batch_size": self.batch_size, "normaliser": self.normaliser, "bound": self.bound,
                "max_gradient_norm": self.max_gradient_norm, "clipped": self.clipped, "eta": self.eta,
                "noise_std": self.noise_std, "radius": self.radius, "checksum_before": self.checksum_before,
                "checksum_after": self.checksum_after, "out_of_range": self.out_of_range, "seconds": self.seconds,
                "problems": list(self.problems), "segment": self.segment, "randomness": self.randomness,
                "digest": self.digest}

    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> "LedgerEntry":
        return LedgerEntry(step=int(d["step"]), indices=np.asarray(d["indices"], dtype=np.int64).reshape(-1),
                           drawn=bool(d["drawn"]), batch_size=int(d["batch_size"]),
                           normaliser=float(d["normaliser"]), bound=float(d["bound"]),
                           max_gradient_norm=float(d["max_gradient_norm"]), clipped=int(d["clipped"]),
                           eta=float(d["eta"]), noise_std=float(d["noise_std"]),
                           radius=None if d["radius"] is None else float(d["radius"]),
                           checksum_before=str(d["checksum_before"]), checksum_after=str(d["checksum_after"]),
                           out_of_range=int(d["out_of_range"]), seconds=float(d["seconds"]),
                           problems=tuple(str(p) for p in d["problems"]), segment=int(d["segment"]),
                           randomness=str(d["randomness"]), digest=str(d["digest"]))


def _float_bytes(v: Optional[float]) -> bytes:
    return b"none" if v is None else struct.pack("<d", float(v))


def _link(previous: str, e: LedgerEntry) -> str:
    """The chain digest through entry e: SHA-256 over the previous digest and every field of e
    but its own digest, each field length-prefixed (no two entries share an encoding)."""
    h = hashlib.sha256()
    fields: List[bytes] = [
        bytes.fromhex(previous), struct.pack("<q", e.step), np.ascontiguousarray(e.indices, dtype="<i8").tobytes(),
        b"\x01" if e.drawn else b"\x00", struct.pack("<q", e.batch_size), _float_bytes(e.normaliser),
        _float_bytes(e.bound), _float_bytes(e.max_gradient_norm), struct.pack("<q", e.clipped),
        _float_bytes(e.eta), _float_bytes(e.noise_std), _float_bytes(e.radius), e.checksum_before.encode(),
        e.checksum_after.encode(), struct.pack("<q", e.out_of_range), _float_bytes(e.seconds),
        "\x00".join(e.problems).encode(), struct.pack("<q", e.segment), e.randomness.encode()]
    for f in fields:
        h.update(struct.pack("<q", len(f)))
        h.update(f)
    return h.hexdigest()


def _checksum(tensors: Sequence[torch.Tensor]) -> str:
    h = hashlib.blake2b(digest_size=16)
    for t in tensors:
        h.update(str(t.dtype).encode())
        h.update(t.detach().to("cpu").contiguous().numpy().tobytes())
    return h.hexdigest()


def _data_digest(x: torch.Tensor, y: torch.Tensor) -> str:
    h = hashlib.sha256()
    for t in (x, y):
        h.update(str(t.dtype).encode() + str(tuple(t.shape)).encode())
        h.update(t.detach().to("cpu").contiguous().numpy().tobytes())
    return h.hexdigest()


# Parameters some engine's step produced in this process (checksum -> (engine, step)): a new
# engine made on such parameters certifies nothing until load_state_dict() gives it the ledger
# that produced them. Weights saved and loaded in another process cannot be recognised: the
# initial parameters must not depend on the data (docs/python.md, "Resume").
_PRODUCED: Dict[str, Tuple[int, int]] = {}
_ENGINES = [0]


@dataclass(frozen=True)
class Certificate:
    """The privacy of the model the engine's steps produced, or why there is none.

    certified: True when every step is vouched for and an analysis applies; epsilon at delta
    under `adjacency` (the best bound of hsdp.account on `run`, the run the ledger recorded);
    add_remove_epsilon: the same run under add/remove-one adjacency when adjacency is
    replace-one (None where not derived; add_remove_reason says why). reason: why the
    certificate is refused (empty otherwise). notes: what the certificate assumes that the
    engine cannot see (e.g. a run stopped before its planned steps)."""
    certified: bool
    reason: str
    delta: float
    adjacency: str
    epsilon: Optional[float] = None
    analysis: Optional[str] = None
    add_remove_epsilon: Optional[float] = None
    add_remove_reason: str = ""
    steps: int = 0
    randomness: str = ""
    run: Optional[hsdp.Run] = None
    report: Optional[hsdp.Report] = None
    notes: Tuple[str, ...] = ()

    def __str__(self) -> str:
        if not self.certified:
            return "no certificate (%s): %s" % (adjacency_name(self.adjacency), self.reason)
        text = "epsilon = %.6f at delta = %g under %s (%s; %d engine steps, from the ledger)" % (
            float(self.epsilon or 0.0), self.delta, adjacency_name(self.adjacency), self.analysis, self.steps)
        if self.add_remove_epsilon is not None:
            text += "; epsilon = %.6f under %s" % (self.add_remove_epsilon, adjacency_name("remove"))
        elif self.add_remove_reason:
            text += "; under %s: not derived (%s)" % (adjacency_name("remove"), self.add_remove_reason)
        for note in self.notes:
            text += "; note: " + note
        return text

    def to_dict(self) -> Dict[str, Any]:
        """The certificate as JSON-ready values (the report's own JSON under "report")."""
        import json
        return {"certified": self.certified, "reason": self.reason, "epsilon": self.epsilon, "delta": self.delta,
                "adjacency": self.adjacency, "adjacency_name": adjacency_name(self.adjacency),
                "analysis": self.analysis, "add_remove_epsilon": self.add_remove_epsilon,
                "add_remove_reason": self.add_remove_reason, "steps": self.steps,
                "randomness": self.randomness, "notes": list(self.notes),
                "report": json.loads(self.report.to_json()) if self.report is not None else None}


class _Records(Dataset[Tuple[torch.Tensor, torch.Tensor, torch.Tensor]]):
    """The engine's records, read a batch at a time: records[indices] is (x[indices],
    y[indices], indices)."""

    def __init__(self, x: torch.Tensor, y: torch.Tensor) -> None:
        self.x, self.y = x, y

    def __len__(self) -> int:
        return int(self.x.shape[0])

    def __getitem__(self, indices: List[int]) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        idx = torch.as_tensor(indices, dtype=torch.int64, device=self.x.device)
        return self.x[idx], self.y[idx], idx


class EngineSampler(Sampler[List[int]]):
    """A torch batch sampler (DataLoader(batch_sampler=...)) serving the engine's order: each
    iteration yields len(sampler) batches as lists of record indices, starting at the engine's
    next step: batches drawn earlier and not stepped (a loop that left an epoch early while a
    DataLoader's workers had fetched ahead) are served again first, then new draws. No draw is
    ever skipped, so the steps follow the order's law."""

    def __init__(self, engine: "PrivacyEngine") -> None:
        self._engine = engine

    def __len__(self) -> int:
        return self._engine.batches_per_epoch()

    def __iter__(self) -> Iterator[List[int]]:
        engine = self._engine
        engine._restart_serving()
        for _ in range(len(self)):
            yield engine._serve().tolist()


_WHERE = "PrivacyEngine"


class PrivacyEngine:
    """A private trainer of a linear model (exactly torch.nn.Linear) on records x (n x d) with
    labels y, certified from the sealed ledger of the steps it took.

    loss: "logistic" (one output, labels -1 / +1), "softmax" (k >= 2 outputs, labels 0..k-1) or
    "squared" (one output, real labels with |y| <= label_bound).
    record_norm: R, a bound on the norm of every record (x, 1) with the bias (x without one),
    stated by you from public knowledge (e.g. records mapped by public feature ranges and scaled
    to norm <= R); every record is checked against it when the engine is made (a record above it
    is refused: ValueError naming the record). It gives the per-example gradient bound L and the
    smoothness beta (logistic L = R, beta = R^2/4; softmax L = sqrt(2) R, beta = R^2/2; squared
    L = R (R radius + label_bound), beta = R^2).
    clip: C, per-example gradients scaled to norm <= C (DP-SGD); when C < L (or no record_norm)
    clipping can act and only the analyses valid for clipped gradients apply (composition).
    batch_size, sampling ("shuffle", "poisson", "fixed", "cyclic"), drop_last (shuffle only:
    False keeps the partial last batch of each epoch, averaged over its own records).
    eta: the step size (default 1.98 / beta when beta is known). noise_std: the std of the noise
    added to every parameter at every step (in parameter space). reduction: "mean" (the batch
    gradient is the mean; for Poisson the sum over the expected size b) or "sum" (certified as
    the mean with step size eta b). radius: the parameters are projected onto the ball of this
    radius after every step (None: no projection). adjacency: "replace" (one record replaced,
    hsdp's default) or "remove" (one added or removed: Opacus's). release: "last" (only the final
    model is published) or "every". planned_steps: T, the steps planned before training (fixed
    in advance, independent of the data); it is what a declared early stop is accounted against
    (stop_early). seed: None draws from operating-system entropy; an integer keys the generator
    from it (for experiments, not for release: certificate() refuses unless experiment=True)."""

    def __init__(self, model: torch.nn.Linear, x: torch.Tensor, y: torch.Tensor, *, loss: str, batch_size: int,
                 noise_std: float, record_norm: Optional[float] = None, clip: Optional[float] = None,
                 eta: Optional[float] = None, sampling: str = "shuffle", drop_last: bool = True,
                 reduction: str = "mean", radius: Optional[float] = None, label_bound: float = 1.0,
                 adjacency: str = "replace", release: str = "last", planned_steps: Optional[int] = None,
                 seed: Optional[int] = None) -> None:
        w = _WHERE
        if type(model) is not torch.nn.Linear:
            raise TypeError("PrivacyEngine: model must be exactly a torch.nn.Linear (a linear model), got %s: a "
                            "subclass or another module may hold parameters, buffers or code beyond the linear "
                            "model, which the certificate does not cover" % type(model).__name__)
        _check_module(model, "the model")
        loss = _choice(w, "loss", loss, LOSSES)
        sampling = _choice(w, "sampling", sampling, SAMPLINGS)
        reduction = _choice(w, "reduction", reduction, ("mean", "sum"))
        adjacency = _choice(w, "adjacency", adjacency, tuple(_ADJACENCY))
        release = _choice(w, "release", release, ("last", "every"))
        drop_last = _flag(w, "drop_last", drop_last)
        record_norm = _optional_real(w, "record_norm", record_norm)
        clip = _optional_real(w, "clip", clip)
        eta = _optional_real(w, "eta", eta)
        radius = _optional_real(w, "radius", radius)
        noise_std = _real(w, "noise_std", noise_std, nonnegative=True)
        label_bound = _real(w, "label_bound", label_bound, positive=True)
        if seed is not None:
            seed = _integer(w, "seed", seed, 0, 2 ** 64 - 1, "2**64 - 1")
        if record_norm is None and clip is None:
            raise ValueError("record_norm = None and clip = None: state a bound on every record's norm "
                             "(record_norm=R, public knowledge) or clip per-example gradients (clip=C)")
        if model.weight.dtype != torch.float64 or (model.bias is not None and model.bias.dtype != torch.float64):
            raise TypeError("PrivacyEngine: the model's parameters must be torch.float64 (model.double()): hsdp's "
                            "noise grid is exact in doubles (docs/security.md)")
        if not isinstance(x, torch.Tensor) or not isinstance(y, torch.Tensor):
            raise TypeError("PrivacyEngine(): x and y must be torch tensors, got %s and %s"
                            % (type(x).__name__, type(y).__name__))
        k_out = model.out_features
        if loss in ("logistic", "squared") and k_out != 1:
            raise ValueError("loss = %r needs a model with one output, got out_features = %d" % (loss, k_out))
        if loss == "softmax" and k_out < 2:
            raise ValueError("loss = 'softmax' needs out_features >= 2, got %d" % k_out)
        if x.dim() != 2 or x.shape[1] != model.in_features or y.dim() != 1 or y.shape[0] != x.shape[0]:
            raise ValueError("x must be n x %d (model.in_features) and y must hold n labels; got x %s, y %s"
                             % (model.in_features, tuple(x.shape), tuple(y.shape)))
        n = int(x.shape[0])
        if n < 1:
            raise ValueError("x: no records (n = 0)")
        batch_size = _integer(w, "batch_size", batch_size, 1, n, "n = %d" % n)
        if planned_steps is not None:
            planned_steps = _integer(w, "planned_steps", planned_steps, 1)
        if not drop_last and sampling != "shuffle":
            raise ValueError("drop_last = False: only for sampling = 'shuffle'")
        device = model.weight.device
        # The engine's own copy: an edit of the caller's tensors after this line changes nothing.
        own_x = x.detach().to(device=device, dtype=torch.float64).clone()
        own_y = y.detach().to(device=device, dtype=torch.int64 if loss == "softmax" else torch.float64).clone()
        if not bool(torch.isfinite(own_x).all()) or not bool(torch.isfinite(own_y).all()):
            raise ValueError("x, y: every value must be finite")
        if loss == "logistic" and not bool(((own_y == 1) | (own_y == -1)).all()):
            raise ValueError("y: loss = 'logistic' needs labels -1 and +1")
        if loss == "softmax" and not bool(((y >= 0) & (y < k_out) & (y == torch.round(y.double()))).all()):
            raise ValueError("y: loss = 'softmax' needs class labels 0..%d (out_features = %d)" % (k_out - 1, k_out))
        if loss == "squared" and float(own_y.abs().max()) > label_bound:
            worst = int(torch.argmax(own_y.abs()))
            raise ValueError("y: record %d's label %.6g exceeds label_bound = %g" % (worst, float(own_y[worst]),
                                                                                   label_bound))
        bias = model.bias is not None
        if record_norm is not None:
            # The record bound, enforced on the records themselves (not only on the gradients at
            # the points training happens to visit): |(x, 1)| <= R with the bias feature, as
            # the library defines the record norm (docs/training.md).
            norms = _record_norms(own_x, bias)
            worst = int(torch.argmax(norms))
            if float(norms[worst]) > record_norm * (1.0 + _ROUNDING):
                raise ValueError(
                    "x: record %d has norm %.6g%s, above record_norm = %.6g (%d of %d records are): the bound "
                    "must hold for every record. Map the features by public ranges and scale each record to "
                    "norm <= %s (record-local), or clip per-example gradients (clip=C, record_norm=None)"
                    % (worst, float(norms[worst]), " with the bias feature 1" if bias else "", record_norm,
                       int((norms > record_norm * (1.0 + _ROUNDING)).sum()), n,
                       "sqrt(R^2 - 1)" if bias else "R"))
        # Plain attributes first (the guard below refuses setting them once made).
        self.model = model
        self.loss = loss
        self._x = own_x
        self._y = own_y
        self._data_digest = _data_digest(own_x, own_y)
        self.n = n
        self.batch_size = batch_size
        self.sampling = sampling
        self.drop_last = drop_last
        self.reduction = reduction
        self.radius = radius
        self.label_bound = label_bound
        self.adjacency = adjacency
        self.release = release
        self.record_norm = record_norm
        self.clip = clip
        self.planned_steps = planned_steps
        self.bias = bias
        self._params: List[torch.Tensor] = [p for p in (model.weight, model.bias) if p is not None]
        self.dimension = sum(int(p.numel()) for p in self._params)
        # The loss class over records with |(x, 1)| <= R (hsdp's derive_constants).
        lipschitz: Optional[float] = None
        smoothness: Optional[float] = None
        if record_norm is not None:
            r2 = record_norm * record_norm
            if loss == "logistic":
                lipschitz, smoothness = record_norm, r2 / 4.0
            elif loss == "softmax":
                lipschitz, smoothness = math.sqrt(2.0) * record_norm, r2 / 2.0
            else:
                smoothness = r2
                if radius is not None:
                    lipschitz = record_norm * (record_norm * radius + label_bound)
        self.lipschitz = lipschitz
        self.smoothness = smoothness
        self.clipping_acts = clip is not None and (lipschitz is None or clip < lipschitz)
        if lipschitz is None and clip is None:
            raise ValueError("loss = 'squared' without radius has no per-example gradient bound: state radius "
                             "(the projection bounds |w|) or clip")
        if eta is None:
            if smoothness is None or self.clipping_acts:
                raise ValueError("eta = None: state the step size (no smoothness to derive 1.98 / beta from)")
            eta = 1.98 / smoothness
        self._eta = float(eta)
        self._noise_std = float(noise_std)
        self.generator = hsdp.Generator(seed=seed)
        self._order = hsdp.BatchOrder(sampling, n=n, batch_size=batch_size, generator=self.generator,
                                      drop_last=drop_last)
        self._batches_per_epoch = int(self._order.batches_per_epoch)
        self.sampler = EngineSampler(self)
        self._ledger: List[LedgerEntry] = []
        self._draws: List[Indices] = []    # this segment's draws, in order
        self._served = 0                   # the next draw the sampler serves
        self._offset = 0                   # steps of earlier segments (a resume)
        self._segment = 0
        self._identity = [id(p) for p in self._params]
        _ENGINES[0] += 1
        self._serial = _ENGINES[0]
        # The seal's key: SHA-256 of 16 discrete Gaussian draws of std 1 on a grid of spacing
        # <= 2^-32 (about 34 bits of entropy each) from hsdp's CSPRNG keyed from operating-system
        # entropy (a generator of its own, so that a seeded engine's order and noise are
        # unchanged by it). Kept in memory only: never in state_dict().
        key_material, _ = hsdp.Generator().add_grid_noise(np.zeros(16), std=1.0)
        self._key = hashlib.sha256(np.asarray(key_material, dtype=np.float64).tobytes()).digest()
        self._checksum = _checksum(self._params)
        self._initial_checksum = self._checksum
        self._final: List[torch.Tensor] = [p.detach().clone() for p in self._params]
        self._genesis = self._make_genesis(self._initial_checksum)
        self._stop: Optional[Tuple[int, str, bool]] = None
        self._seal = self._sealed(self._genesis, 0, None)
        produced = _PRODUCED.get(self._checksum)
        self._start_problem = "" if produced is None else (
            "the initial parameters are the output of step %d of another engine (engine #%d) in this process: a "
            "new engine certifies only its own steps, so the earlier steps would go unaccounted; resume with "
            "engine.load_state_dict(earlier.state_dict()) to carry their ledger" % (produced[1], produced[0]))
        self.calibration: Optional[hsdp.CalibrationResult] = None
        self._constructed = True

    # What the certificate reads besides the ledger's per-step values is fixed at construction.
    # noise_std and eta may be set (validated when set): the ledger records them at every step
    # and refuses a change mid-run.
    _FIXED = frozenset({"model", "loss", "n", "batch_size", "sampling", "drop_last", "reduction", "radius",
                        "label_bound", "adjacency", "release", "record_norm", "clip", "planned_steps", "bias",
                        "dimension", "lipschitz", "smoothness", "clipping_acts", "generator", "sampler",
                        "ledger", "x", "y", "order", "parameters"})

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self._FIXED and getattr(self, "_constructed", False):
            raise AttributeError("PrivacyEngine.%s is fixed when the engine is made (the certificate depends on it): "
                                 "make a new engine" % name)
        super().__setattr__(name, value)

    @property
    def noise_std(self) -> float:
        """The std of the noise added to every parameter at the next step (>= 0, finite)."""
        return self._noise_std

    @noise_std.setter
    def noise_std(self, value: float) -> None:
        self._noise_std = _real("PrivacyEngine.noise_std", "noise_std", value, nonnegative=True)

    @property
    def eta(self) -> float:
        """The step size of the next step (> 0, finite)."""
        return self._eta

    @eta.setter
    def eta(self, value: float) -> None:
        self._eta = _real("PrivacyEngine.eta", "eta", value, positive=True)

    @property
    def x(self) -> torch.Tensor:
        """A copy of the engine's records (editing it changes nothing the engine reads)."""
        return self._x.clone()

    @property
    def y(self) -> torch.Tensor:
        """A copy of the engine's labels."""
        return self._y.clone()

    @property
    def ledger(self) -> Tuple[LedgerEntry, ...]:
        """The ledger's entries, in order (a tuple: the engine's own list is sealed)."""
        return tuple(self._ledger)

    @property
    def parameters(self) -> List[torch.Tensor]:
        """The model's parameters the engine trains (weight, then bias)."""
        return list(self._params)

    def _plan(self, steps: int) -> None:
        """Fix the planned T before the first step (make_private_with_epsilon's calibration)."""
        assert not self._ledger and not self._draws
        object.__setattr__(self, "planned_steps", steps)
        self._genesis = self._make_genesis(self._initial_checksum)
        self._seal = self._sealed(self._genesis, 0, None)

    # ----------------------------------------------------------------- the seal
    def _config(self) -> Dict[str, Any]:
        """Everything the certificate reads that is fixed when the engine is made."""
        return {"loss": self.loss, "n": self.n, "in_features": self.model.in_features,
                "out_features": self.model.out_features, "bias": self.bias, "batch_size": self.batch_size,
                "sampling": self.sampling, "drop_last": self.drop_last, "reduction": self.reduction,
                "radius": self.radius, "label_bound": self.label_bound, "adjacency": self.adjacency,
                "release": self.release, "record_norm": self.record_norm, "clip": self.clip,
                "planned_steps": self.planned_steps}

    def _make_genesis(self, initial_checksum: str) -> str:
        h = hashlib.sha256(STATE_FORMAT.encode())
        h.update(repr(sorted(self._config().items())).encode())
        h.update(self._data_digest.encode())
        h.update(initial_checksum.encode())
        return h.hexdigest()

    def _sealed(self, head: str, count: int, stop: Optional[Tuple[int, str, bool]]) -> str:
        message = "%s|%d|%r" % (head, count, stop)
        return hmac.new(self._key, message.encode(), hashlib.sha256).hexdigest()

    def _head(self) -> str:
        return self._ledger[-1].digest if self._ledger else self._genesis

    def _chain_problems(self) -> List[str]:
        """The chain recomputed from the genesis: an edited, removed or reordered entry, or a
        ledger that is not the one the engine sealed, is a problem."""
        previous = self._genesis
        for k, e in enumerate(self._ledger, start=1):
            if e.step != k or _link(previous, e) != e.digest:
                return ["the ledger's chain is broken at entry %d (an entry edited, removed or reordered): the ledger "
                        "is not the one the engine's steps wrote" % k]
            previous = e.digest
        if not hmac.compare_digest(self._sealed(previous, len(self._ledger), self._stop), self._seal):
            return ["the ledger is not the one the engine sealed (%d entries now; entries were removed, added or "
                    "replaced, or the stop declaration was changed)" % len(self._ledger)]
        return []

    # ----------------------------------------------------------------- the order
    def _restart_serving(self) -> None:
        self._served = len(self._ledger) - self._offset

    def _serve(self) -> Indices:
        if self._served < len(self._draws):
            idx = self._draws[self._served]
        else:
            idx = np.asarray(self._order.next(), dtype=np.int64)
            self._draws.append(idx)
        self._served += 1
        return idx

    def data_loader(self, **options: Any) -> DataLoader[Tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
        """A DataLoader over the engine's records in the engine's order (engine.sampler: one epoch
        per iteration, starting at the next step): each item is (x_batch, y_batch, indices); pass
        it to step() as it comes. options: DataLoader's keywords other than the order's
        (num_workers, pin_memory, prefetch_factor, ...)."""
        for key in ("batch_size", "shuffle", "sampler", "batch_sampler", "drop_last"):
            if key in options:
                raise TypeError("data_loader(): keyword '%s' is the engine's (its order is drawn by the engine)" % key)
        return DataLoader(_Records(self._x, self._y), sampler=self.sampler, batch_size=None, **options)

    def batches_per_epoch(self) -> int:
        """Steps per epoch of the engine's order (len(engine.sampler))."""
        return self._batches_per_epoch

    # ----------------------------------------------------------------- the step
    def _normaliser(self, size: int) -> float:
        if self.reduction == "sum":
            return 1.0
        if self.sampling == "shuffle" and size < self.batch_size:
            return float(size)  # the partial last batch: the mean over its own records
        return float(self.batch_size)  # Poisson: the expected batch size (as hsdp train)

    def _state_problems(self, k: int) -> List[str]:
        """What happened outside the engine since its last step (checked before step k)."""
        problems: List[str] = []
        if [id(p) for p in self._params] != self._identity or \
                [id(p) for p in (self.model.weight, self.model.bias) if p is not None] != self._identity:
            problems.append("step %d: the model's parameter tensors were replaced outside the engine" % k)
        extra = _module_extras(self.model)
        if extra:
            problems.append("step %d: %s" % (k, extra))
        if self._order.steps != self._offset_draws():
            problems.append("step %d: the engine's order was drawn outside the engine (%d draws, %d served): a draw "
                            "skipped unseen would change the order the certificate assumes"
                            % (k, int(self._order.steps), self._offset_draws()))
        return problems

    def _offset_draws(self) -> int:
        return len(self._draws)

    def step(self, batch: Sequence[torch.Tensor]) -> LedgerEntry:
        """One private step on batch = (x_batch, y_batch, indices), as the engine's data_loader()
        yields it: per-example gradients, the bound or clipping, the batch mean (or sum), the
        step, hsdp's grid noise, the projection. The step is taken whatever the batch; the ledger
        records what it cannot vouch for. Returns the ledger entry."""
        started = time.perf_counter()
        k = len(self._ledger) + 1
        j = k - self._offset   # the step within this engine's segment
        if not isinstance(batch, (tuple, list)) or len(batch) != 3 or \
                not all(isinstance(t, torch.Tensor) for t in batch):
            raise ValueError("step(batch): batch must be (x_batch, y_batch, indices), torch tensors, as "
                             "engine.data_loader() yields it")
        if self.model.weight.dtype != torch.float64:
            raise TypeError("step(): the model's parameters are %s now: the engine steps float64 parameters "
                            "(a cast belongs after the last step)" % self.model.weight.dtype)
        problems = self._state_problems(k)
        if k == 1 and self._start_problem:
            problems.append("step 1: " + self._start_problem)
        before = _checksum(self._params)
        if before != self._checksum:
            problems.append("step %d: the parameters changed outside the engine after %s (an optimizer step or an "
                            "edit the ledger cannot vouch for)" % (k, "step %d" % (k - 1) if k > 1 else "it started"))
        if self._stop is not None:
            problems.append("step %d: taken after the stop declared at step %d" % (k, self._stop[0]))
        xb, yb, ib = batch[0], batch[1], batch[2]
        idx = ib.detach().to("cpu").numpy().astype(np.int64).reshape(-1)
        if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= self.n):
            raise ValueError("step(batch): indices must be record numbers in [0, n - 1 = %d]; got %d .. %d"
                             % (self.n - 1, int(idx.min()), int(idx.max())))
        # Vouched: the batch the sampler served as this segment's j-th draw (drawing ahead, e.g.
        # list(loader), changes nothing; a skipped, reused or foreign batch is caught here).
        drawn = False
        if j <= len(self._draws):
            drawn = bool(np.array_equal(idx, self._draws[j - 1]))
            if not drawn:
                problems.append("step %d: its batch (%d records) is not the batch the engine's sampler drew for step "
                                "%d (%d records)%s" % (k, len(idx), k, len(self._draws[j - 1]), self._which(idx, j)))
        else:
            problems.append("step %d: the engine's sampler drew no batch for this step (a batch from another loader "
                            "or reused from an earlier step%s)" % (k, self._which(idx, j)))
        xb = xb.to(self._x.device, torch.float64)
        yb = yb.to(self._y.device, self._y.dtype)
        size = int(xb.shape[0])
        if drawn:
            ii = ib.to(self._x.device).reshape(-1)
            own_x, own_y = self._x[ii], self._y[ii]
            if not (xb.shape == own_x.shape and torch.equal(xb, own_x) and yb.shape == own_y.shape
                    and torch.equal(yb, own_y)):
                drawn = False
                problems.append("step %d: the batch's records differ from the engine's records at its indices" % k)
        if xb.dim() != 2 or xb.shape[1] != self.model.in_features or yb.dim() != 1 or yb.shape[0] != size:
            raise ValueError("step(batch): x_batch must be b x %d and y_batch must hold b labels; got %s, %s"
                             % (self.model.in_features, tuple(xb.shape), tuple(yb.shape)))
        aug_norm = _record_norms(xb, self.bias)
        if self.record_norm is not None and size and float(aug_norm.max()) > self.record_norm * (1.0 + _ROUNDING):
            problems.append("step %d: a record of the batch has norm %.6g, above record_norm = %.6g"
                            % (k, float(aug_norm.max()), self.record_norm))
        grads = self._per_example_scores(xb, yb)             # b x k: d loss / d score
        norms = torch.linalg.norm(grads, dim=1) * aug_norm   # per-example gradient norms
        max_norm = float(norms.max()) if size else 0.0
        clipped = 0
        # The bound the Run states: C when clipping can act, else L (clipping at C >= L must not
        # let a gradient above L through: it is checked against L like an unclipped one).
        bound = float(self.clip) if self.clipping_acts and self.clip is not None else float(self.lipschitz or 0.0)
        if self.loss == "squared" and size and float(yb.abs().max()) > self.label_bound:
            problems.append("step %d: a label of magnitude %.6g exceeds label_bound = %g" % (
                k, float(yb.abs().max()), self.label_bound))
        effective = norms
        if self.clip is not None:
            clipped = int((norms > self.clip).sum())
            effective = torch.clamp(norms, max=self.clip)
        if not self.clipping_acts and size and float(effective.max()) > bound * (1.0 + _ROUNDING):
            worst = int(torch.argmax(effective))
            problems.append("step %d: record %d's gradient norm %.6g exceeds the stated bound L = %.6g "
                            "(record_norm = %s): scale the records to the bound or clip (clip=C < L)"
                            % (k, int(idx[worst]) if worst < len(idx) else worst, float(effective.max()), bound,
                               self.record_norm))
        # Clipping, and norms above L by rounding only scaled onto it, so that the bound holds exactly.
        scale = torch.clamp(bound / torch.clamp(norms, min=1e-300), max=1.0)
        g = grads * scale[:, None]
        norm = self._normaliser(size)
        eta, noise_std = self._eta, self._noise_std
        with torch.no_grad():
            w = self.model.weight
            gw = (g.T @ xb) / norm                            # k x d
            new_parts = [w - eta * gw]
            if self.model.bias is not None:
                new_parts.append(self.model.bias - eta * (g.sum(dim=0) / norm))
            flat: npt.NDArray[np.float64] = torch.cat([t.reshape(-1) for t in new_parts]).to("cpu").numpy()
            out_of_range = 0
            if noise_std > 0:
                noisy, out_of_range = self.generator.add_grid_noise(flat, std=noise_std)
                flat = np.asarray(noisy, dtype=np.float64)
            theta = torch.from_numpy(np.asarray(flat, dtype=np.float64)).to(w.device)
            if self.radius is not None:
                r = float(torch.linalg.norm(theta))
                if r > self.radius:
                    theta = theta * (self.radius / r)
            w.copy_(theta[: w.numel()].reshape(w.shape))
            if self.model.bias is not None:
                self.model.bias.copy_(theta[w.numel():])
        if out_of_range:
            problems.append("step %d: %d noisy values left the range where doubles represent the noise grid "
                            "exactly" % (k, out_of_range))
        if self._ledger:
            first = self._ledger[0]
            if noise_std != first.noise_std:
                problems.append("step %d: noise std %.6g differs from step 1's %.6g (noise changed between steps)"
                                % (k, noise_std, first.noise_std))
            if eta != first.eta:
                problems.append("step %d: step size %.6g differs from step 1's %.6g (step size changed between "
                                "steps)" % (k, eta, first.eta))
            if self.radius != first.radius:
                problems.append("step %d: projection radius %s differs from step 1's %s" % (k, self.radius, first.radius))
        self._checksum = _checksum(self._params)
        self._final = [p.detach().clone() for p in self._params]
        _PRODUCED[self._checksum] = (self._serial, k)
        entry = LedgerEntry(step=k, indices=idx, drawn=drawn, batch_size=size, normaliser=norm,
                            bound=bound, max_gradient_norm=max_norm, clipped=clipped, eta=eta,
                            noise_std=noise_std, radius=self.radius, checksum_before=before,
                            checksum_after=self._checksum, out_of_range=int(out_of_range),
                            seconds=time.perf_counter() - started, problems=tuple(problems),
                            segment=self._segment, randomness=self.generator.randomness)
        # The seal of the head only (O(1) a step): a removed or added entry is caught here; an
        # edited one when certificate() recomputes the chain.
        if not hmac.compare_digest(self._sealed(self._head(), len(self._ledger), self._stop), self._seal):
            raise LedgerError("step %d: the ledger was altered before this step (entries removed, added or replaced); "
                              "the step was taken but cannot be recorded" % k)
        entry = _with_digest(entry, self._head())
        self._ledger.append(entry)
        self._seal = self._sealed(entry.digest, len(self._ledger), self._stop)
        return entry

    def _which(self, idx: Indices, j: int) -> str:
        for i, d in enumerate(self._draws[: j - 1]):
            if np.array_equal(idx, d):
                return ": it is the batch drawn for step %d, used again" % (i + 1 + self._offset)
        return ""

    def _per_example_scores(self, xb: torch.Tensor, yb: torch.Tensor) -> torch.Tensor:
        """d loss / d score per example (b x k): the per-example gradient is its outer product
        with the record (x, 1)."""
        with torch.no_grad():
            s = xb @ self.model.weight.T
            if self.model.bias is not None:
                s = s + self.model.bias
            if self.loss == "logistic":
                return -(yb * torch.sigmoid(-yb * s[:, 0]))[:, None]
            if self.loss == "squared":
                return (s[:, 0] - yb)[:, None]
            p = torch.softmax(s, dim=1)
            scores: torch.Tensor = p - torch.nn.functional.one_hot(yb, num_classes=s.shape[1]).to(p.dtype)
            return scores

    # ----------------------------------------------------------------- early stop
    def stop_early(self, reason: str, *, reads_records: bool = True) -> None:
        """Declare that the loop stops here, before the planned steps, for a reason that depends
        on data: `reason` in words; reads_records True when the rule reads the training records
        (e.g. train accuracy above a threshold), False when it reads only the released iterates
        and public data. The last-iterate analyses fix T in advance, so a data-dependent stop
        voids them: the certificate is then the every-iterate composition of the planned T steps
        (the stop is post-processing of those iterates) when the rule reads no training record
        and planned_steps was stated, and refused otherwise (a rule that reads the records is a
        query no analysis here charges). A stop at a data-independent time needs no declaration."""
        if not isinstance(reason, str) or not reason.strip():
            raise _type_error("stop_early", "reason", "a non-empty str", reason)
        reads = _flag("stop_early", "reads_records", reads_records)
        if self._stop is not None:
            raise ValueError("stop_early(): the stop is already declared at step %d" % self._stop[0])
        problems = self._chain_problems()
        if problems:
            raise LedgerError(problems[0])
        self._stop = (len(self._ledger), reason, reads)
        self._seal = self._sealed(self._head(), len(self._ledger), self._stop)

    # ----------------------------------------------------------------- resume
    def state_dict(self) -> Dict[str, Any]:
        """The ledger and what it is bound to (the configuration, the records' digest, the
        initial parameters' checksum), for a resume: torch.save() it next to the model's own
        state_dict. It holds no key: the generator's key and the seal's key stay in memory
        (a file holding them would let anyone who reads it regenerate the noise); the resumed
        engine draws from a generator keyed afresh, and the ledger records it."""
        problems = self._chain_problems()
        if problems:
            raise LedgerError(problems[0])
        return {"format": STATE_FORMAT, "config": self._config(), "data_digest": self._data_digest,
                "initial_checksum": self._initial_checksum, "genesis": self._genesis,
                "ledger": [e.to_dict() for e in self._ledger],
                "stop": None if self._stop is None else list(self._stop),
                "noise_std": self._noise_std, "eta": self._eta}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Continue the run whose ledger `state` holds (engine.state_dict() of the earlier
        engine): before this engine's first step, on the same records and configuration, with
        the model holding the parameters the ledger's last step produced. The chain is
        recomputed; a resume of shuffled or cyclic batches must be at an epoch boundary (this
        engine's order starts a new epoch); a seeded generator must not repeat an earlier
        segment's seed. Raises ValueError with the reason; on success the certificate covers
        every step, the earlier engine's and this one's."""
        if self._ledger or self._draws:
            raise ValueError("load_state_dict(): only before this engine's first step or draw")
        if not isinstance(state, Mapping) or state.get("format") != STATE_FORMAT:
            raise ValueError("load_state_dict(): not a state of hsdp.torch.PrivacyEngine (format %r, expected %r)"
                             % (state.get("format") if isinstance(state, Mapping) else type(state).__name__,
                                STATE_FORMAT))
        config = dict(state["config"])
        mine = self._config()
        differ = [key for key in mine if config.get(key) != mine[key]]
        if differ:
            said = ", ".join("%s %r, earlier %r" % (key, mine[key], config.get(key)) for key in differ)
            raise ValueError("load_state_dict(): the configuration differs from the earlier engine's (%s): a "
                             "resumed run is one run" % said)
        if state["data_digest"] != self._data_digest:
            raise ValueError("load_state_dict(): the records differ from the earlier engine's (their digests differ)")
        if state.get("stop") is not None:
            raise ValueError("load_state_dict(): the earlier run declared a stop (stop_early) at step %d: it ended"
                             % int(state["stop"][0]))
        entries = [LedgerEntry.from_dict(d) for d in state["ledger"]]
        if not entries:
            raise ValueError("load_state_dict(): the earlier ledger is empty: make a new engine instead")
        previous = str(state["genesis"])
        if previous != self._make_genesis(str(state["initial_checksum"])):
            raise ValueError("load_state_dict(): the state's genesis does not match its configuration, records and "
                             "initial parameters")
        for k, e in enumerate(entries, start=1):
            if e.step != k or _link(previous, e) != e.digest:
                raise ValueError("load_state_dict(): the ledger's chain is broken at entry %d (an entry edited, "
                                 "removed or reordered)" % k)
            previous = e.digest
        done = len(entries)
        if self.sampling in ("shuffle", "cyclic") and done % self._batches_per_epoch != 0:
            raise ValueError("load_state_dict(): %d steps is not a whole number of epochs (%d batches each): a "
                             "resumed engine starts a new epoch of its order, so a %s order resumes only at an "
                             "epoch boundary" % (done, self._batches_per_epoch, self.sampling))
        if self.generator.seeded and any(e.randomness == self.generator.randomness for e in entries):
            raise ValueError("load_state_dict(): this engine's generator is seeded with the seed of an earlier "
                             "segment: it would draw the same order and noise again")
        for name, mine_value, theirs in (("noise_std", self._noise_std, float(state["noise_std"])),
                                         ("eta", self._eta, float(state["eta"]))):
            if mine_value != theirs:
                raise ValueError("load_state_dict(): %s = %r differs from the earlier engine's %r: a resumed run keeps "
                                 "its noise and step size" % (name, mine_value, theirs))
        now = _checksum(self._params)
        if now != entries[-1].checksum_after:
            raise ValueError("load_state_dict(): the model's parameters are not those the ledger's last step (step %d) "
                             "produced: load the model's weights saved with the state" % done)
        self._genesis = str(state["genesis"])
        self._initial_checksum = str(state["initial_checksum"])
        self._ledger = entries
        self._offset = done
        self._segment = max(e.segment for e in entries) + 1
        self._start_problem = ""
        self._checksum = now
        self._final = [p.detach().clone() for p in self._params]
        self._seal = self._sealed(self._head(), len(self._ledger), self._stop)

    # ----------------------------------------------------------------- the certificate
    def problems(self) -> List[str]:
        """Why the ledger cannot vouch for the run (empty when it can): a broken chain, every
        step's problems, then the state now against the last step's (records, parameters,
        module, order)."""
        out = self._chain_problems()
        if out:
            return out
        out = [p for e in self._ledger for p in e.problems]
        k = len(self._ledger)
        if _data_digest(self._x, self._y) != self._data_digest:
            out.append("the engine's records changed after it was made")
        if self._start_problem and not self._ledger:
            out.append(self._start_problem)
        if self._ledger and _checksum(self._params) != self._checksum and not self._post_processed():
            out.append("after step %d: the parameters changed outside the engine (an optimizer step or an edit "
                       "the ledger cannot vouch for)" % k)
        if [id(p) for p in (self.model.weight, self.model.bias) if p is not None] != self._identity:
            out.append("the model's parameter tensors were replaced outside the engine")
        extra = _module_extras(self.model)
        if extra:
            out.append(extra)
        if self._order.steps != self._offset_draws():
            out.append("the engine's order was drawn outside the engine (%d draws, %d served)"
                       % (int(self._order.steps), self._offset_draws()))
        return out

    def _post_processed(self) -> bool:
        """True when the parameters now are a cast of the last step's (model.float(), .half(),
        a device move): post-processing of the certified model."""
        for now, final in zip(self._params, self._final):
            cur = now.detach().to("cpu")
            fin = final.to("cpu")
            if cur.shape != fin.shape:
                return False
            if not any(torch.equal(cur, fin.to(dt).to(cur.dtype))
                       for dt in (torch.float64, torch.float32, torch.float16, torch.bfloat16)):
                return False
        return True

    def _stop_run(self) -> Tuple[Optional[str], int, str]:
        """(refusal, steps, release) of the run a declared stop leaves."""
        if self._stop is None:
            return None, len(self._ledger), self.release
        at, reason, reads = self._stop
        if reads:
            return ("the run stopped at step %d by a rule that reads the training records (%s): no analysis here "
                    "charges the stopping time it reveals; stop on public data or at a planned step"
                    % (at, reason)), at, self.release
        if self.planned_steps is None:
            return ("the run stopped at step %d at a data-dependent time (%s): the last-iterate analyses need T "
                    "fixed in advance, and the every-iterate bound needs the planned T (state planned_steps when "
                    "the engine is made)" % (at, reason)), at, self.release
        return None, max(self.planned_steps, at), "every"

    def run(self) -> hsdp.Run:
        """The hsdp.Run of the steps in the ledger (as it recorded them); raises LedgerError when
        the ledger cannot vouch for them."""
        problems = self.problems()
        if problems:
            more = " (and %d more)" % (len(problems) - 1) if len(problems) > 1 else ""
            raise LedgerError(problems[0] + more)
        if not self._ledger:
            raise LedgerError("the ledger is empty: the engine took no step")
        first = self._ledger[0]
        if first.noise_std == 0:
            raise LedgerError("no noise: every step was taken with noise_std = 0, so no privacy holds")
        refusal, steps, release = self._stop_run()
        if refusal:
            raise LedgerError(refusal)
        return _engine_run(self, steps, first.eta, first.noise_std, first.radius, release=release,
                           order_known=self._order_known())

    def _order_known(self) -> bool:
        return self.generator.seeded or any(e.randomness.startswith("seeded") for e in self._ledger)

    def certificate(self, delta: float = 1e-5, *, experiment: bool = False) -> Certificate:
        """The certificate of the model the ledger's steps produced: epsilon at delta under the
        engine's adjacency (hsdp.account on run()), or certified False with the reason the ledger
        cannot vouch for the run. A seeded engine's run is refused (anyone who knows the seed can
        regenerate the noise) unless experiment=True, which certifies the experiment with its
        order known."""
        delta = _real("certificate", "delta", delta, below_one=True)
        experiment = _flag("certificate", "experiment", experiment)
        randomness = "; ".join(dict.fromkeys([e.randomness for e in self._ledger] + [self.generator.randomness]))
        base: Dict[str, Any] = dict(delta=delta, adjacency=self.adjacency, steps=len(self._ledger),
                                    randomness=randomness)
        try:
            run = self.run()
        except LedgerError as e:
            return Certificate(certified=False, reason=e.reason, **base)
        notes: List[str] = []
        if self._stop is not None:
            notes.append("the run stopped at step %d by a declared rule that reads no training record (%s): "
                         "certified as the every-iterate composition of the planned %d steps (the stop is "
                         "post-processing of those iterates)" % (self._stop[0], self._stop[1], run.steps))
        elif self.planned_steps is not None and len(self._ledger) < self.planned_steps:
            # The run ended before the T it was planned for, and no rule was declared: the stop may
            # have read the data (train accuracy above a threshold), and a stopping time that read
            # the records is charged by no analysis here (issue 35's case: 1.16 certified as a fixed
            # T, 2.48 for the same steps composed). Not certified: what the ledger cannot vouch for.
            base["notes"] = tuple(notes)
            return Certificate(certified=False, run=run, reason=(
                "%d steps taken of the planned %d, and no stopping rule declared: a stop before the planned "
                "steps may have read the data, which no analysis here charges; declare the rule with "
                "stop_early(reason, reads_records=...) (a rule that reads only the iterates and public data is "
                "certified as the every-iterate composition of the planned steps), or run the planned steps"
                % (len(self._ledger), self.planned_steps)), **base)
        base["notes"] = tuple(notes)
        if self._order_known() and not experiment:
            return Certificate(certified=False, run=run, reason=(
                "the noise and the order were drawn from a seeded generator (%s): against whoever knows the seed "
                "no privacy holds; certificate(experiment=True) certifies the experiment with its order known"
                % randomness), **base)
        report = hsdp.account(run, delta=delta)
        best = report.best
        if best is None or best.epsilon is None or not math.isfinite(best.epsilon):
            reasons = "; ".join("%s: %s" % (a.name, a.reason) for a in report.analyses if not a.applicable)
            return Certificate(certified=False, run=run, report=report, reason=(
                "no analysis certifies the run the ledger recorded (%s)" % reasons), **base)
        return Certificate(certified=True, reason="", epsilon=best.epsilon, analysis=best.name,
                           add_remove_epsilon=report.add_remove_epsilon if self.adjacency == "replace" else None,
                           add_remove_reason=report.add_remove_reason if self.adjacency == "replace" else "",
                           run=run, report=report, **base)

    def get_epsilon(self, delta: float = 1e-5) -> float:
        """epsilon at delta under the engine's adjacency (Opacus's accountant API); raises
        LedgerError with the reason when the certificate is refused."""
        c = self.certificate(delta)
        if not c.certified:
            raise LedgerError(c.reason)
        assert c.epsilon is not None
        return c.epsilon

    def steps_for(self, epochs: int) -> int:
        """Steps of `epochs` epochs of the engine's order."""
        return _integer("steps_for", "epochs", epochs, 1) * self._batches_per_epoch


def _with_digest(entry: LedgerEntry, previous: str) -> LedgerEntry:
    d = entry.to_dict()
    d["digest"] = _link(previous, entry)
    return LedgerEntry.from_dict(d)


def _record_norms(x: torch.Tensor, bias: bool) -> torch.Tensor:
    """|(x, 1)| with the bias feature, |x| without (the library's record norm)."""
    norms: torch.Tensor = torch.linalg.norm(x, dim=1)
    with_bias: torch.Tensor = torch.sqrt(norms * norms + 1.0)
    return with_bias if bias else norms


def _module_extras(model: torch.nn.Module) -> str:
    """What the model holds beyond the linear model's weight and bias (a parameter, buffer,
    submodule or hook added), in words; '' when nothing."""
    names = sorted(name for name, _ in model.named_parameters())
    extra = [name for name in names if name not in ("weight", "bias")]
    buffers = [name for name, _ in model.named_buffers()]
    children = [name for name, _ in model.named_children()]
    hooks = [h for h in ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_state_dict_hooks",
                         "_load_state_dict_pre_hooks") if getattr(model, h, None)]
    if not (extra or buffers or children or hooks):
        return ""
    parts = []
    if extra:
        parts.append("parameters %s" % ", ".join(extra))
    if buffers:
        parts.append("buffers %s" % ", ".join(buffers))
    if children:
        parts.append("submodules %s" % ", ".join(children))
    if hooks:
        parts.append("hooks (%s)" % ", ".join(hooks))
    return ("the model holds %s beyond the linear model's weight and bias: state the engine does not train may "
            "be fitted on the records, and the certificate covers only the linear model" % "; ".join(parts))


def _check_module(model: torch.nn.Module, what: str) -> None:
    extra = _module_extras(model)
    if extra:
        raise TypeError("PrivacyEngine: %s" % extra)


def _planned_run(engine: PrivacyEngine, steps: int) -> hsdp.Run:
    """The run the engine will have recorded after `steps` steps without a problem."""
    return _engine_run(engine, steps, engine.eta, 1.0, engine.radius, release=engine.release,
                       order_known=engine.generator.seeded)


def _engine_run(engine: PrivacyEngine, steps: int, eta: float, noise_std: float, radius: Optional[float], *,
                release: str, order_known: bool) -> hsdp.Run:
    """The hsdp.Run of `steps` steps of the engine's order and private step at step size `eta`
    (a summed gradient is the mean at eta x b), noise std `noise_std` and projection `radius`:
    the one description both the ledger's certificate and the calibration use."""
    slack, grid_eps, grid_log_beta = hsdp.grid_charges(parameters=engine.dimension, steps=steps)
    kw: Dict[str, Any] = dict(
        n=engine.n, steps=steps, batch_size=engine.batch_size, sampling=engine.sampling,
        eta=eta * (engine.batch_size if engine.reduction == "sum" else 1), noise_std=noise_std,
        dimension=engine.dimension, release=release, adjacency=engine.adjacency,
        order_known=order_known, grid_slack=slack, grid_epsilon=grid_eps, grid_log_beta=grid_log_beta)
    if engine.sampling == "shuffle":
        kw["drop_last"] = engine.drop_last
    if radius is not None:
        kw["diameter"] = 2.0 * radius
    if engine.clipping_acts:
        kw.update(clip=engine.clip, convex=False)
    else:
        kw.update(lipschitz=engine.lipschitz, smoothness=engine.smoothness)
    return hsdp.Run(**kw)


def make_private(model: torch.nn.Linear, x: torch.Tensor, y: torch.Tensor, *, loss: str, batch_size: int,
                 noise_multiplier: float, max_grad_norm: float, eta: float, sampling: str = "poisson",
                 **options: Any) -> PrivacyEngine:
    """Opacus's PrivacyEngine.make_private: DP-SGD with per-example gradients clipped at
    max_grad_norm (C) and Gaussian noise of std noise_multiplier * C on the gradient sum, i.e.
    noise_std = eta * noise_multiplier * C / batch_size on the parameters; Poisson batches by
    default. options: PrivacyEngine's other keywords (record_norm, radius, adjacency, ...)."""
    w = "make_private"
    z = _real(w, "noise_multiplier", noise_multiplier, positive=True)
    c = _real(w, "max_grad_norm", max_grad_norm, positive=True)
    lr = _real(w, "eta", eta, positive=True)
    b = _integer(w, "batch_size", batch_size, 1)
    return PrivacyEngine(model, x, y, loss=loss, batch_size=b, clip=c, eta=lr, sampling=sampling,
                         noise_std=lr * z * c / b, **options)


def make_private_with_epsilon(model: torch.nn.Linear, x: torch.Tensor, y: torch.Tensor, *, loss: str,
                              batch_size: int, target_epsilon: float, target_delta: float, epochs: int,
                              **options: Any) -> PrivacyEngine:
    """Opacus's PrivacyEngine.make_private_with_epsilon: the engine with the smallest noise std
    for which the run of `epochs` epochs meets (target_epsilon, target_delta) under the engine's
    adjacency (hsdp.calibrate on the run the ledger will record; engine.calibration keeps the
    answer; engine.planned_steps is the run's T). options: PrivacyEngine's keywords (sampling,
    clip or record_norm, eta, radius, adjacency="remove" for Opacus's guarantee, seed, ...)."""
    w = "make_private_with_epsilon"
    eps = _real(w, "target_epsilon", target_epsilon, positive=True)
    delta = _real(w, "target_delta", target_delta, below_one=True)
    epochs = _integer(w, "epochs", epochs, 1)
    if "noise_std" in options or "planned_steps" in options:
        raise TypeError("%s(): keyword '%s' is the calibration's (it is computed from the target)"
                        % (w, "noise_std" if "noise_std" in options else "planned_steps"))
    engine = PrivacyEngine(model, x, y, loss=loss, batch_size=batch_size, noise_std=1.0, **options)
    steps = engine.steps_for(epochs)
    engine._plan(steps)
    planned = _planned_run(engine, steps)
    cal = hsdp.calibrate(planned, "noise", epsilon=eps, delta=delta, noise_unit="std")
    if not cal.feasible or cal.value is None:
        raise ValueError("no noise meets epsilon = %g at delta = %g under %s: %s"
                         % (eps, delta, adjacency_name(engine.adjacency), cal.reason))
    engine.noise_std = float(cal.value)
    engine.calibration = cal
    return engine
