#!/usr/bin/env bash
# Profiles this machine twice in a row (`alpa profile --cluster local:N`, the second with
# `--compare` the first) and prints the second's derived figures and the comparison: the relative
# difference of each measurement's median, over the figures both runs kept (a flagged figure is
# never used, so it is not compared), and of the derived figures the cost model reads where both
# runs have them, with every figure more than 10% apart. Run it on an otherwise idle machine: a
# build beside it is load the profiles measure.
#
#   scripts/profile_stability.sh [DEVICES] [ALPA_BINARY] [KEEP_DIR]
#       (default: 2 devices, ./alpa; KEEP_DIR, when given, keeps the two profiles there)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
devices="${1:-2}"
alpa="${2:-./alpa}"
if [[ -n "${3:-}" ]]; then
  work="$3"
  mkdir -p "${work}"
else
  work="$(mktemp -d)"
  trap 'rm -rf "${work}"' EXIT
fi

"${alpa}" profile --cluster "local:${devices}" -o "${work}/run1.json" >/dev/null
"${alpa}" profile --cluster "local:${devices}" -o "${work}/run2.json" \
  --compare "${work}/run1.json" | sed -n '/^derived/,$p'
