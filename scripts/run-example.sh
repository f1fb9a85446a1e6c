#!/usr/bin/env bash
# The main job on its built-in default: installs what is missing, builds, and prints
# the privacy of the example run under every analysis.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DHSDP_BUILD_BENCH=OFF > /dev/null
cmake --build build -j"$(nproc)" --target hsdp
./build/hsdp account --example "$@"
