#!/usr/bin/env bash
# The heuristic solver against CBC, each given the same time limit, on every problem of a set
# made by make_problem_set.sh (or any directory of IOPDDL files). Prints a Markdown table: each
# solver's cost and lower bound, the heuristic's gap and time to within 1% of its final cost, and
# heuristic / CBC. With REFERENCE_LIMIT_S set, CBC also runs that long and its answer (marked
# "optimal" when proven) is the reference.
#
#   bench/solver/run.sh PROBLEM_DIR [LIMIT_S=20] [ALPA_BINARY]
#   THREADS=2 bench/solver/run.sh ...     (the heuristic on 2 threads; CBC runs on one)
#
# CBC runs only on problems of at most CBC_MAX_NODES nodes (default 4000): on larger ones its
# first LP alone outlasts a limit of tens of seconds (bert-base, 4,960 nodes: no answer in 10 s).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
dir="${1:?usage: run.sh PROBLEM_DIR [LIMIT_S] [ALPA_BINARY]}"
limit="${2:-20}"
alpa="${3:-build/tools/alpa/alpa}"

solve() {  # solve FILE SOLVER LIMIT -> "status cost bound gap within_1pct_s"
  # A safety net: `alpa solve` holds its limit (CBC runs in a child process killed past it); a run
  # past twice the limit is cut off and shown as "error".
  local threads=()
  [ "$2" = heuristic ] && threads=(--threads "${THREADS:-1}")
  timeout "$(( 2 * ${3%.*} + 30 ))" "${alpa}" solve "$1" --solver "$2" --time-limit "$3" \
    "${threads[@]}" --json 2>/dev/null |
    python3 -c 'import json,sys
j = json.load(sys.stdin)
gap = "-" if j["gap"] is None else "%.2f%%" % (100 * j["gap"])
within = "-" if j["within_1pct_s"] is None else "%.1f" % j["within_1pct_s"]
print(j["status"], j["cost"], j["lower_bound"], gap, within)' 2>/dev/null || echo "error - - - -"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a !~ /^[0-9]+$/ || b !~ /^[0-9]+$/ || b == 0) print "-"; else printf "%.4f", a / b }'; }

header="| problem | nodes | heuristic cost | bound | gap | within 1% at s | CBC cost | CBC bound | heuristic / CBC |"
rule="|---|---:|---:|---:|---:|---:|---:|---:|---:|"
if [ -n "${REFERENCE_LIMIT_S:-}" ]; then
  header="${header} reference (CBC ${REFERENCE_LIMIT_S} s) | heuristic / reference |"
  rule="${rule}---:|---:|"
fi
echo "${header}"
echo "${rule}"
for file in "${dir}"/*.json.gz "${dir}"/*.json; do
  [ -e "${file}" ] || continue
  name="$(basename "${file}")"
  nodes="$(python3 -c 'import gzip,json,sys; f=sys.argv[1]; o=gzip.open if f.endswith(".gz") else open; print(len(json.load(o(f))["problem"]["nodes"]["costs"]))' "${file}")"
  read -r _ h_cost h_bound h_gap h_within <<<"$(solve "${file}" heuristic "${limit}")"
  c_cost="skipped" c_bound="-"
  if [ "${nodes}" -le "${CBC_MAX_NODES:-4000}" ]; then
    read -r _ c_cost c_bound _ _ <<<"$(solve "${file}" cbc "${limit}")"
  fi
  line="| ${name%%.json*} | ${nodes} | ${h_cost} | ${h_bound} | ${h_gap} | ${h_within} | ${c_cost} | ${c_bound} | $(ratio "${h_cost}" "${c_cost}") |"
  if [ -n "${REFERENCE_LIMIT_S:-}" ]; then
    read -r r_status r_cost _ _ _ <<<"$(solve "${file}" cbc "${REFERENCE_LIMIT_S}")"
    line="${line} ${r_cost} (${r_status}) | $(ratio "${h_cost}" "${r_cost}") |"
  fi
  echo "${line}"
done
