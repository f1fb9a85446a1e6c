#!/usr/bin/env bash
# Builds hsdp and runs the whole test suite.
#   scripts/test.sh             Release build in build/
#   scripts/test.sh --sanitize  AddressSanitizer + UndefinedBehaviorSanitizer build in build-asan/
# Each stage is timed (scripts/stages.sh): printed at the end, or by .ci/run for the whole CI.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-}"
source scripts/stages.sh
if [[ -z "$HSDP_STAGE_LOG" ]]; then
  HSDP_STAGE_LOG=$(mktemp "${TMPDIR:-/tmp}/hsdp-stages.XXXXXX")
  trap 'stage_report || true; rm -f "$HSDP_STAGE_LOG"' EXIT
fi
jobs=$(nproc)

stage install scripts/install-deps.sh "$mode"
if [[ "$mode" == "--sanitize" ]]; then
  dir=build-asan
  # What the sanitizers check is the library and its tests (and the command the CLI tests
  # run): -O1 with line tables (-g1: file:line in the reports) instead of RelWithDebInfo's
  # -O2 -g, no benchmarks. No Python module: an ASan-instrumented extension cannot be loaded
  # into the uninstrumented /usr/bin/python3 without preloading the ASan runtime.
  # No MPI either: Open MPI's start-up under ASan reports leaks and races of its own (the
  # data-parallel tests run in the Release build).
  configure() {
    cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
          -DHSDP_SANITIZE=ON -DHSDP_BUILD_TESTS=ON -DHSDP_BUILD_BENCH=OFF -DHSDP_BUILD_PYTHON=OFF \
          -DHSDP_WITH_MPI=OFF > /dev/null
  }
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  prefix=sanitizer-
else
  dir=build
  # The Python module is built for the Debian interpreter (a pyenv python3 first on PATH
  # cannot see the Debian packages pybind11, numpy, pytest, matplotlib).
  # MPI on (install-deps.sh installs Open MPI): the data-parallel tests (tests/mpi/) run.
  configure() {
    cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DHSDP_BUILD_TESTS=ON -DHSDP_BUILD_PYTHON=ON \
          -DPYTHON_EXECUTABLE=/usr/bin/python3 -DHSDP_WITH_MPI=ON > /dev/null
  }
  prefix=
fi
build() { configure && cmake --build "$dir" -j"$jobs"; }
stage "${prefix}build" build
stage "${prefix}tests" ctest --test-dir "$dir" --output-on-failure -j"$jobs"
if [[ "$mode" != "--sanitize" ]]; then
  # The Python module's tests run against the INSTALLED package: `pip install .` into a venv
  # that also sees Debian's numpy, pytest and matplotlib. The build backend reuses this build
  # tree (--config-settings build-dir), so the module is not compiled twice. The tests compare the module's
  # results with the `hsdp` command just built, and build the wheel and install it in a fresh
  # venv (HSDP_BUILD_DIR). pytest exits 5 when it collects no tests: not a failure.
  python_tests() {
    local venv="$dir/venv" status=0
    # (set -e does not apply inside a function that `stage` runs: each step checks itself.)
    [[ -x "$venv/bin/python" ]] || /usr/bin/python3 -m venv --system-site-packages "$venv" || return
    "$venv/bin/python" -m pip install --quiet --no-build-isolation --no-deps --force-reinstall \
      --config-settings build-dir="$PWD/$dir" . || return
    HSDP_REQUIRE_TORCH=1 HSDP_CLI="$PWD/$dir/hsdp" HSDP_BUILD_DIR="$PWD/$dir" HSDP_EXPECT_INSTALLED=1 \
      "$venv/bin/python" -m pytest -q -p no:cacheprovider python/tests || status=$?
    if ((status != 0 && status != 5)); then return "$status"; fi
  }
  stage python python_tests
fi
