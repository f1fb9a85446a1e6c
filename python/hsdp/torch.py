"""hsdp.torch: a privacy engine for convex models in PyTorch, certified from its ledger.

The engine owns everything the certificate depends on (docs/python.md, "hsdp.torch: a privacy
engine"):

* the batch order: `engine.sampler` (a torch batch Sampler) and `engine.data_loader()` draw
  hsdp's orders -- shuffle (drop_last True or False), Poisson, fixed-size, cyclic -- from hsdp's
  CSPRNG (hsdp.Generator, hsdp.BatchOrder: the orders of `hsdp train`);
* the private step `engine.step(batch)`: closed-form per-example gradients of a linear model
  (torch.nn.Linear) under the logistic, softmax or squared loss, the stated record bound
  enforced (or the gradients clipped), the batch mean (or sum), the step size, hsdp's noise on
  its grid (hsdp.Generator.add_grid_noise, the trainer's construction) and the projection onto
  a ball;
* a ledger of every step: the batch drawn and the batch used, the largest per-example gradient
  norm against the bound, the noise std, the step size, the radius, a checksum of the parameters
  before and after.

`engine.certificate(delta)` builds the hsdp.Run from the ledger (never from typed numbers) and
calls hsdp.account. A step the ledger cannot vouch for -- parameters changed outside the engine
(an optimizer step, an edit by hand), a batch its sampler did not draw for that step (another
DataLoader, a batch reused from an earlier epoch, a smaller batch), the noise std or the step
size changed between steps, a record whose gradient exceeds the stated bound, noise that left
the grid's exact range, a seeded generator -- makes the certificate refuse: certificate()
returns a Certificate with certified False and the reason (so that a training script can log
it and carry on); get_epsilon() raises LedgerError with the same reason (a bare number cannot
carry one). Every number the engine shows names its adjacency.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, Sampler

import hsdp

__all__ = ["PrivacyEngine", "Certificate", "LedgerEntry", "LedgerError", "make_private",
           "make_private_with_epsilon", "adjacency_name"]

LOSSES = ("logistic", "softmax", "squared")
SAMPLINGS = ("shuffle", "poisson", "fixed", "cyclic")

_ADJACENCY = {"replace": "replace-one adjacency (one record replaced)",
              "remove": "add/remove-one adjacency (one record added or removed; Opacus, dp_accounting)"}
# Per-example gradient norms within this relative slack of the bound are rounding: they are
# scaled onto the bound (so it holds exactly); beyond it the bound is broken.
_ROUNDING = 2.0 ** -40


def adjacency_name(adjacency: str) -> str:
    """The adjacency in words, as every number the engine shows names it."""
    return _ADJACENCY[adjacency]


class LedgerError(RuntimeError):
    """The ledger cannot vouch for the run: `reason` says which step and why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class LedgerEntry:
    """One engine step as the ledger recorded it."""
    step: int                       # 1-based
    indices: np.ndarray             # the records the step read
    drawn: bool                     # True when the engine's sampler drew exactly this batch for this step
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

    @property
    def vouched(self) -> bool:
        """True when the ledger vouches for this step (no problem recorded)."""
        return not self.problems


@dataclass(frozen=True)
class Certificate:
    """The privacy of the model the engine's steps produced, or why there is none.

    certified: True when every step is vouched for and an analysis applies; epsilon at delta
    under `adjacency` (the best bound of hsdp.account on `run`, the run the ledger recorded);
    add_remove_epsilon: the same run under add/remove-one adjacency when adjacency is
    replace-one (None where not derived; add_remove_reason says why). reason: why the
    certificate is refused (empty otherwise)."""
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

    def __str__(self) -> str:
        if not self.certified:
            return "no certificate (%s): %s" % (adjacency_name(self.adjacency), self.reason)
        text = "epsilon = %.6f at delta = %g under %s (%s; %d engine steps, from the ledger)" % (
            float(self.epsilon or 0.0), self.delta, adjacency_name(self.adjacency), self.analysis, self.steps)
        if self.add_remove_epsilon is not None:
            text += "; epsilon = %.6f under %s" % (self.add_remove_epsilon, adjacency_name("remove"))
        elif self.add_remove_reason:
            text += "; under %s: not derived (%s)" % (adjacency_name("remove"), self.add_remove_reason)
        return text

    def to_dict(self) -> Dict[str, Any]:
        """The certificate as JSON-ready values (the report's own JSON under "report")."""
        import json
        return {"certified": self.certified, "reason": self.reason, "epsilon": self.epsilon, "delta": self.delta,
                "adjacency": self.adjacency, "adjacency_name": adjacency_name(self.adjacency),
                "analysis": self.analysis, "add_remove_epsilon": self.add_remove_epsilon,
                "add_remove_reason": self.add_remove_reason, "steps": self.steps,
                "randomness": self.randomness,
                "report": json.loads(self.report.to_json()) if self.report is not None else None}


def _checksum(tensors: Sequence[torch.Tensor]) -> str:
    h = hashlib.blake2b(digest_size=16)
    for t in tensors:
        h.update(t.detach().to("cpu").contiguous().numpy().tobytes())
    return h.hexdigest()


class _Records(Dataset):
    """The engine's records, read a batch at a time: records[indices] is (x[indices],
    y[indices], indices)."""

    def __init__(self, x: torch.Tensor, y: torch.Tensor) -> None:
        self.x, self.y = x, y

    def __len__(self) -> int:
        return int(self.x.shape[0])

    def __getitem__(self, indices: List[int]) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        idx = torch.as_tensor(indices, dtype=torch.int64, device=self.x.device)
        return self.x[idx], self.y[idx], idx


class EngineSampler(Sampler):
    """A torch batch sampler (DataLoader(batch_sampler=...)) drawing the engine's order: each
    iteration yields one epoch of batches (len(sampler) of them) as lists of record indices,
    continuing the order where the previous iteration stopped; the engine records every draw."""

    def __init__(self, engine: "PrivacyEngine") -> None:
        self._engine = engine

    def __len__(self) -> int:
        return int(self._engine.order.batches_per_epoch)

    def __iter__(self) -> Iterator[List[int]]:
        for _ in range(len(self)):
            yield self._engine._draw().tolist()


class PrivacyEngine:
    """A private trainer of a linear model (torch.nn.Linear) on records x (n x d) with labels y,
    certified from the ledger of the steps it took.

    loss: "logistic" (one output, labels -1 / +1), "softmax" (k >= 2 outputs, labels 0..k-1) or
    "squared" (one output, real labels with |y| <= label_bound).
    record_norm: R, a bound on the norm of every record (x, 1) with the bias (x without one),
    stated by you from public knowledge (e.g. records scaled to norm <= 1); it gives the
    per-example gradient bound L and the smoothness beta (logistic L = R, beta = R^2/4; softmax
    L = sqrt(2) R, beta = R^2/2; squared L = R (R radius + label_bound), beta = R^2). Each step
    checks every per-example gradient against L: one above it breaks the bound (refused).
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
    model is published) or "every". seed: None draws from operating-system entropy; an integer
    keys the generator from it (for experiments, not for release: certificate() refuses unless
    experiment=True)."""

    def __init__(self, model: torch.nn.Linear, x: torch.Tensor, y: torch.Tensor, *, loss: str, batch_size: int,
                 noise_std: float, record_norm: Optional[float] = None, clip: Optional[float] = None,
                 eta: Optional[float] = None, sampling: str = "shuffle", drop_last: bool = True,
                 reduction: str = "mean", radius: Optional[float] = None, label_bound: float = 1.0,
                 adjacency: str = "replace", release: str = "last", seed: Optional[int] = None) -> None:
        if not isinstance(model, torch.nn.Linear):
            raise TypeError("PrivacyEngine: model must be a torch.nn.Linear (a linear model), got %s"
                            % type(model).__name__)
        if loss not in LOSSES:
            raise ValueError("loss = %r: must be one of %s" % (loss, ", ".join(LOSSES)))
        if sampling not in SAMPLINGS:
            raise ValueError("sampling = %r: must be one of %s" % (sampling, ", ".join(SAMPLINGS)))
        if reduction not in ("mean", "sum"):
            raise ValueError("reduction = %r: must be one of mean, sum" % (reduction,))
        if adjacency not in _ADJACENCY:
            raise ValueError("adjacency = %r: must be one of replace, remove" % (adjacency,))
        if release not in ("last", "every"):
            raise ValueError("release = %r: must be one of last, every" % (release,))
        for name, value in (("record_norm", record_norm), ("clip", clip), ("eta", eta), ("radius", radius)):
            if value is not None and not (math.isfinite(value) and value > 0):
                raise ValueError("%s = %r: must be a positive finite number (or None)" % (name, value))
        if not (math.isfinite(noise_std) and noise_std >= 0):
            raise ValueError("noise_std = %r: must be a finite number >= 0" % (noise_std,))
        if not (math.isfinite(label_bound) and label_bound > 0):
            raise ValueError("label_bound = %r: must be a positive finite number" % (label_bound,))
        if record_norm is None and clip is None:
            raise ValueError("record_norm = None and clip = None: state a bound on every record's norm "
                             "(record_norm=R, public knowledge) or clip per-example gradients (clip=C)")
        if model.weight.dtype != torch.float64:
            raise TypeError("PrivacyEngine: the model's parameters must be torch.float64 (model.double()): hsdp's "
                            "noise grid is exact in doubles (docs/security.md)")
        k_out = model.out_features
        if loss in ("logistic", "squared") and k_out != 1:
            raise ValueError("loss = %r needs a model with one output, got out_features = %d" % (loss, k_out))
        if loss == "softmax" and k_out < 2:
            raise ValueError("loss = 'softmax' needs out_features >= 2, got %d" % k_out)
        if x.dim() != 2 or x.shape[1] != model.in_features or y.dim() != 1 or y.shape[0] != x.shape[0]:
            raise ValueError("x must be n x %d (model.in_features) and y must hold n labels; got x %s, y %s"
                             % (model.in_features, tuple(x.shape), tuple(y.shape)))
        n = int(x.shape[0])
        if not (isinstance(batch_size, int) and 1 <= batch_size <= n):
            raise ValueError("batch_size = %r: must be an integer in [1, n = %d]" % (batch_size, n))
        if not drop_last and sampling != "shuffle":
            raise ValueError("drop_last = False: only for sampling = 'shuffle'")
        if loss == "logistic" and not bool(((y == 1) | (y == -1)).all()):
            raise ValueError("y: loss = 'logistic' needs labels -1 and +1")
        if loss == "softmax" and not bool(((y >= 0) & (y < k_out) & (y == torch.round(y.double()))).all()):
            raise ValueError("y: loss = 'softmax' needs class labels 0..%d (out_features = %d)" % (k_out - 1, k_out))
        device = model.weight.device
        self.model = model
        self.loss = loss
        self.x = x.to(device=device, dtype=torch.float64)
        self.y = y.to(device=device, dtype=torch.int64 if loss == "softmax" else torch.float64)
        self.n = n
        self.batch_size = batch_size
        self.sampling = sampling
        self.drop_last = drop_last
        self.reduction = reduction
        self.radius = radius
        self.label_bound = float(label_bound)
        self.adjacency = adjacency
        self.release = release
        self.record_norm = record_norm
        self.clip = clip
        self.bias = model.bias is not None
        self.parameters = [p for p in (model.weight, model.bias) if p is not None]
        self.dimension = sum(int(p.numel()) for p in self.parameters)
        # The loss class over records with |(x, 1)| <= R (hsdp's derive_constants).
        self.lipschitz: Optional[float] = None
        self.smoothness: Optional[float] = None
        if record_norm is not None:
            r2 = record_norm * record_norm
            if loss == "logistic":
                self.lipschitz, self.smoothness = record_norm, r2 / 4.0
            elif loss == "softmax":
                self.lipschitz, self.smoothness = math.sqrt(2.0) * record_norm, r2 / 2.0
            else:
                self.smoothness = r2
                if radius is not None:
                    self.lipschitz = record_norm * (record_norm * radius + self.label_bound)
        self.clipping_acts = clip is not None and (self.lipschitz is None or clip < self.lipschitz)
        if self.lipschitz is None and clip is None:
            raise ValueError("loss = 'squared' without radius has no per-example gradient bound: state radius "
                             "(the projection bounds |w|) or clip")
        if eta is None:
            if self.smoothness is None or self.clipping_acts:
                raise ValueError("eta = None: state the step size (no smoothness to derive 1.98 / beta from)")
            eta = 1.98 / self.smoothness
        self.eta = float(eta)
        self.noise_std = float(noise_std)
        self.generator = hsdp.Generator(seed=seed)
        self.order = hsdp.BatchOrder(sampling, n=n, batch_size=batch_size, generator=self.generator,
                                     drop_last=drop_last)
        self.sampler = EngineSampler(self)
        self.ledger: List[LedgerEntry] = []
        self._draws: List[np.ndarray] = []
        self._identity = [id(p) for p in self.parameters]
        self._checksum = _checksum(self.parameters)
        self.calibration: Optional[hsdp.CalibrationResult] = None
        self._constructed = True

    # What the certificate reads besides the ledger's per-step values is fixed at construction:
    # the loss class, the order and the radius (the squared loss's L depends on it). noise_std
    # and eta may be set: the ledger records them at every step and refuses a change mid-run.
    _FIXED = frozenset({"model", "loss", "x", "y", "n", "batch_size", "sampling", "drop_last", "reduction",
                        "radius", "label_bound", "adjacency", "release", "record_norm", "clip", "bias",
                        "parameters", "dimension", "lipschitz", "smoothness", "clipping_acts", "generator",
                        "order", "sampler", "ledger"})

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self._FIXED and getattr(self, "_constructed", False):
            raise AttributeError("PrivacyEngine.%s is fixed when the engine is made (the certificate depends on it): "
                                 "make a new engine" % name)
        super().__setattr__(name, value)

    # ----------------------------------------------------------------- the order
    def _draw(self) -> np.ndarray:
        idx = self.order.next()
        self._draws.append(idx)
        return idx

    def data_loader(self) -> DataLoader:
        """A DataLoader over the engine's records in the engine's order (engine.sampler, one
        epoch per iteration): each item is (x_batch, y_batch, indices); pass it to step() as it
        comes. Each batch is read with one indexing of the records (no per-record fetch)."""
        return DataLoader(_Records(self.x, self.y), sampler=self.sampler, batch_size=None)

    def batches_per_epoch(self) -> int:
        """Steps per epoch of the engine's order (len(engine.sampler))."""
        return int(self.order.batches_per_epoch)

    # ----------------------------------------------------------------- the step
    def _normaliser(self, size: int) -> float:
        if self.reduction == "sum":
            return 1.0
        if self.sampling == "shuffle" and size < self.batch_size:
            return float(size)  # the partial last batch: the mean over its own records
        return float(self.batch_size)  # Poisson: the expected batch size (as hsdp train)

    def step(self, batch: Sequence[torch.Tensor]) -> LedgerEntry:
        """One private step on batch = (x_batch, y_batch, indices), as the engine's data_loader()
        yields it: per-example gradients, the bound or clipping, the batch mean (or sum), the
        step, hsdp's grid noise, the projection. The step is taken whatever the batch; the ledger
        records what it cannot vouch for. Returns the ledger entry."""
        started = time.perf_counter()
        k = len(self.ledger) + 1
        problems: List[str] = []
        before = _checksum(self.parameters)
        if [id(p) for p in self.parameters] != self._identity or \
                [id(p) for p in (self.model.weight, self.model.bias) if p is not None] != self._identity:
            problems.append("step %d: the model's parameter tensors were replaced outside the engine" % k)
        if before != self._checksum:
            problems.append("step %d: the parameters changed outside the engine after %s (an optimizer step or an "
                            "edit the ledger cannot vouch for)" % (k, "step %d" % (k - 1) if k > 1 else "it started"))
        if len(batch) != 3:
            raise ValueError("step(batch): batch must be (x_batch, y_batch, indices) as engine.data_loader() yields it")
        xb, yb, ib = batch[0], batch[1], batch[2]
        idx = ib.detach().to("cpu").numpy().astype(np.int64).reshape(-1)
        # Vouched: the batch the sampler drew as its k-th (drawing ahead, e.g. list(loader),
        # changes nothing; a skipped, reused or foreign batch is caught here).
        drawn = False
        if k <= len(self._draws):
            drawn = bool(np.array_equal(idx, self._draws[k - 1]))
            if not drawn:
                problems.append("step %d: its batch (%d records) is not the batch the engine's sampler drew for step "
                                "%d (%d records)%s" % (k, len(idx), k, len(self._draws[k - 1]), self._which(idx, k)))
        else:
            problems.append("step %d: the engine's sampler drew no batch for this step (a batch from another loader "
                            "or reused from an earlier step%s)" % (k, self._which(idx, k)))
        if drawn and not (torch.equal(xb.to(self.x.device, torch.float64), self.x[ib.to(self.x.device)])
                          and torch.equal(yb.to(self.y.device, self.y.dtype), self.y[ib.to(self.y.device)])):
            drawn = False
            problems.append("step %d: the batch's records differ from the engine's records at its indices" % k)
        xb = xb.to(self.x.device, torch.float64)
        yb = yb.to(self.y.device, self.y.dtype)
        size = int(xb.shape[0])
        grads = self._per_example_scores(xb, yb)             # b x k: d loss / d score
        aug_norm = torch.linalg.norm(xb, dim=1)
        if self.bias:
            aug_norm = torch.sqrt(aug_norm * aug_norm + 1.0)
        norms = torch.linalg.norm(grads, dim=1) * aug_norm   # per-example gradient norms
        max_norm = float(norms.max()) if size else 0.0
        clipped = 0
        # The bound the Run states: C when clipping can act, else L (clipping at C >= L must not
        # let a gradient above L through: it is checked against L like an unclipped one).
        bound = float(self.clip) if self.clipping_acts else float(self.lipschitz)  # type: ignore[arg-type]
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
        with torch.no_grad():
            w = self.model.weight
            gw = (g.T @ xb) / norm                            # k x d
            new_w = w - self.eta * gw
            new_parts = [new_w]
            if self.bias:
                assert self.model.bias is not None
                new_parts.append(self.model.bias - self.eta * (g.sum(dim=0) / norm))
            flat = torch.cat([t.reshape(-1) for t in new_parts]).to("cpu").numpy()
            out_of_range = 0
            if self.noise_std > 0:
                flat, out_of_range = self.generator.add_grid_noise(flat, std=self.noise_std)
            theta = torch.from_numpy(np.asarray(flat, dtype=np.float64)).to(w.device)
            if self.radius is not None:
                r = float(torch.linalg.norm(theta))
                if r > self.radius:
                    theta = theta * (self.radius / r)
            w.copy_(theta[: w.numel()].reshape(w.shape))
            if self.bias:
                assert self.model.bias is not None
                self.model.bias.copy_(theta[w.numel():])
        if out_of_range:
            problems.append("step %d: %d noisy values left the range where doubles represent the noise grid "
                            "exactly" % (k, out_of_range))
        if self.ledger:
            first = self.ledger[0]
            if self.noise_std != first.noise_std:
                problems.append("step %d: noise std %.6g differs from step 1's %.6g (noise changed between steps)"
                                % (k, self.noise_std, first.noise_std))
            if self.eta != first.eta:
                problems.append("step %d: step size %.6g differs from step 1's %.6g (step size changed between "
                                "steps)" % (k, self.eta, first.eta))
            if self.radius != first.radius:
                problems.append("step %d: projection radius %s differs from step 1's %s" % (k, self.radius, first.radius))
        self._checksum = _checksum(self.parameters)
        entry = LedgerEntry(step=k, indices=idx, drawn=drawn, batch_size=size, normaliser=norm,
                            bound=bound, max_gradient_norm=max_norm, clipped=clipped, eta=self.eta,
                            noise_std=self.noise_std, radius=self.radius, checksum_before=before,
                            checksum_after=self._checksum, out_of_range=int(out_of_range),
                            seconds=time.perf_counter() - started, problems=tuple(problems))
        self.ledger.append(entry)
        return entry

    def _which(self, idx: np.ndarray, k: int) -> str:
        for j, d in enumerate(self._draws[: k - 1]):
            if np.array_equal(idx, d):
                return ": it is the batch drawn for step %d, used again" % (j + 1)
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
            return p - torch.nn.functional.one_hot(yb, num_classes=s.shape[1]).to(p.dtype)

    # ----------------------------------------------------------------- the certificate
    def problems(self) -> List[str]:
        """Why the ledger cannot vouch for the run (empty when it can): every step's problems,
        then the parameters' state now against the last step's checksum."""
        out = [p for e in self.ledger for p in e.problems]
        if self.ledger and _checksum(self.parameters) != self._checksum:
            out.append("after step %d: the parameters changed outside the engine (an optimizer step or an edit "
                       "the ledger cannot vouch for)" % len(self.ledger))
        if [id(p) for p in (self.model.weight, self.model.bias) if p is not None] != self._identity:
            out.append("the model's parameter tensors were replaced outside the engine")
        return out

    def run(self) -> hsdp.Run:
        """The hsdp.Run of the steps in the ledger (as it recorded them); raises LedgerError when
        the ledger cannot vouch for them."""
        problems = self.problems()
        if problems:
            more = " (and %d more)" % (len(problems) - 1) if len(problems) > 1 else ""
            raise LedgerError(problems[0] + more)
        if not self.ledger:
            raise LedgerError("the ledger is empty: the engine took no step")
        first = self.ledger[0]
        if first.noise_std == 0:
            raise LedgerError("no noise: every step was taken with noise_std = 0, so no privacy holds")
        return _engine_run(self, len(self.ledger), first.eta, first.noise_std, first.radius)

    def certificate(self, delta: float = 1e-5, *, experiment: bool = False) -> Certificate:
        """The certificate of the model the ledger's steps produced: epsilon at delta under the
        engine's adjacency (hsdp.account on run()), or certified False with the reason the ledger
        cannot vouch for the run. A seeded engine's run is refused (anyone who knows the seed can
        regenerate the noise) unless experiment=True, which certifies the experiment with its
        order known."""
        base = dict(delta=delta, adjacency=self.adjacency, steps=len(self.ledger),
                    randomness=self.generator.randomness)
        try:
            run = self.run()
        except LedgerError as e:
            return Certificate(certified=False, reason=e.reason, **base)  # type: ignore[arg-type]
        if self.generator.seeded and not experiment:
            return Certificate(certified=False, run=run, reason=(
                "the noise and the order were drawn from a seeded generator (%s): against whoever knows the seed "
                "no privacy holds; certificate(experiment=True) certifies the experiment with its order known"
                % self.generator.randomness), **base)  # type: ignore[arg-type]
        report = hsdp.account(run, delta=delta)
        best = report.best
        if best is None or best.epsilon is None or not math.isfinite(best.epsilon):
            reasons = "; ".join("%s: %s" % (a.name, a.reason) for a in report.analyses if not a.applicable)
            return Certificate(certified=False, run=run, report=report, reason=(
                "no analysis certifies the run the ledger recorded (%s)" % reasons), **base)  # type: ignore[arg-type]
        return Certificate(certified=True, reason="", epsilon=best.epsilon, analysis=best.name,
                           add_remove_epsilon=report.add_remove_epsilon if self.adjacency == "replace" else None,
                           add_remove_reason=report.add_remove_reason if self.adjacency == "replace" else "",
                           run=run, report=report, **base)  # type: ignore[arg-type]

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
        return epochs * self.batches_per_epoch()


def _planned_run(engine: PrivacyEngine, steps: int) -> hsdp.Run:
    """The run the engine will have recorded after `steps` steps without a problem."""
    return _engine_run(engine, steps, engine.eta, 1.0, engine.radius)


def _engine_run(engine: PrivacyEngine, steps: int, eta: float, noise_std: float,
                radius: Optional[float]) -> hsdp.Run:
    """The hsdp.Run of `steps` steps of the engine's order and private step at step size `eta`
    (a summed gradient is the mean at eta x b), noise std `noise_std` and projection `radius`:
    the one description both the ledger's certificate and the calibration use."""
    slack, grid_eps, grid_log_beta = hsdp.grid_charges(parameters=engine.dimension, steps=steps)
    kw: Dict[str, Any] = dict(
        n=engine.n, steps=steps, batch_size=engine.batch_size, sampling=engine.sampling,
        eta=eta * (engine.batch_size if engine.reduction == "sum" else 1), noise_std=noise_std,
        dimension=engine.dimension, release=engine.release, adjacency=engine.adjacency,
        order_known=engine.generator.seeded, grid_slack=slack, grid_epsilon=grid_eps, grid_log_beta=grid_log_beta)
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
    if not (math.isfinite(noise_multiplier) and noise_multiplier > 0):
        raise ValueError("noise_multiplier = %r: must be a positive finite number" % (noise_multiplier,))
    return PrivacyEngine(model, x, y, loss=loss, batch_size=batch_size, clip=max_grad_norm, eta=eta,
                         sampling=sampling, noise_std=eta * noise_multiplier * max_grad_norm / batch_size, **options)


def make_private_with_epsilon(model: torch.nn.Linear, x: torch.Tensor, y: torch.Tensor, *, loss: str,
                              batch_size: int, target_epsilon: float, target_delta: float, epochs: int,
                              **options: Any) -> PrivacyEngine:
    """Opacus's PrivacyEngine.make_private_with_epsilon: the engine with the smallest noise std
    for which the run of `epochs` epochs meets (target_epsilon, target_delta) under the engine's
    adjacency (hsdp.calibrate on the run the ledger will record; engine.calibration keeps the
    answer). options: PrivacyEngine's keywords (sampling, clip or record_norm, eta, radius,
    adjacency="remove" for Opacus's guarantee, seed, ...)."""
    engine = PrivacyEngine(model, x, y, loss=loss, batch_size=batch_size, noise_std=1.0, **options)
    planned = _planned_run(engine, engine.steps_for(epochs))
    cal = hsdp.calibrate(planned, "noise", epsilon=target_epsilon, delta=target_delta, noise_unit="std")
    if not cal.feasible or cal.value is None:
        raise ValueError("no noise meets epsilon = %g at delta = %g under %s: %s"
                         % (target_epsilon, target_delta, adjacency_name(engine.adjacency), cal.reason))
    engine.noise_std = float(cal.value)
    engine.calibration = cal
    return engine
