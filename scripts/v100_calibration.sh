#!/usr/bin/env bash
# Our cost model against one measured point: Alpa's GPT benchmark with GPT-3 6.7B dimensions and
# 4 layers, global batch 32, one micro-batch, on one host of 8 V100-SXM2-32GB, pure intra-op on
# four (dp, op) meshes (../shared/reference/seed-calibration.md, measured by an independent team;
# its step times and peak memory are quoted below; its "GB" is alpa.util's GB, 2^30 bytes, which
# Alpa's benchmark divides by). The estimates come from the datasheet figures
# of the v100-32gb preset, not fitted to this point. Prints a Markdown table (docs/cost-model.md).
#
#   scripts/v100_calibration.sh [ALPA_BINARY]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
alpa="${1:-./alpa}"

# mesh, measured step time (s), measured peak memory per GPU (GiB)
measured=("1,8 0.565 6.478" "2,4 0.485 5.098" "4,2 0.457 5.449" "8,1 0.445 6.924")

echo "| (dp,op) | estimated step (s) | measured step (s) | estimated / measured | estimated peak (GiB) | measured peak (GiB) | estimated / measured |"
echo "|---|---|---|---|---|---|---|"
for row in "${measured[@]}"; do
  read -r mesh step memory <<<"${row}"
  "${alpa}" plan gpt-6.7b --layers 4 --batch 32 --cluster v100-32gb:1x8 --mesh "${mesh}" \
    --batch-axis 0 --json |
    python3 -c "
import json, sys
estimate = json.load(sys.stdin)['estimate']
step, memory = estimate['step_time_s'], estimate['peak_memory_bytes'] / 2**30
print(f'| ({sys.argv[1]}) | {step:.3f} | {sys.argv[2]} | {step / float(sys.argv[2]):.2f} | '
      f'{memory:.2f} | {sys.argv[3]} | {memory / float(sys.argv[3]):.2f} |')" "${mesh}" "${step}" "${memory}"
done
