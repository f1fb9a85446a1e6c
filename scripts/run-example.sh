#!/usr/bin/env bash
# The main job on its built-in default: installs what is missing, builds, and trains a
# private logistic regression on the Wisconsin breast-cancer data (Debian python3-sklearn)
# with noisy full-batch gradient descent calibrated to (epsilon, delta) = (1, 1e-5), then
# prints the accuracy and the privacy report of the run it performed. Extra arguments are
# passed to `hsdp train` (e.g. --epsilon 2, --algorithm noisy-sgd --sampling poisson).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# Same build tree and options as scripts/test.sh (only the `hsdp` target is built here).
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DHSDP_BUILD_TESTS=ON -DHSDP_BUILD_PYTHON=ON \
      -DPYTHON_EXECUTABLE=/usr/bin/python3 > /dev/null
cmake --build build -j"$(nproc)" --target hsdp
data=/usr/lib/python3/dist-packages/sklearn/datasets/data/breast_cancer.csv
descr=/usr/lib/python3/dist-packages/sklearn/datasets/descr/breast_cancer.rst
# Public constants, not computed from the data file: the dataset's documentation publishes
# each feature's maximum (the Max column of its summary table); feature j is multiplied by
# 1 / (max_j sqrt(30)), which puts every record inside the unit ball. A record-local
# operation with stated constants (docs/training.md).
scale=$(awk '/^    =+ =+ =+$/ { rule++; next }
             rule == 2 && NF >= 3 { printf "%s%.9g", sep, 1 / ($NF * sqrt(30)); sep = "," }' "$descr")
[[ $(tr ',' '\n' <<< "$scale" | wc -l) -eq 30 ]] || { echo "could not read the 30 published maxima from $descr" >&2; exit 1; }
mkdir -p out
./build/hsdp train --data "$data" --format csv --feature-scale "$scale" --model logistic \
  --algorithm noisy-gd --steps 200 --eta 4 --radius 100 --epsilon 1 --delta 1e-5 \
  --output out/model.json "$@"
