#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, converts the
# pretrained models, then runs the whole GoogleTest and pytest suites under ctest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh"
bash "$root/scripts/setup_models.sh"
export VERITY_REQUIRE_MODELS="${VERITY_REQUIRE_MODELS:-1}"
cd "$root/build"
ctest --output-on-failure -j "$(nproc)" "$@"
