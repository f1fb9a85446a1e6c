#!/usr/bin/env python3
"""Prints runs of `hsdp train` side by side: the batch order each run used, how it was
accounted, what certified it, the noise it needed and the accuracy it reached (the main job's
last table), then which one reached the best test accuracy.

    scripts/side_by_side.py MODEL.json:REPORT.txt [MODEL.json:REPORT.txt ...]

MODEL.json is the model file (`--output`: the run and its certificate); REPORT.txt is what the
command printed, for the test accuracy: a statistic of the records, shown to the data owner and
never written into the model file (docs/training.md, "What the model file holds").
"""
import json
import math
import re
import sys

ORDER = {"shuffle": "shuffled (a data loader's order)", "cyclic": "cyclic (fixed order)",
         "poisson": "Poisson", "fixed": "random fixed-size", "full": "full batch"}


def test_accuracy(report_path):
    text = open(report_path).read()
    found = re.search(r"test accuracy ([0-9.]+)", text)
    if not found:
        sys.exit("%s: no test accuracy in the printed report" % report_path)
    return float(found.group(1))


def row(arg):
    path, _, report = arg.partition(":")
    if not report:
        sys.exit(__doc__)
    doc = json.load(open(path))
    doc["test_accuracy"] = test_accuracy(report)
    run, best = doc["report"]["run"], doc["report"]["best"]
    accounting = ("every iterate published" if run["release"] == "every"
                  else "final model only (hsdp)")
    # epsilon rounded up (never printed below the certified value)
    cells = [ORDER.get(run["sampling"], run["sampling"]), accounting, best["name"],
             "%.4f" % (math.ceil(best["epsilon"] * 1e4) / 1e4), "%.4g" % run["noise_std"],
             "%.4f" % doc["test_accuracy"]]
    return doc, run, cells


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    rows = [row(p) for p in sys.argv[1:]]
    doc, run, _ = rows[0]
    target = doc["configuration"]["target"]
    print("same data, same target (epsilon = %g, delta = %g), the plan's b = %d, %d steps, eta = %g:"
          % (target["epsilon"], target["delta"], run["batch_size"], run["steps"], run["eta"]))
    table = [["batches", "accounted for", "certified by", "epsilon", "noise std", "test accuracy"]]
    table += [r[2] for r in rows]
    widths = [max(len(line[k]) for line in table) for k in range(len(table[0]))]
    for line in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip())
    if len(rows) > 1:
        acc = [(r[0]["test_accuracy"], i) for i, r in enumerate(rows)]
        top, i = max(acc)
        print("best test accuracy here: %s batches, %s (%.4f);" % (table[i + 1][0], table[i + 1][1], top),
              "; ".join("%s/%s %+.2f points" % (table[j + 1][0].split(" ")[0], table[j + 1][1].split(" ")[0],
                                                100 * (a - top)) for a, j in acc if j != i))
        noise = [float(r[2][4]) for r in rows]
        print("noise the target needs, relative to the least: " +
              ", ".join("%.2fx" % (v / min(noise)) for v in noise))


if __name__ == "__main__":
    main()
