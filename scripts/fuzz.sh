#!/usr/bin/env bash
# Builds the libFuzzer targets of the data readers (fuzz/fuzz_*.cpp) with clang++-14,
# AddressSanitizer and UndefinedBehaviorSanitizer into build-fuzz/, then runs each for
# the given number of seconds (default 20) starting from its seed corpus fuzz/corpus/<name>/.
# Exits non-zero on the first crash, sanitizer report or leak; libFuzzer writes the input
# that caused it to build-fuzz/crash-* (reproduce: build-fuzz/fuzz_<name> <that file>).
#
#   scripts/fuzz.sh [seconds]
set -euo pipefail
seconds=${1:-20}
[[ $seconds =~ ^[0-9]+$ && $seconds -gt 0 ]] || { echo "usage: $0 [seconds > 0]" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build-fuzz
cxx=${HSDP_FUZZ_CXX:-clang++-14}
command -v "$cxx" >/dev/null || { echo "$cxx not found (apt-get install clang-14 libclang-rt-14-dev)" >&2; exit 2; }
mkdir -p "$out/obj"

# The readers need only src/data and the shared error helpers; compiling them directly
# keeps the fuzz build independent of the CMake trees (and of the rest of the library).
common=(-std=c++20 -g -O1 -fno-omit-frame-pointer -I"$root/include" -I"$root/src")
sanitize=(-fsanitize=address,undefined -fno-sanitize-recover=undefined)
# The objects are compiled once for the three targets, and everything is built on every core
# (at most `nproc` compilers at a time; the first failure stops the script).
jobs=$(nproc)
running=0
spawn() {
  if ((running >= jobs)); then wait -n; running=$((running - 1)); fi
  "$@" &
  running=$((running + 1))
}
drain() {
  while ((running > 0)); do wait -n; running=$((running - 1)); done
}
objects=()
for src in "$root"/src/errors.cpp "$root"/src/data/*.cpp; do
  obj=$out/obj/$(basename "${src%.cpp}").o
  spawn "$cxx" "${common[@]}" "${sanitize[@]}" -fsanitize=fuzzer-no-link -c "$src" -o "$obj"
  objects+=("$obj")
done
drain
targets=(csv libsvm idx)
for target in "${targets[@]}"; do
  spawn "$cxx" "${common[@]}" "${sanitize[@]}" -fsanitize=fuzzer "$root/fuzz/fuzz_$target.cpp" \
    "${objects[@]}" -lfmt -lz -o "$out/fuzz_$target"
done
drain

status=0
for target in "${targets[@]}"; do
  # The first corpus directory receives new interesting inputs; the seeds stay untouched.
  mkdir -p "$out/corpus-$target"
  echo "== fuzz_$target: $seconds s"
  if ! "$out/fuzz_$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -print_final_stats=1 -artifact_prefix="$out/" \
       "$out/corpus-$target" "$root/fuzz/corpus/$target"; then
    echo "fuzz_$target FAILED (input saved under $out/)" >&2
    status=1
  fi
done
exit $status
