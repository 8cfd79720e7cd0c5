#!/usr/bin/env bash
# Our cost model against one measured point: Alpa's GPT benchmark with GPT-3 6.7B dimensions and
# 4 layers, global batch 32, one micro-batch, on one host of 8 V100-SXM2-32GB, pure intra-op on
# four (dp, op) meshes (../shared/reference/seed-calibration.md, measured by an independent team;
# its step times and peak memory are quoted below; its "GB" is alpa.util's GB, 2^30 bytes, which
# Alpa's benchmark divides by). The estimates come from the datasheet figures
# of the v100-32gb preset, not fitted to this point. Prints a Markdown table (docs/cost-model.md):
# the plan our solver finds on each mesh, then the plan that was measured (pinned, below).
#
#   scripts/v100_calibration.sh [ALPA_BINARY]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
alpa="${1:-./alpa}"

# mesh, measured step time (s), measured peak memory per GPU (GiB)
measured=("1,8 0.565 6.478" "2,4 0.485 5.098" "4,2 0.457 5.449" "8,1 0.445 6.924")

# One table row: plan_row LABEL MESH STEP MEMORY [PLAN FLAGS...], the estimate beside the
# measurement.
plan_row() {
  local label="$1" mesh="$2" step="$3" memory="$4"
  shift 4
  "${alpa}" plan gpt-6.7b --layers 4 --batch 32 --cluster v100-32gb:1x8 --mesh "${mesh}" \
    --batch-axis 0 --json "$@" |
    python3 -c "
import json, sys
estimate = json.load(sys.stdin)['estimate']
step, memory = estimate['step_time_s'], estimate['peak_memory_bytes'] / 2**30
label, measured_step, measured_memory = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
print(f'| {label} | {step:.3f} | {measured_step} | {step / measured_step:.2f} | '
      f'{memory:.2f} | {measured_memory} | {memory / measured_memory:.2f} |')" "${label}" "${step}" "${memory}"
}

echo "| (dp,op) | estimated step (s) | measured step (s) | estimated / measured | estimated peak (GiB) | measured peak (GiB) | estimated / measured |"
echo "|---|---|---|---|---|---|---|"
for row in "${measured[@]}"; do
  read -r mesh step memory <<<"${row}"
  plan_row "(${mesh})" "${mesh}" "${step}" "${memory}"
done

# Alpa's plans for these meshes were Megatron-LM's on the op axis and data parallelism on the dp
# axis (the reference's notes; (1,8): 28 all-reduces, no all-gather). Ours differ on (1,8) and
# (2,4), so that plan is estimated too: every matmul of the forward and backward passes pinned to
# Megatron's layout (column-split qkv and fc1, row-split out and fc2, heads split in attention,
# the vocabulary split in the head, the batch over dp), found by the shapes of the exported
# module's dots; the weight gradients' dots are left to the solver.
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
"${alpa}" inspect gpt-6.7b --layers 4 --batch 32 --export "${work}/gpt.hlo" >/dev/null
for row in "${measured[@]}"; do
  read -r mesh step memory <<<"${row}"
  python3 - "${work}/gpt.hlo" "${mesh}" >"${work}/megatron.json" <<'PY'
import json, re, sys
dp, op = (int(n) for n in sys.argv[2].split(","))
def tiled(tiles, replicate=False):
    suffix = " last_tile_dim_replicate" if replicate else ""
    return "{devices=[%s]<=[8]%s}" % (",".join(map(str, tiles)), suffix)
by_shape = {(32, 1024, 12288): tiled([dp, 1, op]), (32, 1024, 16384): tiled([dp, 1, op]),
            (32, 1024, 51200): tiled([dp, 1, op]), (32, 1024, 4096): tiled([dp, 1, 1, op], True)}
pins = {}
for line in open(sys.argv[1]):
    dot = re.match(r"\s*%(\S+) = f16\[([0-9,]+)\] dot\(", line)
    if not dot:
        continue
    shape = tuple(int(d) for d in dot.group(2).split(","))
    if len(shape) == 4:
        pins[dot.group(1)] = tiled([dp, op, 1, 1])
    elif shape in by_shape:
        pins[dot.group(1)] = by_shape[shape]
json.dump(pins, sys.stdout)
PY
  plan_row "(${mesh}) Megatron + data parallel, pinned" "${mesh}" "${step}" "${memory}" \
    --shardings "${work}/megatron.json"
done
