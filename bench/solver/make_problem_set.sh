#!/usr/bin/env bash
# The solver's own benchmark set (issue 38): auto-sharding problems of the zoo's models across
# sizes, 1-D to 3-D meshes, methods and memory budgets, dumped by `alpa plan --dump-problem` in
# the IOPDDL contest's format. Each configuration gives two problems: the planner's own (the
# device's memory as the limit) and a tight one, its limit halfway between the least possible
# peak (every node at its least allowed usage) and the peak of the heuristic's solution of the
# first (`alpa solve --effort 200`), so that memory binds. Forbidden edge entries can still make
# a tight problem infeasible; the set keeps it (the solver must say so). Not committed (tens of
# MB); regenerate it:
#
#   bench/solver/make_problem_set.sh OUT_DIR [ALPA_BINARY]    (PLAN_TIMEOUT_S: per plan, 600)
#   ONLY='8$|x4$' bench/solver/make_problem_set.sh OUT_DIR    (configurations whose names match)
#
# Prints one line per problem (nodes, edges, limit) and names every configuration that did not
# give a problem, with the planner's reason.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${1:?usage: make_problem_set.sh OUT_DIR [ALPA_BINARY]}"
alpa="${2:-build/tools/alpa/alpa}"
mkdir -p "${out}"

# name model cluster method mesh
configurations=(
  "gpt125m-8 gpt-125m p3.16xlarge:1x8 shard 8"
  "gpt125m-2x4 gpt-125m p3.16xlarge:1x8 shard 2x4"
  "gpt125m-2x2x2 gpt-125m p3.16xlarge:1x8 shard 2x2x2"
  "gpt125m-data-8 gpt-125m p3.16xlarge:1x8 data 8"
  "gpt350m-4x2 gpt-350m p3.16xlarge:1x8 shard 4x2"
  "gpt350m-zero3-8 gpt-350m p3.16xlarge:1x8 zero3 8"
  "gpt1.3b-2x8 gpt-1.3b p3.16xlarge:2x8 shard 2x8"
  "gpt2.6b-4x8 gpt-2.6b p3.16xlarge:4x8 shard 4x8"
  "gpt6.7b-2x2x8 gpt-6.7b p3.16xlarge:4x8 shard 2x2x8"
  "gpt15b-8x8 gpt-15b p3.16xlarge:8x8 shard 8x8"
  "moe380m-8 moe-380m p3.16xlarge:1x8 shard 8"
  "moe380m-2x4 moe-380m p3.16xlarge:1x8 shard 2x4"
  "moe380m-zero2-8 moe-380m p3.16xlarge:1x8 zero2 8"
  "moe1.3b-2x8 moe-1.3b p3.16xlarge:2x8 shard 2x8"
  "moe2.4b-2x2x8 moe-2.4b p3.16xlarge:4x8 shard 2x2x8"
  "moe7.1b-4x8 moe-7.1b p3.16xlarge:4x8 shard 4x8"
  "wresnet250m-8 wresnet-250m p3.16xlarge:1x8 shard 8"
  "wresnet250m-2x4 wresnet-250m p3.16xlarge:1x8 shard 2x4"
  "wresnet1b-2x2x2 wresnet-1b p3.16xlarge:1x8 shard 2x2x2"
  "wresnet2b-2x8 wresnet-2b p3.16xlarge:2x8 shard 2x8"
  "wresnet13b-4x8 wresnet-13b p3.16xlarge:4x8 shard 4x8"
  "bert-base-2x4 bert-base p3.16xlarge:1x8 shard 2x4"
  "bert-large-2x8 bert-large p3.16xlarge:2x8 shard 2x8"
  "mlp-large-2x4 mlp-large p3.16xlarge:1x8 shard 2x4"
)

for configuration in "${configurations[@]}"; do
  read -r name model cluster method mesh <<<"${configuration}"
  [[ "${name}" =~ ${ONLY:-.} ]] || continue
  problem="${out}/${name}.json"
  status=0
  timeout "${PLAN_TIMEOUT_S:-600}" "${alpa}" plan "${model}" --cluster "${cluster}" \
    --method "${method}" --mesh "${mesh}" --dump-problem "${problem}" \
    >/dev/null 2>"${out}/${name}.err" || status=$?
  if [ "${status}" -ne 0 ]; then
    [ "${status}" -eq 124 ] && echo "planning took over ${PLAN_TIMEOUT_S:-600} s" >>"${out}/${name}.err"
    echo "${name}: no problem: $(tail -1 "${out}/${name}.err")"
    continue
  fi
  rm -f "${out}/${name}.err"
  # The tight variant: a solution's peak from `alpa solve`, the least possible peak from the
  # problem itself.
  peak="$("${alpa}" solve "${problem}" --solver heuristic --effort 200 --json |
          python3 -c 'import json,sys; print(json.load(sys.stdin)["peak_usage"])')"
  python3 - "${problem}" "${out}/${name}-tight.json" "${peak}" <<'PYTHON'
import json, sys
source, target, peak = sys.argv[1], sys.argv[2], int(sys.argv[3])
document = json.load(open(source))
problem = document["problem"]
nodes = problem["nodes"]
# Live over [start, end): the least usage among a node's allowed strategies (cost below the
# forbidden 1e18) summed per time point with a difference array.
change = {}
for (start, end), usages, costs in zip(nodes["intervals"], nodes["usages"], nodes["costs"]):
    least_usage = min((u for u, c in zip(usages, costs) if c < 10**18), default=min(usages))
    change[start] = change.get(start, 0) + least_usage
    change[end] = change.get(end, 0) - least_usage
least = live = 0
for t in sorted(change):
    live += change[t]
    least = max(least, live)
problem["usage_limit"] = least + (peak - least) // 2
problem["name"] = problem.get("name", "") + "-tight"
json.dump(document, open(target, "w"))
PYTHON
  for file in "${problem}" "${out}/${name}-tight.json"; do
    python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["problem"]; print("%s: %d nodes, %d edges, limit %s" % (sys.argv[1], len(p["nodes"]["costs"]), len(p["edges"]["nodes"]), p.get("usage_limit")))' "${file}"
    gzip -f "${file}"
  done
done
