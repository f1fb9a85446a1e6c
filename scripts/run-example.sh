#!/usr/bin/env bash
# The main job on its built-in default: installs what is missing, builds, and trains a
# private logistic regression on Fashion-MNIST (Debian's dataset-fashion-mnist), classes 5
# (sandal) vs 7 (sneaker), 12000 training records, tested on the 2000 t10k records, at
# (epsilon, delta) = (1, 1e-5), the rest planned from public quantities, in the three ways a
# user can train one model at that target:
#   1. shuffled batches (a data loader's order: a fresh permutation every epoch), only the
#      final model published -- certified by hsdp's last-iterate analysis;
#   2. the same shuffled loader accounted validly for every iterate (composition: each
#      record is read once per epoch);
#   3. Poisson batches accounted by composition-pld (what DP-SGD libraries certify);
# then prints them side by side and says which reached the best accuracy. Extra arguments
# are passed to every `hsdp train` run (e.g. --epsilon 2, --seed 1).
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
run=(--model logistic --epsilon 1 --delta 1e-5)
mkdir -p out
echo "== 1. shuffled batches, only the final model published (certified for the last iterate)"
./build/hsdp train "${data[@]}" "${run[@]}" --sampling shuffle --output out/model.json "$@" | tee out/final.txt
echo
echo "== 2. the same shuffled loader accounted as if every iterate were published (--release every)"
./build/hsdp train "${data[@]}" "${run[@]}" --sampling shuffle --release every --output out/model-every.json "$@" > out/every.txt
grep -E '^(algorithm|train accuracy|best):' out/every.txt
echo
echo "== 3. Poisson batches, every iterate published, composition-pld (the DP-SGD accounting)"
./build/hsdp train "${data[@]}" "${run[@]}" --sampling poisson --release every --output out/model-poisson.json "$@" > out/poisson.txt
grep -E '^(algorithm|train accuracy|best):' out/poisson.txt
echo
# The test accuracies come from the printed reports (statistics of the records: never in a model file).
/usr/bin/python3 scripts/side_by_side.py out/model.json:out/final.txt out/model-every.json:out/every.txt \
    out/model-poisson.json:out/poisson.txt
