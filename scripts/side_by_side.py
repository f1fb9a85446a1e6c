#!/usr/bin/env python3
"""Prints two model files of `hsdp train` side by side: how each run was accounted, what
certified it, the noise it needed and the accuracy it reached (the main job's last table).

    scripts/side_by_side.py MODEL.json MODEL-EVERY.json
"""
import json
import math
import sys


def row(path):
    doc = json.load(open(path))
    run, best = doc["report"]["run"], doc["report"]["best"]
    accounting = ("every iterate published (composition)" if run["release"] == "every"
                  else "last iterate only (hsdp)")
    # epsilon rounded up (never printed below the certified value)
    return doc, run, [accounting, best["name"], "%.4f" % (math.ceil(best["epsilon"] * 1e4) / 1e4),
                      "%.4g" % run["noise_std"], "%.4f" % doc["test_accuracy"]]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows = [row(p) for p in sys.argv[1:]]
    doc, run, _ = rows[0]
    target = doc["configuration"]["target"]
    print("same data, same target (epsilon = %g, delta = %g), same training (%s batches, b = %d, "
          "%d steps, eta = %g):" % (target["epsilon"], target["delta"], run["sampling"],
                                    run["batch_size"], run["steps"], run["eta"]))
    table = [["accounting", "certified by", "epsilon", "noise std", "test accuracy"]]
    table += [r[2] for r in rows]
    widths = [max(len(line[k]) for line in table) for k in range(len(table[0]))]
    for line in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip())


if __name__ == "__main__":
    main()
