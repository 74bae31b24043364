#!/usr/bin/env bash
# The README's test command: installs what is missing, builds the test suite, converts the
# pretrained models, then runs the whole GoogleTest and pytest suites under ctest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
# Only what ctest runs: the benchmarks are not part of it (scripts/build.sh builds them).
bash "$root/scripts/build.sh" --target verity_test_suite
bash "$root/scripts/setup_models.sh"
export VERITY_REQUIRE_MODELS="${VERITY_REQUIRE_MODELS:-1}"
cd "$root/build"
ctest --output-on-failure -j "$(nproc)" "$@"
