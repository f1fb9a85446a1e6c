#!/usr/bin/env python3
"""A tour of the hsdp Python module, notebook style (each "# %%" is a cell).

Accounts a run, compares the last-iterate analyses with the composition baseline, calibrates
the noise for a target, trains a private logistic regression on breast_cancer, and plots
privacy against steps and accuracy against epsilon with matplotlib.

Run it from the repository after `scripts/test.sh` (which builds the module in build/python):

    PYTHONPATH=build/python /usr/bin/python3 examples/python_tour.py [output-dir]

The figures are written to output-dir (default: the current directory).
"""

# %% Set-up
import math
import os
import pathlib
import sys
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files, no display needed
import matplotlib.pyplot as plt
import numpy as np

import hsdp

out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
out.mkdir(parents=True, exist_ok=True)
print(f"hsdp {hsdp.__version__}: {len(hsdp.analyses())} analyses: {', '.join(hsdp.analyses())}")

# %% 1. Describe a run, then ask (dp_accounting / Opacus style)
# Projected noisy SGD, one pass over n = 1000 records in cyclic batches of 1, step size 0.05,
# the journal paper's sigma = 3 (noise std eta * sigma in parameter space), a 1-Lipschitz,
# 1-smooth convex loss on a domain of diameter 1; only the last iterate is released.
run = hsdp.Run(n=1000, eta=0.05, sigma=3, convention="journal",
               lipschitz=1, smoothness=1, diameter=1)
print(run)
acc = hsdp.Accountant(run)
print(f"epsilon at delta=1e-5: {acc.get_epsilon(1e-5):.4g}")
print(f"delta at epsilon=1:    {acc.get_delta(1.0):.4g}")

# The full report: every analysis, with its value or the reason it does not apply.
report = acc.report(delta=1e-5)
print(report.table())
best = report.best  # None when no analysis applies
assert best is not None
print("best:", best.name, best.citation)
# The same JSON `hsdp account --json` prints for `hsdp account <run.cli_args()>`:
print("equivalent command: hsdp account", " ".join(run.cli_args()), "--json")
assert report.to_dict()["best"]["name"] == best.name

# One analysis by name:
composition = hsdp.analysis("composition-rdp")
print(f"{composition.name}: {composition.citation}")

# %% 2. Last iterate vs every iterate: epsilon against the number of steps
steps = np.unique(np.geomspace(10, 20000, 16).astype(int))
curves: dict[str, dict[int, float]] = {}
for T in steps:
    r = hsdp.account(run.replace(steps=int(T)), delta=1e-5)
    for a in r.analyses:
        if a.applicable and a.kind == "upper" and a.epsilon is not None and math.isfinite(a.epsilon):
            curves.setdefault(a.name, {})[int(T)] = a.epsilon
fig, ax = plt.subplots(figsize=(7, 4.5))
for name, pts in sorted(curves.items()):
    xs = sorted(pts)
    ax.plot(xs, [pts[x] for x in xs], marker=".", label=name)
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("steps T")
ax.set_ylabel("epsilon at delta = 1e-5")
ax.set_title("last-iterate analyses vs the composition baseline")
ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(out / "tour_epsilon_vs_steps.png", dpi=120)
print("wrote", out / "tour_epsilon_vs_steps.png")

# %% 3. Calibrate: the smallest sigma that gives epsilon <= 1 at delta = 1e-5
cal = hsdp.calibrate(run, "noise", epsilon=1.0, delta=1e-5)
print(f"smallest {cal.name} = {cal.value:.6g} ({cal.convention}); achieved epsilon "
      f"{cal.achieved_epsilon:.4g} by {cal.achieved_name}")
# DP-SGD units: the smallest noise multiplier for 2000 steps of batch 256 out of 60000 when
# every iterate is published (the classical setting).
dpsgd = hsdp.Run(n=60000, steps=2000, batch_size=256, sampling="poisson", eta=0.1,
                 noise_multiplier=1.0, clip=1, lipschitz=1, release="every")
cal2 = hsdp.calibrate(dpsgd, "noise", epsilon=2.0, delta=1e-5)
print(f"DP-SGD: smallest noise multiplier {cal2.value:.4g} for epsilon 2 "
      f"({cal2.achieved_name})")

# %% 4. Plan: a paper's utility bound under the target
p = hsdp.plan("langevin", epsilon=1, delta=1e-5, n=1000, lipschitz=1, smoothness=2,
              strong_convexity=0.5, diameter=1, dimension=10)
print(f"plan: sigma={p.sigma:.4g} ({p.convention}), steps={p.run.steps}, "
      f"{p.utility_name} <= {p.utility:.4g}")

# %% 5. Train on breast_cancer (scikit-learn's copy of the UCI data, Debian python3-sklearn)
csv = "/usr/lib/python3/dist-packages/sklearn/datasets/data/breast_cancer.csv"
X, y, mapping = hsdp.read_csv(csv)  # labels: the larger raw label (1 = benign) -> +1
print(f"breast_cancer: {X.shape[0]} records, {X.shape[1]} features; labels {mapping}")
rng = np.random.default_rng(0)
order = rng.permutation(len(y))
train_idx, test_idx = order[:450], order[450:]
# Standardise with *public* reference constants (per-feature centre and spread, fixed before
# training; here rounded summary values of the published data set standing in for domain
# knowledge). Constants that do not depend on the training records keep privacy; statistics
# computed from them would not. Rows are then scaled to norm <= 1 by hsdp.train (record-local).
centre = np.array([14, 19, 92, 655, 0.096, 0.10, 0.09, 0.05, 0.18, 0.063, 0.4, 1.2, 2.9, 40,
                   0.007, 0.025, 0.03, 0.012, 0.02, 0.0038, 16, 25.7, 107, 880, 0.13, 0.25,
                   0.27, 0.11, 0.29, 0.084])
spread = np.array([3.5, 4.3, 24, 350, 0.014, 0.05, 0.08, 0.04, 0.027, 0.007, 0.28, 0.55, 2, 45,
                   0.003, 0.018, 0.03, 0.006, 0.008, 0.0026, 4.8, 6.1, 33.6, 570, 0.023, 0.16,
                   0.21, 0.066, 0.062, 0.018])
Xs = (X - centre) / spread
Xtr, ytr, Xte, yte = Xs[train_idx], y[train_idx], Xs[test_idx], y[test_idx]

common: dict[str, Any] = dict(model="logistic", l2=0.01, batch_size=64, sampling="fixed", epochs=10, radius=2.0,
              seed=1)
baseline = hsdp.train(Xtr, ytr, no_noise=True, **common)
print(f"non-private baseline: test accuracy {baseline.evaluate(Xte, yte)['accuracy']:.3f}")
# Noisy SGD on fixed-size random batches of 64, ten epochs, projected on a ball of radius 2; for each target epsilon, hsdp.train
# calibrates the smallest sigma that meets it under the tightest valid analysis (the search
# evaluates the accountant many times). HSDP_TOUR_QUICK=1 runs two targets only.
targets: list[float] = [1, 4] if os.environ.get("HSDP_TOUR_QUICK") else [0.25, 0.5, 1, 2, 4, 8]
results = []
for target in targets:
    trained = hsdp.train(Xtr, ytr, epsilon=target, delta=1e-5, **common)
    accuracy = trained.evaluate(Xte, yte)["accuracy"]
    results.append((target, trained.epsilon, accuracy))
    certificate = trained.report  # None only for a run without noise
    assert certificate is not None and certificate.best is not None and trained.epsilon is not None
    print(f"target epsilon {target:5}: sigma {trained.sigma:.4g}, certified epsilon {trained.epsilon:.4g} "
          f"({certificate.best.name}), test accuracy {accuracy:.3f}")

fig, ax = plt.subplots(figsize=(6, 4))
ax.plot([e for _, e, _ in results], [a for _, _, a in results], marker="o", label="hsdp.train")
ax.axhline(baseline.evaluate(Xte, yte)["accuracy"], color="gray", linestyle="--",
           label="no noise")
ax.set_xscale("log")
ax.set_xlabel("certified epsilon (delta = 1e-5), last iterate")
ax.set_ylabel("test accuracy")
ax.set_title("breast_cancer, private logistic regression")
ax.legend()
fig.tight_layout()
fig.savefig(out / "tour_accuracy_vs_epsilon.png", dpi=120)
print("wrote", out / "tour_accuracy_vs_epsilon.png")

# %% 6. Audit: how tight is the certified bound on the worst case?
small = hsdp.Run(n=10, steps=10, batch_size=10, eta=0.1, noise_std=0.1,
                 lipschitz=1, smoothness=1, diameter=1)
audit = hsdp.audit_exact(small, delta=1e-5, grid=801)
print(f"exact epsilon of the worst-case instance: {audit.exact.epsilon:.4g} "
      f"(+- {audit.exact.error:.2g})")
for b in audit.bounds:
    print(f"  {b.name:28s} {b.value:10.4g}  ratio {b.ratio:.3g}")
