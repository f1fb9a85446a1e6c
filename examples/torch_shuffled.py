#!/usr/bin/env python3
"""Your own PyTorch training loop, certified by hsdp from the ledger of the steps it took.

A private logistic regression on Fashion-MNIST sandals (5) vs sneakers (7), trained with a
PyTorch loop on hsdp.torch's privacy engine, planned as `hsdp train --epsilon` plans a run:
from public quantities only (docs/training.md, "The plan"), never from the records.

  * the record norm from the public feature range: the IDX files hold unsigned bytes and
    Fashion-MNIST's documentation states every pixel is an integer in 0..255, so each pixel is
    multiplied by 1/255 (as `hsdp train --feature-scale`; mapping onto [-1, 1] as
    `--feature-ranges` does measured 2.7 points worse here), then each record is scaled to
    norm <= 1 (record-local): with the bias, |(x, 1)| <= sqrt(2) = record_norm;
  * the steps T, the batch size b and the step size eta = 1.98/beta from hsdp.plan("noisy-sgd",
    ...), the library's training plan (the `hsdp plan --setting noisy-sgd` of docs/plan.md,
    which at this record norm is the rule `hsdp train` applies); --batch-size or --epochs keep
    what you state and plan the rest.

The engine's DataLoader draws the shuffled batches from hsdp's CSPRNG (a fresh permutation
every epoch; `--drop-last false`, PyTorch's default, keeps the short last batch),
`engine.step(batch)` computes the per-example gradients, checks them against the stated bound,
takes the step, adds hsdp's grid noise and projects onto a ball, and records the step in its
sealed ledger. Only the final model is published. The noise is calibrated for the target before
training; after it the certificate is computed from the ledger -- the run the loop actually
performed -- and refused, with the reason, for any step the ledger cannot vouch for
(docs/python.md, "hsdp.torch: a privacy engine").

    /usr/bin/python3 examples/torch_shuffled.py                    # 12000 records, eps = 1
    /usr/bin/python3 examples/torch_shuffled.py --subset 1000 --drop-last false \\
        --json out/torch.json                                      # a quick run, planned for 1000 records

What makes the last-iterate analyses apply, and who enforces it:
  * a convex, beta-smooth loss: logistic loss, beta = R^2 / 4 (the engine derives it);
  * a bound L on every per-example gradient: |grad| <= |(x, 1)| <= R = sqrt(2); the engine
    checks every record against R when it is made and every per-example gradient against L;
  * a constant step size eta = 1.98/beta < 2/beta on the batch MEAN gradient (the engine's);
  * hsdp's Gaussian noise on its grid, of a fixed std, added to the parameters at every step;
  * projection onto a ball of radius r after every step (the diameter 2 r enters the bound);
  * shuffled batches drawn by the engine: floor(n/b) batches of b per epoch (drop_last=True),
    or ceil(n/b) with a last batch of the n mod b records left (drop_last=False, charged);
  * T fixed before training (the plan): the loop runs every planned step.

Randomness: without --seed the engine's generator is keyed from operating-system entropy (the
order and the noise are never written). --seed keys it from the seed: the run is reproducible
and its certificate is for the experiment only (certificate(experiment=True): order known,
"seeded: for experiments, not for release").
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import struct
import sys
import time
from typing import Any, Dict, Optional, Tuple

import numpy as np
import numpy.typing as npt
import torch

import hsdp
import hsdp.torch as hsdp_torch

FASHION = "/usr/share/datasets/fashion-mnist"
# Public constants, fixed before anyone looks at the records (so preprocessing with them costs
# no privacy): the pixels' range, from the IDX format (unsigned bytes) and the data set's
# documentation ("integers between 0 and 255"), and the record norm with the bias feature.
PIXEL_MAX = 255.0
RECORD_NORM = math.sqrt(2.0)   # |x| <= 1 after scaling, plus the bias feature 1
RADIUS = 100.0                 # the plan's ball for the logistic loss (it does not bind)


def read_idx(path: str) -> npt.NDArray[np.uint8]:
    """An IDX file (plain or gzipped) as a numpy array."""
    if path.endswith(".gz"):
        with gzip.open(path, "rb") as g:
            data = g.read()
    else:
        with open(path, "rb") as f:
            data = f.read()
    zero, kind, dims = struct.unpack(">HBB", data[:4])
    if zero != 0 or kind != 0x08:
        raise ValueError("%s: not an unsigned-byte IDX file" % path)
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def load(images: str, labels: str, subset: Optional[int] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    """Records of classes 5 and 7, labels -1 / +1: every pixel times 1 / PIXEL_MAX (the public
    range), then each record scaled to norm <= 1 (record-local; the model adds the bias)."""
    x = read_idx(os.path.join(FASHION, images)).reshape(-1, 784).astype(np.float64) / PIXEL_MAX
    y = read_idx(os.path.join(FASHION, labels)).astype(np.int64)
    keep = (y == 5) | (y == 7)
    x, labels_pm = x[keep], np.where(y[keep] == 7, 1.0, -1.0)
    if subset:
        x, labels_pm = x[:subset], labels_pm[:subset]
    x = x / np.maximum(1.0, np.linalg.norm(x, axis=1, keepdims=True))  # record-local
    return torch.tensor(x), torch.tensor(labels_pm)


def plan(n: int, d: int, epsilon: float, delta: float, batch_size: Optional[int]) -> hsdp.Plan:
    """The library's training plan from public quantities: n, the loss constants of records of
    norm <= RECORD_NORM (logistic: L = R, beta = R^2 / 4), the dimension, the target."""
    p = hsdp.plan("noisy-sgd", epsilon=epsilon, delta=delta, n=n, lipschitz=RECORD_NORM,
                  smoothness=RECORD_NORM ** 2 / 4.0, dimension=d + 1, batch_size=batch_size)
    if not p.feasible:
        sys.exit("no plan meets epsilon = %g at delta = %g: %s" % (epsilon, delta, p.reason))
    return p


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--subset", type=int, default=None, help="train on the first N records only")
    ap.add_argument("--batch-size", type=int, default=None, help="b (default: planned)")
    ap.add_argument("--epochs", type=int, default=None, help="epochs (default: planned)")
    ap.add_argument("--radius", type=float, default=RADIUS)
    ap.add_argument("--drop-last", choices=["true", "false"], default="true",
                    help="drop the short last batch of each epoch (true) or keep it (false, PyTorch's default)")
    ap.add_argument("--seed", type=int, default=None,
                    help="seed the order and the noise (for experiments; a published model must "
                         "not come from a seed others know)")
    ap.add_argument("--json", default=None, help="write the run performed and its certificate here")
    args = ap.parse_args()
    torch.set_num_threads(1)

    x, y = load("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", args.subset)
    x_test, y_test = load("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")
    n, d = int(x.shape[0]), int(x.shape[1])
    drop_last = args.drop_last == "true"

    # 0. The plan, from public quantities only (stated flags kept).
    proposal = plan(n, d, args.epsilon, args.delta, args.batch_size)
    b = args.batch_size if args.batch_size is not None else int(proposal.run.batch_size)
    epochs = args.epochs if args.epochs is not None else int(proposal.details["epochs"])
    planned = [name for name, stated in (("batch_size", args.batch_size), ("epochs", args.epochs)) if stated is None]
    print("plan (hsdp.plan noisy-sgd, public quantities only): n = %d, record norm %.6g with the bias, b = %d, "
          "%d epochs, eta = %.6g%s" % (n, RECORD_NORM, b, epochs, proposal.eta,
                                       "; planned: " + ", ".join(planned) if planned else "; every field stated"))
    model = torch.nn.Linear(d, 1).double()
    torch.nn.init.zeros_(model.weight)
    torch.nn.init.zeros_(model.bias)

    # 1. Before training: the engine with the smallest noise std for the target (final model only).
    try:
        engine = hsdp_torch.make_private_with_epsilon(
            model, x, y, loss="logistic", batch_size=b, target_epsilon=args.epsilon, target_delta=args.delta,
            epochs=epochs, record_norm=RECORD_NORM, eta=proposal.eta, radius=args.radius, sampling="shuffle",
            drop_last=drop_last, seed=args.seed)
    except ValueError as e:
        sys.exit(str(e))
    cal = engine.calibration
    assert cal is not None
    print("calibrated noise std %.6g per step (%s, epsilon %.6f at delta %g, %s)"
          % (engine.noise_std, cal.achieved_name, cal.achieved_epsilon, args.delta,
             hsdp_torch.adjacency_name(engine.adjacency)))

    # 2. Train: the engine's order, its private step (its ledger records every step), every
    #    planned step (T is fixed before training).
    started = time.time()
    for _ in range(epochs):
        for batch in engine.data_loader():
            engine.step(batch)
    seconds = time.time() - started
    performed = len(engine.ledger)

    # 3. After training: the certificate of the run the ledger recorded.
    cert = engine.certificate(args.delta, experiment=args.seed is not None)
    if not cert.certified or cert.report is None or cert.run is None:
        sys.exit("no certificate: " + cert.reason)
    report = cert.report
    best = report.best
    assert best is not None and best.epsilon is not None
    batch_sizes = sorted({e.batch_size for e in engine.ledger})
    per_epoch = engine.batches_per_epoch()
    reads = np.zeros(n, dtype=np.int64)
    reads_per_epoch_max = 0
    for k, entry in enumerate(engine.ledger):
        if k % per_epoch == 0:
            reads[:] = 0
        reads[entry.indices] += 1
        reads_per_epoch_max = max(reads_per_epoch_max, int(reads.max()))
    with torch.no_grad():
        accuracy = float(((model(x_test)[:, 0]) * y_test > 0).double().mean())
        train_accuracy = float(((model(x)[:, 0]) * y > 0).double().mean())
    majority = max(float((y_test > 0).double().mean()), float((y_test < 0).double().mean()))
    print("trained %d steps (%d epochs of %d batches of %d%s, drawn by the engine, each record at most once per "
          "epoch) in %.1f s (%.2f ms per step)" % (performed, epochs, per_epoch, b,
                                                  "" if batch_sizes == [b] else " and one of %d" % (n % b),
                                                  seconds, 1000 * seconds / max(1, performed)))
    print("certificate of the final model, from the ledger: epsilon = %.6f at delta = %g under %s (%s; %s)"
          % (best.epsilon, args.delta, hsdp_torch.adjacency_name(cert.adjacency), best.name,
             best.note or best.citation))
    if cert.add_remove_epsilon is not None:
        print("the same run under %s: epsilon = %.6f" % (hsdp_torch.adjacency_name("remove"), cert.add_remove_epsilon))
    elif cert.add_remove_reason:
        print("the same run under %s: not derived (%s)" % (hsdp_torch.adjacency_name("remove"), cert.add_remove_reason))
    for r in report.analyses:
        if r.applicable and r.name.startswith("composition-pld") and r.epsilon is not None:
            print("the same run, every iterate published: epsilon = %.4f (%s, %s)"
                  % (r.epsilon, r.name, hsdp_torch.adjacency_name(cert.adjacency)))
    # The accuracies are statistics of the records (not private): for the data owner's eyes.
    print("train accuracy %.4f  test accuracy %.4f (%d t10k records; majority class %.4f) -- statistics of the "
          "records, not covered by the certificate" % (train_accuracy, accuracy, len(y_test), majority))
    print("randomness: %s" % engine.generator.randomness)
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        doc: Dict[str, Any] = {
            "plan": {"batch_size": b, "epochs": epochs, "eta": proposal.eta, "record_norm": RECORD_NORM,
                     "planned": planned, "details": proposal.details},
            "loop": {"n": n, "steps": performed, "batch_sizes": batch_sizes,
                     "drop_last": drop_last, "order_known": bool(cert.run.order_known),
                     "epochs": epochs, "steps_per_epoch": per_epoch,
                     "max_reads_per_epoch": reads_per_epoch_max, "noise_std": engine.noise_std,
                     "eta": engine.eta, "radius": args.radius, "parameters": engine.dimension,
                     "randomness": engine.generator.randomness, "seeded": args.seed is not None,
                     "seconds_per_step": seconds / max(1, performed),
                     "account_args": cert.run.cli_args()},
            "certificate": cert.to_dict(),
            "calibration": json.loads(cal.to_json()),
            "report": json.loads(report.to_json()),
            "test_accuracy": accuracy, "train_accuracy": train_accuracy, "majority_class": majority}
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
