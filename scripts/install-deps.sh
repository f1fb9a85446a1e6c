#!/usr/bin/env bash
# Installs the Debian packages hsdp needs to build and test (Debian 12, as root).
# Runs apt-get only when something is missing, so repeated calls are fast.
set -euo pipefail
packages=(cmake g++ make libboost-dev libfmt-dev libcli11-dev nlohmann-json3-dev
          libgtest-dev libgmock-dev libbenchmark-dev ccache zlib1g-dev clang-14
          libclang-rt-14-dev python3-sklearn liblinear-tools dataset-fashion-mnist
          libfftw3-dev libssl-dev libxml2-utils pybind11-dev python3-dev python3-numpy python3-pytest
          python3-matplotlib libopenmpi-dev openmpi-bin openssh-client
          python3-pip python3-venv python3-build python3-torch python3-mypy
          python3-pandas python3-mpmath locales)
# python3-pip, python3-venv, python3-build: `pip install .` and `python3 -m build --wheel`
# (pyproject.toml; the Python tests run against the module installed in a venv).
# libssl-dev: OpenSSL's ChaCha20, the CSPRNG every random draw comes from (src/random).
# python3-torch: examples/torch_shuffled.py and its test (a PyTorch loop certified by hsdp).
# python3-mypy: the examples and the docs' Python snippets type-check against the stubs.
# python3-pandas: hsdp.sklearn's estimators on DataFrames (feature_names_in_; scikit-learn's
# check_estimator runs its DataFrame checks only when pandas imports).
# python3-mpmath: the private hyperparameter search's bound checked against its theorems in
# 30-digit arithmetic (python/tests/test_sklearn.py; also a dependency of python3-sympy).
# locales: a decimal-comma locale (de_DE.UTF-8, generated below) for the tests that numbers read
# and print the same under any C locale (tests/test_locale.cpp, python/tests/test_robustness.py).
# openssh-client: Open MPI's mpirun refuses to start, even on one machine, when its launch
# agent (ssh or rsh) cannot be found; --no-install-recommends would leave it out.
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# de_DE.UTF-8 for the locale tests (about 2 s, once): localedef needs root, as apt-get does.
if ! locale -a 2>/dev/null | grep -qi '^de_DE\.utf-\?8$'; then
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
  $SUDO localedef -i de_DE -f UTF-8 de_DE.UTF-8 || echo "install-deps: de_DE.UTF-8 not generated (the locale tests will skip)"
fi
