#!/usr/bin/env bash
# Our pipeshard search against Alpa's pre-found GPT, MoE and Wide-ResNet solutions
# (examples/alpa-solutions, from its benchmark suites' perf_test_auto_suite) and against the best
# Megatron-style (dp, op, pp) grid point, all estimated by our cost model on p3.16xlarge hosts with
# the suite's global batch ("global_batch" in each solution). Prints a Markdown table
# (docs/pipeshard.md).
#
#   scripts/compare_alpa_solutions.sh [ALPA_BINARY]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
alpa="${1:-./alpa}"

field() {  # field FILE KEY: a top-level value of a JSON file
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"
}
summary() {  # a plan document on stdin -> "step_s stages planning_s"
  python3 -c "import json,sys; j=json.load(sys.stdin); print(f\"{j['estimate']['step_time_s']:.2f} {len(j['stages'])} {j['compile']['total_s']:.2f}\")"
}

best_grid_point() {  # a uniform plan document on stdin -> "step_s dp,op,pp"
  python3 -c "import json,sys; j=json.load(sys.stdin); p=min((g for g in j['grid'] if g['step_time_s'] is not None), key=lambda g: g['step_time_s']); print(f\"{p['step_time_s']:.2f} {p['dp']},{p['op']},{p['pp']}\")"
}

echo "| GPUs | model | global batch | micro-batches | ours: step (s) | stages | planning (s) | Alpa's solution: step (s) | stages | ours / Alpa's | best uniform: step (s) | (dp,op,pp) | ours / uniform |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for file in examples/alpa-solutions/gpt-{2,4,8,16,32,64}.json \
            examples/alpa-solutions/moe-{1,2,4,8,16,32,64}.json \
            examples/alpa-solutions/wresnet-{1,2,4,8,16,32,64}.json; do
  gpus="$(basename "${file}" .json)"
  gpus="${gpus#*-}"
  model="$(field "${file}" model)"
  micro="$(field "${file}" num_micro_batches)"
  batch="$(field "${file}" global_batch)"
  hosts=$(( gpus > 8 ? gpus / 8 : 1 ))
  devices=$(( gpus > 8 ? 8 : gpus ))
  args=(plan "${model}" --cluster "p3.16xlarge:${hosts}x${devices}" --batch "${batch}"
        --micro-batches "${micro}" --method pipeshard --json)
  if ! ours_json="$("${alpa}" "${args[@]}" 2>/tmp/alpa_ours.err)"; then
    # Nothing fits: say why, and stop there (Alpa's solution and the grid fit no better).
    echo "| ${gpus} | ${model} | ${batch} | ${micro} | does not fit: $(sed 's/^alpa: error: //' /tmp/alpa_ours.err) | - | - | - | - | - | - | - | - |"
    continue
  fi
  read -r ours ours_stages planning < <(summary <<<"${ours_json}")
  if theirs_json="$("${alpa}" "${args[@]}" --manual-stages "${file}" 2>/tmp/alpa_solution.err)"; then
    read -r theirs theirs_stages _ < <(summary <<<"${theirs_json}")
    ratio="$(python3 -c "print(f'{${ours}/${theirs}:.2f}')")"
  else
    theirs="does not fit: $(sed 's/^alpa: error: [^:]*json: //; s/^alpa: error: //' /tmp/alpa_solution.err)"
    theirs_stages="-"
    ratio="-"
  fi
  uniform_args=("${args[@]}")
  uniform_args[${#uniform_args[@]}-2]=uniform  # --method pipeshard -> uniform
  if uniform_json="$("${alpa}" "${uniform_args[@]}" 2>/dev/null)"; then
    read -r uniform point < <(best_grid_point <<<"${uniform_json}")
    uniform_ratio="$(python3 -c "print(f'{${ours}/${uniform}:.2f}')")"
  else
    uniform="no grid point fits"
    point="-"
    uniform_ratio="-"
  fi
  echo "| ${gpus} | ${model} | ${batch} | ${micro} | ${ours} | ${ours_stages} | ${planning} | ${theirs} | ${theirs_stages} | ${ratio} | ${uniform} | ${point} | ${uniform_ratio} |"
done
