#!/usr/bin/python3
"""Privacy-utility benchmark (issue 15, item 4): test accuracy against epsilon on Fashion-MNIST.

For each model (5 vs 7 logistic, 10-class softmax), each epsilon and each seed it trains with
`hsdp train --epsilon E --delta 1e-5` and the trainer's plan (docs/training.md "The plan":
batch size, length, step size and radius from public quantities), four ways:

  planned          the plan's own batch policy (cyclic or Poisson, whichever needs less noise
                   under the tightest analysis), only the last iterate published;
  planned-every    the same plan accounted as if every iterate were published
                   (`--release every`: composition only, Poisson batches);
  cyclic           `--sampling cyclic` (deterministic batches, what a data loader does),
                   last iterate: certified by shifted-interpolation;
  cyclic-every     the same cyclic training accounted by composition (`--release every`);

and once without noise (the plan of the largest epsilon, cyclic, `--no-noise`).
Writes docs/figures/privacy-utility.csv and docs/figures/privacy-utility.svg, prints a table.
Standard library + numpy/matplotlib (Debian) only. Run from anywhere:

    /usr/bin/python3 scripts/privacy_utility.py [--hsdp build/hsdp] [--jobs 2]
"""
import argparse
import concurrent.futures as cf
import csv
import gzip
import json
import math
import os
import struct
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = "/usr/share/datasets/fashion-mnist"
DELTA = 1e-5
EPSILONS = (0.5, 1.0, 2.0, 4.0)
SEEDS = (1, 2, 3)
MODELS = {
    # name: (hsdp --model, --classes or None, label)
    "logistic-5v7": ("logistic", ["5", "7"], "5 vs 7, logistic"),
    "softmax-10": ("softmax", None, "10 classes, softmax"),
}
# Batches per epoch l = floor(sqrt(T / LFAC)): a cyclic epoch of l batches costs about l^2 / T
# in noise variance against full batches, and a step costs 1/l of a full pass. LFAC = 4 (at
# most +25%) for the binary model; LFAC = 1 (at most +100%) for the 10-class model, whose
# full passes are 50x dearer (60000 records x 7850 parameters).
LFAC = {"logistic": 4.0, "softmax": 4.0}  # as the trainer's plan (F = 4)


# ---------------------------------------------------------------------------- the rule
def gdp_delta(mu, eps):
    """delta(eps) of mu-GDP (Dong, Roth, Su 2022)."""
    phi = lambda x: 0.5 * math.erfc(-x / math.sqrt(2))
    return phi(-eps / mu + mu / 2) - math.exp(eps) * phi(-eps / mu - mu / 2)


def gdp_mu(eps, delta):
    """The largest mu whose mu-GDP curve meets (eps, delta) (bisection, conservative end)."""
    lo, hi = 1e-9, 100.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if gdp_delta(mid, eps) > delta:
            hi = mid
        else:
            lo = mid
    return lo


def constants(model, record_norm=1.0):
    """The trainer's L and beta for records scaled to norm R plus a bias (R^2 + 1)."""
    r2 = record_norm ** 2 + 1.0
    if model == "logistic":
        return math.sqrt(r2), r2 / 4
    if model == "softmax":
        return math.sqrt(2 * r2), r2 / 2
    raise ValueError(model)


def rule(n, model, eps, delta=DELTA, lfac=None):
    """Public-only plan: unregularised (l2 = 0) cyclic noisy SGD, eta = 1.98/beta, radius 100,
    T = n mu / (2 L eta) steps (mu: the GDP parameter of (eps, delta)), l = floor(sqrt(T/LFAC))
    batches per epoch (the largest divisor of n not above it), b = n/l, epochs = ceil(T/l).

    Why: with l2 = 0 shifted-interpolation certifies cyclic batches at
    mu = (2L/(n sigma)) sqrt(l (l + E - 1)), i.e. the exact Gaussian composition of ~T
    full-batch steps; the released iterate then carries a random walk of per-coordinate std
    ~ eta * 2L * T / (n mu), which T = n mu / (2 L eta) holds at 1 (a logit perturbation of
    about one unit for a unit-norm record). l^2 <= T/4 keeps the price of cyclic batches
    (about l^2 / T) at most 1/LFAC in variance while cutting the cost of a step by l."""
    L, beta = constants(model)
    mu = gdp_mu(eps, delta)
    eta = 1.98 / beta
    T = max(1, round(n * mu / (2 * L * eta)))
    l = max(1, math.floor(math.sqrt(T / (LFAC[model] if lfac is None else lfac))))
    while n % l:
        l -= 1
    b = n // l
    E = math.ceil(T / l)
    return {"batch_size": b, "epochs": E, "steps": E * l, "eta": round(eta, 6), "radius": 100.0,
            "l2": 0.0, "batches_per_epoch": l, "mu": mu}


# ---------------------------------------------------------------------------- data
def count_idx_labels(path, classes):
    with gzip.open(path, "rb") as f:
        magic, count = struct.unpack(">II", f.read(8))
        labels = f.read(count)
    if classes is None:
        return count
    keep = {int(c) for c in classes}
    return sum(1 for x in labels if x in keep)


def data_flags(classes):
    a = ["--format", "idx",
         "--data", f"{DATA}/train-images-idx3-ubyte.gz", "--labels", f"{DATA}/train-labels-idx1-ubyte.gz",
         "--test-data", f"{DATA}/t10k-images-idx3-ubyte.gz", "--test-labels", f"{DATA}/t10k-labels-idx1-ubyte.gz"]
    if classes:
        a += ["--classes"] + classes
    return a


# ---------------------------------------------------------------------------- runs
def hsdp(binary, args):
    # One thread per run: on a shared 2-core machine two single-threaded runs beat one
    # two-threaded run (issue 15, item 6).
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    p = subprocess.run(["nice", binary] + args, capture_output=True, text=True, env=env)
    return p.returncode, p.stdout, p.stderr


def analysis_eps(report, name):
    for a in report["analyses"]:
        if a["name"] == name and a.get("applicable"):
            return a.get("epsilon")
    return None


def summarise(j):
    rep = j.get("report") or {}
    run = rep.get("run", {})
    return {
        "test_accuracy": j["test_accuracy"], "train_accuracy": j["train_accuracy"],
        "certified_by": rep.get("best", {}).get("name", ""),
        "certified_epsilon": rep.get("best", {}).get("epsilon", ""),
        "noise_std": run.get("noise_std", ""), "steps": run.get("steps", ""),
        "eps_composition_rdp": analysis_eps(rep, "composition-rdp") if rep else "",
        "eps_shifted_interpolation": analysis_eps(rep, "shifted-interpolation") if rep else "",
        "eps_composition_pld": analysis_eps(rep, "composition-pld") if rep else "",
    }


METHODS = {
    "planned": [],
    "planned-every": ["--release", "every"],
    "cyclic": ["--sampling", "cyclic"],
    "cyclic-every": ["--sampling", "cyclic", "--release", "every"],
}


def run_method(method):
    def run(binary, base, p, eps, seed):
        code, out, err = hsdp(binary, ["train"] + base + METHODS[method] +
                              ["--epsilon", repr(eps), "--delta", repr(DELTA), "--seed", str(seed),
                               "--order-known", "false", "--json"])  # certified as the unseeded run
        if code:
            raise RuntimeError(err.strip())
        j = json.loads(out)
        s = summarise(j)
        plan = j["configuration"].get("plan", {})
        s.update(sampling=plan.get("sampling", ""), batch_size=plan.get("batch_size", ""),
                 eta=plan.get("eta", ""), radius=j["configuration"]["constraint"]["radius"])
        # Never record a run whose own report misses the target.
        if not (s["certified_epsilon"] and s["certified_epsilon"] <= eps):
            raise RuntimeError(f"{method} run not within epsilon {eps}: {s}")
        return s
    return run


def plan_flags(p, sampling):
    return ["--algorithm", "noisy-sgd", "--sampling", sampling, "--batch-size", str(p["batch_size"]),
            "--eta", repr(p["eta"]), "--radius", repr(p["radius"]), "--epochs", str(p["epochs"])]


def run_non_private(binary, base, p, eps, seed):
    code, out, err = hsdp(binary, ["train"] + base + plan_flags(p, "cyclic") + ["--no-noise", "--json"])
    if code:
        raise RuntimeError(err.strip())
    return summarise(json.loads(out))


# ---------------------------------------------------------------------------- output
def write_csv(rows, out):
    order = {m: i for i, m in enumerate(list(METHODS) + ["non-private"])}
    rows = sorted(rows, key=lambda r: (r["model"], order[r["method"]], r["epsilon"], r["seed"]))
    os.makedirs(out, exist_ok=True)
    fields = ["model", "method", "epsilon", "delta", "seed", "test_accuracy", "train_accuracy",
              "certified_by", "certified_epsilon", "eps_shifted_interpolation", "eps_composition_rdp",
              "eps_composition_pld",
              "noise_std", "n", "sampling", "batch_size", "epochs", "steps", "eta", "radius", "l2"]
    with open(os.path.join(out, "privacy-utility.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in fields})


def write_svg(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    fig, axes = plt.subplots(1, len(MODELS), figsize=(5.2 * len(MODELS), 4.0))
    styles = {"planned": ("C0", "o", "hsdp plan, last iterate (batch policy by least noise)"),
              "planned-every": ("C3", "s", "same plan, release every (composition-pld)"),
              "cyclic": ("C2", "^", "cyclic batches, last iterate (shifted-interpolation)"),
              "cyclic-every": ("C1", "v", "cyclic batches, release every (composition)"),
              "non-private": ("0.4", "", "non-private (--no-noise)")}
    for ax, (name, (_, _, label)) in zip(np.atleast_1d(axes), MODELS.items()):
        for method, (color, marker, legend) in styles.items():
            pts = []
            for eps in sorted({r["epsilon"] for r in rows if r["model"] == name}):
                acc = [r["test_accuracy"] for r in rows if r["model"] == name and r["method"] == method
                       and (r["epsilon"] == eps or method == "non-private")]
                if acc:
                    pts.append((eps, np.mean(acc), np.min(acc), np.max(acc)))
            if not pts:
                continue
            x, m, lo, hi = map(np.array, zip(*pts))
            ls = {"non-private": "--", "planned-every": ":"}.get(method, "-")
            # planned-every coincides with planned wherever the plan picks Poisson batches:
            # dotted with open markers so that both stay visible.
            ax.plot(x, m, ls, color=color, marker=marker or None, label=legend,
                    fillstyle="none" if method == "planned-every" else "full",
                    markersize=9 if method == "planned-every" else 6)
            if method != "non-private":
                ax.fill_between(x, lo, hi, color=color, alpha=0.15, linewidth=0)
        ax.set_xscale("log", base=2)
        ax.set_xticks(EPSILONS)
        ax.set_xticklabels([f"{e:g}" for e in EPSILONS])
        ax.set_xlabel("epsilon (delta = 1e-5)")
        ax.set_ylabel("test accuracy (t10k; mean of 3 seeds, band min-max)")
        ax.set_title(f"Fashion-MNIST {label}")
        ax.grid(alpha=0.3)
    np.atleast_1d(axes)[0].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hsdp", default=os.path.join(ROOT, "build", "hsdp"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "figures"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--models", nargs="+", default=list(MODELS))
    ap.add_argument("--epsilons", nargs="+", type=float, default=list(EPSILONS))
    ap.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS))
    args = ap.parse_args()

    tasks = []
    for name in args.models:
        model, classes, _ = MODELS[name]
        n = count_idx_labels(f"{DATA}/train-labels-idx1-ubyte.gz", classes)
        # R = 1 stated: the plan of this benchmark (the trainer's plan now chooses R = 2 by
        # default, docs/training.md "The plan"; constants() above assumes R = 1).
        base = data_flags(classes) + ["--model", model, "--record-norm", "1"]
        for eps in args.epsilons:
            p = dict(rule(n, model, eps), n=n)
            for seed in args.seeds:
                for method in METHODS:
                    tasks.append((name, method, eps, seed, run_method(method), base, p))
        # Non-private: deterministic (cyclic, no noise), so one run, with the plan of the
        # largest epsilon (the most steps); it stands for every epsilon in the table and plot.
        p = dict(rule(n, model, max(args.epsilons)), n=n)
        tasks.append((name, "non-private", max(args.epsilons), 0, run_non_private, base, p))

    # Seed by seed, so that an interrupted run has whole seeds (the CSV is rewritten as runs end).
    tasks.sort(key=lambda t: (t[3], t[2]))
    rows = []
    with cf.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futs = {pool.submit(t[4], args.hsdp, t[5], t[6], t[2], t[3]): t for t in tasks}
        for fut in cf.as_completed(futs):
            name, method, eps, seed, _, _, p = futs[fut]
            s = fut.result()
            row = {"model": name, "method": method, "epsilon": eps, "delta": DELTA, "seed": seed,
                   "n": p["n"], "sampling": "cyclic", "batch_size": p["batch_size"],
                   "steps": p["steps"], "epochs": p["epochs"], "eta": p["eta"], "radius": p["radius"],
                   "l2": p["l2"]}
            row.update(s)
            rows.append(row)
            write_csv(rows, args.out)
            print(f"{name:13s} {method:13s} eps={eps:<4g} seed={seed} acc={s['test_accuracy']:.4f} "
                  f"{s['certified_by']} {s['certified_epsilon']} std={s['noise_std']}", file=sys.stderr, flush=True)

    write_csv(rows, args.out)
    write_svg(rows, os.path.join(args.out, "privacy-utility.svg"))

    print(f"{'model':13s} {'eps':>4s}  " + "  ".join(f"{m:>13s}" for m in METHODS) +
          f"  {'non-private':>11s}  noise std: " + " / ".join(METHODS))
    for name in args.models:
        c = [r for r in rows if r["model"] == name and r["method"] == "non-private"]
        for eps in args.epsilons:
            sel = {m: [r for r in rows if r["model"] == name and r["epsilon"] == eps and r["method"] == m]
                   for m in METHODS}
            mean = lambda rs: sum(r["test_accuracy"] for r in rs) / len(rs)
            print(f"{name:13s} {eps:4g}  " + "  ".join(f"{mean(sel[m]):13.4f}" for m in METHODS) +
                  f"  {mean(c):11.4f}  " + " / ".join(f"{sel[m][0]['noise_std']:.4g} {sel[m][0]['sampling']}"
                                                       f" ({sel[m][0]['certified_by']})" for m in METHODS))


if __name__ == "__main__":
    main()
