#!/usr/bin/env bash
# Runs the heuristic solver on the IOPDDL contest instances we have (A, B, G, M, S), each with
# the contest's time limit (load included), and prints a Markdown table (our cost, best contest
# cost, XLA's cost, ours/best, our lower bound and gap, time to within 1% of the final cost). The
# table in docs/iopddl.md is its output.
#
#   bench/iopddl/run.sh [BUILD_DIR] [INSTANCES...]    (defaults: build, A B G M S)
#   LIMIT_S=20 bench/iopddl/run.sh ...                (every instance at 20 s instead)
#   THREADS=2 bench/iopddl/run.sh ...                 (the heuristic on 2 threads; default 1)
#
# Needs the iopddl_bench target (`ninja -C BUILD_DIR iopddl_bench`), which solves through
# Solve() with --solver heuristic semantics and verifies with the independent checker. The data
# is ../shared/iopddl (targets.csv: best contest cost, XLA's cost, time limit per instance).
# Instances run one after another: the machine's cores are shared, and timings are wall times.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build}"
shift || true
instances=("$@")
[ ${#instances[@]} -eq 0 ] && instances=(A B G M S)
data="$root/../shared/iopddl"
bench="$build/bench/iopddl_bench"
[ -x "$bench" ] || { echo "missing $bench: run ninja -C $build iopddl_bench" >&2; exit 2; }

echo "| instance | our cost | best contest cost | XLA cost | ours / best | ours / XLA | lower bound | gap | within 1% at s | solve s | load s | limit s |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for name in "${instances[@]}"; do
  IFS=, read -r _ best _ xla limit < <(grep "^$name," "$data/targets.csv")
  limit="${LIMIT_S:-$limit}"
  line="$("$bench" "$data/asplos-2025-iopddl-$name.json.gz" "$limit" "${THREADS:-1}" 2>/dev/null)"
  cost="$(sed -n 's/.*"cost": \([0-9]*\|null\).*/\1/p' <<<"$line")"
  time_s="$(sed -n 's/.*"time_s": \([0-9.]*\).*/\1/p' <<<"$line")"
  load_s="$(sed -n 's/.*"load_s": \([0-9.]*\).*/\1/p' <<<"$line")"
  bound="$(sed -n 's/.*"lower_bound": \(-\?[0-9]*\|null\).*/\1/p' <<<"$line")"
  within="$(sed -n 's/.*"within_1pct_s": \(-\?[0-9.]*\).*/\1/p' <<<"$line")"
  gap="$(awk -v c="$cost" -v b="$bound" 'BEGIN { if (c == "null" || b == "null" || c == 0) print "-"; else printf "%.2f%%", 100 * (c - b) / c }')"
  ratio() { [ -n "$2" ] && [ "$1" != null ] && awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", a / b }' || echo "-"; }
  echo "| $name | $cost | $best | ${xla:--} | $(ratio "$cost" "$best") | $(ratio "$cost" "$xla") | $bound | $gap | $within | $time_s | $load_s | $limit |"
done
