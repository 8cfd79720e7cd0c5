#!/usr/bin/env bash
# The cost model against every measured point we have: the predicted and measured step time and
# peak memory per device, and their ratios, one table row per point (docs/cost-model.md keeps the
# latest output). Points are of two kinds:
#   quoted    a measurement someone else made: the V100 calibration point
#             (../shared/reference/seed-calibration.md), the plans that were measured estimated by
#             scripts/v100_calibration.sh (its pinned Megatron + data parallel rows);
#   run       our runtime: `alpa run --json` trains the zoo model on `local:N` in-process devices
#             and reports the prediction and the measurement side by side.
# A new run point is one line of POINTS below. A point the planner cannot reproduce (a missing
# model, an unknown preset, a plan that fails) is listed with the reason, never dropped.
#
#   scripts/fidelity.sh [ALPA_BINARY] [STEPS]      (defaults: build/tools/alpa/alpa, 5 steps)
#
# Measured step times are the median of the steps after the first (alpa run's); on this shared
# 2-core machine they vary from run to run, and a `local:N` with more devices than cores shares
# them, which the model does not price (docs/pipeline-execution.md).
set -uo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
alpa="${1:-${repo_root}/build/tools/alpa/alpa}"
steps="${2:-5}"
if [[ ! -x "${alpa}" ]]; then
  echo "fidelity: no alpa binary at ${alpa}; build it (ninja -C build) or pass its path" >&2
  exit 2
fi

# label | alpa arguments (each run as `alpa ARGS --steps STEPS --json`)
POINTS=(
  "gpt-tiny, local:2, shard|run gpt-tiny --cluster local:2"
  "gpt-tiny, local:2, data|run gpt-tiny --cluster local:2 --method data"
  "gpt-tiny, local:2, zero2|run gpt-tiny --cluster local:2 --method zero2"
  "gpt-tiny, local:2, zero3|run gpt-tiny --cluster local:2 --method zero3"
  "gpt-tiny, local:2, data, 2 micro-batches|run gpt-tiny --cluster local:2 --method data --micro-batches 2"
  "gpt-tiny, local:2, data, 4 micro-batches|run gpt-tiny --cluster local:2 --method data --micro-batches 4"
  "gpt-tiny, local:2, data, remat|run gpt-tiny --cluster local:2 --method data --remat"
  "gpt-tiny, local:2, data, remat, 2 micro-batches|run gpt-tiny --cluster local:2 --method data --remat --micro-batches 2"
  "gpt-tiny, local:2, data, remat, 4 micro-batches|run gpt-tiny --cluster local:2 --method data --remat --micro-batches 4"
  "gpt-tiny 4 layers, local:4, pipeshard, 1 micro-batch|run gpt-tiny --layers 4 --cluster local:4 --method pipeshard --micro-batches 1"
  "gpt-tiny 4 layers, local:4, pipeshard, 2 micro-batches|run gpt-tiny --layers 4 --cluster local:4 --method pipeshard --micro-batches 2"
  "gpt-tiny 4 layers, local:4, pipeshard, 4 micro-batches|run gpt-tiny --layers 4 --cluster local:4 --method pipeshard --micro-batches 4"
  "gpt-tiny 4 layers, local:4, pipeshard, remat, 4 micro-batches|run gpt-tiny --layers 4 --cluster local:4 --method pipeshard --remat --micro-batches 4"
  "mlp-tiny, local:2, shard|run mlp-tiny --cluster local:2"
  "mlp-tiny, local:2, data|run mlp-tiny --cluster local:2 --method data"
  "mlp-tiny, local:2, zero2|run mlp-tiny --cluster local:2 --method zero2"
  "mlp-tiny, local:2, zero3|run mlp-tiny --cluster local:2 --method zero3"
  "mlp-tiny, local:2, data, 2 micro-batches|run mlp-tiny --cluster local:2 --method data --micro-batches 2"
  "mlp-tiny, local:2, data, 4 micro-batches|run mlp-tiny --cluster local:2 --method data --micro-batches 4"
  "mlp-tiny, local:2, data, remat|run mlp-tiny --cluster local:2 --method data --remat"
  "mlp-tiny, local:2, data, remat, 2 micro-batches|run mlp-tiny --cluster local:2 --method data --remat --micro-batches 2"
  "mlp-tiny, local:2, data, remat, 4 micro-batches|run mlp-tiny --cluster local:2 --method data --remat --micro-batches 4"
  "mlp-tiny 4 layers, local:4, pipeshard, 1 micro-batch|run mlp-tiny --layers 4 --cluster local:4 --method pipeshard --micro-batches 1"
  "mlp-tiny 4 layers, local:4, pipeshard, 2 micro-batches|run mlp-tiny --layers 4 --cluster local:4 --method pipeshard --micro-batches 2"
  "mlp-tiny 4 layers, local:4, pipeshard, 4 micro-batches|run mlp-tiny --layers 4 --cluster local:4 --method pipeshard --micro-batches 4"
  "mlp-tiny 4 layers, local:4, pipeshard, remat, 4 micro-batches|run mlp-tiny --layers 4 --cluster local:4 --method pipeshard --remat --micro-batches 4"
  "moe-tiny, local:2, shard|run moe-tiny --cluster local:2"
  "wresnet-tiny, local:2, shard|run wresnet-tiny --cluster local:2"
  "bert-tiny, local:2, shard|run bert-tiny --cluster local:2"
  "mlp-small, local:2, shard|run mlp-small --cluster local:2"
)

# One row from `alpa run --json`'s document on stdin.
row() {
  python3 -c '
import json, sys
s = json.load(sys.stdin)["summary"]
gib = 2**30
def fmt_b(x): return f"{x / gib:.3f} GiB" if x >= gib / 10 else f"{x / 2**20:.3f} MiB"
step_p, step_m = s["predicted_step_time_s"], s["measured_step_time_s"]
def line(label, peak_p, peak_m):
    print(f"| {label} | our runtime | {step_p:.4g} | {step_m:.4g} | {step_p / step_m:.2f} | "
          f"{fmt_b(peak_p)} | {fmt_b(peak_m)} | {peak_p / peak_m:.2f} |")
if s.get("method") == "pipeshard":  # the stage furthest from its prediction, as compiled and planned
    for kind, key in (("compiled", "compiled_peak_memory_bytes"),
                      ("planned", "predicted_peak_memory_bytes")):
        pairs = [(st[key], st["measured_peak_memory_bytes"]) for st in s["stages"]]
        line(f"{sys.argv[1]}, as {kind}", *max(pairs, key=lambda p: abs(p[1] / p[0] - 1)))
else:
    line(sys.argv[1], s["predicted_peak_memory_bytes"], s["measured_peak_memory_bytes"])
' "$1"
}

cd "${repo_root}"
echo "| point | measured by | predicted step (s) | measured step (s) | predicted / measured | predicted peak | measured peak | predicted / measured |"
echo "|---|---|---|---|---|---|---|---|"
# The quoted points: v100_calibration.sh's rows of the plans that were measured.
echo "fidelity: the V100 calibration point" >&2
if calibration="$("${repo_root}/scripts/v100_calibration.sh" "${alpa}" 2>/tmp/fidelity.err)"; then
  grep "pinned" <<<"${calibration}" | python3 -c '
import sys
for line in sys.stdin:
    c = [x.strip() for x in line.strip().strip("|").split("|")]
    print(f"| gpt-6.7b dims, 4 layers, {c[0]} on 8 V100s | quoted (seed-calibration.md) | "
          f"{c[1]} | {c[2]} | {c[3]} | {c[4]} GiB | {c[5]} GiB | {c[6]} |")'
else
  echo "| the V100 calibration point | - | not reproduced: $(head -c 300 /tmp/fidelity.err | tr '\n' ' ') | | | | | |"
fi
for point in "${POINTS[@]}"; do
  IFS='|' read -r label args <<<"${point}"
  read -r -a argv <<<"${args}"
  echo "fidelity: ${label}" >&2
  if ! out="$("${alpa}" "${argv[@]}" --steps "${steps}" --json 2>/tmp/fidelity.err)"; then
    reason="$(sed 's/^alpa: error: //' /tmp/fidelity.err | head -c 300 | tr '\n' ' ')"
    echo "| ${label} | - | not reproduced: ${reason} | | | | | |"
    continue
  fi
  row "${label}" <<<"${out}" || echo "| ${label} | - | not reproduced: no estimate in the output | | | | | |"
done
