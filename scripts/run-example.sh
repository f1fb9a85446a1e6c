#!/usr/bin/env bash
# The main job on its built-in default: installs what is missing, builds, and trains a
# private logistic regression on Fashion-MNIST (Debian's dataset-fashion-mnist), classes 5
# (sandal) vs 7 (sneaker), 12000 training records, tested on the 2000 t10k records, at
# (epsilon, delta) = (1, 1e-5), with deterministic cyclic batches (what a data loader does)
# and the rest planned from public quantities -- twice: accounted for the last iterate only
# (what hsdp certifies) and as if every iterate were published (composition, the usual
# DP-SGD accounting), then prints the two side by side. Extra arguments are passed to both
# `hsdp train` runs (e.g. --epsilon 2, --seed 1, --sampling poisson).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# Same build tree and options as scripts/test.sh (only the `hsdp` target is built here).
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DHSDP_BUILD_TESTS=ON -DHSDP_BUILD_PYTHON=ON \
      -DPYTHON_EXECUTABLE=/usr/bin/python3 > /dev/null
cmake --build build -j"$(nproc)" --target hsdp
F=/usr/share/datasets/fashion-mnist
data=(--format idx --data "$F/train-images-idx3-ubyte.gz" --labels "$F/train-labels-idx1-ubyte.gz"
      --test-data "$F/t10k-images-idx3-ubyte.gz" --test-labels "$F/t10k-labels-idx1-ubyte.gz" --classes 5 7)
run=(--model logistic --sampling cyclic --epsilon 1 --delta 1e-5)
mkdir -p out
echo "== 1. accounted for the last iterate (only the final model is published)"
./build/hsdp train "${data[@]}" "${run[@]}" --output out/model.json "$@"
echo
echo "== 2. the same training accounted as if every iterate were published (--release every)"
./build/hsdp train "${data[@]}" "${run[@]}" --release every --output out/model-every.json "$@" > out/every.txt
grep -E '^(algorithm|train accuracy|best):' out/every.txt
echo
/usr/bin/python3 scripts/side_by_side.py out/model.json out/model-every.json
