#!/usr/bin/env bash
# The whole test suite, as CI runs it:
#
#   scripts/test.sh
#
# setup (packages, build/ configuration) -> build everything -> ctest -> layer check.
# Exits non-zero on the first failing step. About 10 minutes on 2 cores from scratch.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${repo_root}/build"
jobs="${ALPA_JOBS:-2}"

echo "== setup" >&2
"${repo_root}/scripts/setup.sh"

echo "== build (${build_dir}, -j${jobs})" >&2
ninja -C "${build_dir}" -j"${jobs}"

echo "== tests" >&2
ctest --test-dir "${build_dir}" --output-on-failure -j"${jobs}"

echo "== layer check" >&2
"${repo_root}/scripts/check_layers.sh" "${repo_root}"

echo "== all passed" >&2
