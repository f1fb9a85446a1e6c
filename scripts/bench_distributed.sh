#!/usr/bin/env bash
# Data-parallel throughput of a full-batch step (docs/distributed.md): `hsdp train` on
# Fashion-MNIST (60000 images, 784 pixels; softmax, 10 classes, 48000 training records)
# as 1 process and under mpirun -np 2. The time per step is the difference of two runs
# (STEPS_LONG and STEPS_SHORT steps) divided by the difference of steps, so reading and
# preparing the data cancels out; examples/s = training records / step time.
#   scripts/bench_distributed.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
hsdp="$build/hsdp"
dir=/usr/share/datasets/fashion-mnist
short=${STEPS_SHORT:-5}
long=${STEPS_LONG:-45}
records=48000
args=(train --format idx --data "$dir/train-images-idx3-ubyte.gz" --labels "$dir/train-labels-idx1-ubyte.gz"
      --model softmax --algorithm noisy-gd --sigma 1 --seed 1 --feature-scale 0.00392156862745098 --json)
mpirun=(mpirun --allow-run-as-root --oversubscribe)

seconds() {  # seconds of one run of "$@" (best of 2)
  local best=
  for _ in 1 2; do
    local t0 t1
    t0=$(date +%s.%N)
    "$@" > /dev/null
    t1=$(date +%s.%N)
    best=$(/usr/bin/python3 -c "import sys; a=float(sys.argv[2])-float(sys.argv[1]); b=sys.argv[3]; print(a if not b else min(a, float(b)))" \
           "$t0" "$t1" "$best")
  done
  echo "$best"
}

row() {  # label, then the command prefix before "$hsdp"
  local label="$1"; shift
  local a b
  a=$(seconds "$@" "$hsdp" "${args[@]}" --steps "$short")
  b=$(seconds "$@" "$hsdp" "${args[@]}" --steps "$long")
  /usr/bin/python3 -c "
import sys
a, b, s, l, n = float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
step = (b - a) / (l - s)
print(f'{sys.argv[1]:<34} {step * 1e3:8.1f} ms/step {n / step:12.0f} examples/s   (runs: {a:.2f} s, {b:.2f} s)')
" "$label" "$a" "$b" "$short" "$long" "$records"
}

echo "full-batch noisy-gd step, Fashion-MNIST softmax ($records training records x 784, 7850 parameters)"
row "1 process, 1 thread" env OMP_NUM_THREADS=1
row "1 process, 2 threads" env OMP_NUM_THREADS=2
row "2 processes x 1 thread (mpirun)" env OMP_NUM_THREADS=1 "${mpirun[@]}" -x OMP_NUM_THREADS -np 2
