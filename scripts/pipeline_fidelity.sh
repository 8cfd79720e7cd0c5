#!/usr/bin/env bash
# Pipelined runs against the simulator: gpt-tiny and mlp-tiny (4 blocks) on local:N at 2 and 4
# stages under GPipe and 1F1B, each trained for a few steps by `alpa run --method pipeshard`, the
# measured step time, bubble and per-stage peak memory set beside the plan's (docs/pipeline-execution.md).
#
#   scripts/pipeline_fidelity.sh [ALPA] [PROFILE.json] [DEVICES] [MICRO_BATCHES] [STEPS]
#
# ALPA defaults to build/tools/alpa/alpa; PROFILE (from `alpa profile --cluster local:N`) puts this
# machine's figures in place of the local preset's; DEVICES defaults to 4, MICRO_BATCHES to 8,
# STEPS to 12. Prints one table row per run, then the step time ratio of a one-stage pipelined
# plan against the single-stage runtime on the same mesh, taken in alternation.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
alpa="${1:-${repo_root}/build/tools/alpa/alpa}"
profile="${2:-}"
devices="${3:-4}"
micro_batches="${4:-8}"
steps="${5:-12}"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

profile_flag=()
if [[ -n "${profile}" ]]; then profile_flag=(--profile "${profile}"); fi

# Stages of `layers` model layers over `stages` groups of devices/stages devices each, 1-D meshes.
write_stages() {
  python3 - "$@" <<'EOF'
import json, sys
layers, stages, devices, path = map(str, sys.argv[1:5])
layers, stages, devices = int(layers), int(stages), int(devices)
per = devices // stages
out, first = [], 0
for s in range(stages):
    count = layers // stages + (1 if s < layers % stages else 0)
    out.append({"layers": list(range(first, first + count)), "submesh": [1, per],
                "logical_mesh": [per, 1], "force_batch_dim_to_mesh_dim": 0 if per > 1 else None})
    if per == 1:
        out[-1].pop("force_batch_dim_to_mesh_dim")
    first += count
json.dump({"layers": layers, "stages": out}, open(path, "w"))
EOF
}

printf '%-8s %-6s %-6s %10s %10s %6s %8s %8s  %s\n' model stages sched "measured" "simulated" ratio \
  "bubble" "(sim)" "peak measured/predicted per stage"
for model in gpt-tiny mlp-tiny; do
  layers=6
  if [[ "${model}" == mlp-tiny ]]; then layers=5; fi
  for stages in 2 4; do
    if ((stages > devices)); then continue; fi
    write_stages "${layers}" "${stages}" "${devices}" "${work}/stages.json"
    for schedule in gpipe 1f1b; do
      "${alpa}" run "${model}" --layers 4 --batch $((4 * micro_batches)) \
        --micro-batches "${micro_batches}" --cluster "local:${devices}" --method pipeshard \
        --manual-stages "${work}/stages.json" --schedule "${schedule}" --steps "${steps}" \
        "${profile_flag[@]}" --json >"${work}/run.json"
      python3 - "${model}" "${stages}" "${schedule}" "${work}/run.json" <<'EOF'
import json, sys
model, stages, schedule, path = sys.argv[1:5]
s = json.load(open(path))["summary"]
peaks = " ".join("%.2f" % (x["measured_peak_memory_bytes"] / x["predicted_peak_memory_bytes"])
                 for x in s["stages"])
print("%-8s %-6s %-6s %8.2fms %8.2fms %6.2f %8.2f %8.2f  %s" % (
    model, stages, schedule, 1e3 * s["measured_step_time_s"], 1e3 * s["predicted_step_time_s"],
    s["measured_step_time_s"] / s["predicted_step_time_s"], s["measured_bubble_fraction"],
    s["predicted_bubble_fraction"], peaks))
EOF
    done
  done
done

# One stage on every device, pipelined and single-stage, alternating: the pipeline machinery's cost.
echo
echo "one stage on local:${devices}: pipelined / single-stage step time (gpt-tiny, ${micro_batches} micro-batches)"
write_stages 6 1 "${devices}" "${work}/one.json"
for round in 1 2 3; do
  "${alpa}" run gpt-tiny --layers 4 --batch $((4 * micro_batches)) --micro-batches "${micro_batches}" \
    --cluster "local:${devices}" --method pipeshard --manual-stages "${work}/one.json" \
    --steps "${steps}" --json >"${work}/pipelined.json"
  "${alpa}" run gpt-tiny --layers 4 --batch $((4 * micro_batches)) --micro-batches "${micro_batches}" \
    --cluster "local:${devices}" --method shard --mesh "${devices}" --batch-axis 0 \
    --steps "${steps}" --json >"${work}/single.json"
  python3 - "${round}" "${work}/pipelined.json" "${work}/single.json" <<'EOF'
import json, sys
p = json.load(open(sys.argv[2]))["summary"]["measured_step_time_s"]
s = json.load(open(sys.argv[3]))["summary"]["measured_step_time_s"]
print("round %s: %.2f ms / %.2f ms = %.3f" % (sys.argv[1], 1e3 * p, 1e3 * s, p / s))
EOF
done
