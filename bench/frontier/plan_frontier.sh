#!/usr/bin/env bash
# Plans the frontier-scale models of the zoo on DGX H100 clusters (issue: frontier scale) with the
# micro-batch search on, twice each: prints the planning time, the plan's shape and step time, and
# checks that the two plan documents are equal but for their timings. Where a hand-made shape is
# published (Llama 3 405B: tp 8, pp 16, dp 128, 16 micro-batches of one sequence per replica)
# it is costed beside ours with --method uniform on the same cost model.
#
#   bench/frontier/plan_frontier.sh [ALPA_BINARY]      (default build/tools/alpa/alpa)
set -euo pipefail
alpa="${1:-build/tools/alpa/alpa}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

# name  cluster  global batch (sequences of 8192 tokens: 4M tokens on 64 GPUs, Llama 3's 16M on
# 1,024 and more)
targets=(
  "llama3-8b dgx-h100:8 512"
  "llama3-70b dgx-h100:128 2048"
  "mixtral-8x22b dgx-h100:128 2048"
  "llama3-405b dgx-h100:2048 2048"
)
for target in "${targets[@]}"; do
  read -r model cluster batch <<<"$target"
  for run in 1 2; do
    "$alpa" plan "$model" --cluster "$cluster" --method pipeshard --batch "$batch" \
      -o "$out/$model.$run.json" >/dev/null
  done
done
"$alpa" plan llama3-405b --cluster dgx-h100:2048 --method uniform --dp 128 --op 8 --pp 16 \
  --micro-batches 16 --batch 2048 -o "$out/llama3-405b.published.json" >/dev/null

python3 - "$out" "${targets[@]}" <<'PYTHON'
import json
import sys

out = sys.argv[1]


def load(path):
    with open(path) as f:
        return json.load(f)


def shape(plan):
    groups = len(plan["stages"]) // plan["num_chunks"]
    meshes = sorted({s["mesh_config"] for s in plan["stages"]})
    chunks = f", {plan['num_chunks']} chunks" if plan["num_chunks"] > 1 else ""
    return (f"pp {groups} on {' / '.join(meshes)}; {plan['schedule']}{chunks}, "
            f"{plan['num_micro_batches']} x {plan['micro_batch_size']}")


rows = []
for target in sys.argv[2:]:
    model, cluster, batch = target.split()
    first, second = (load(f"{out}/{model}.{run}.json") for run in (1, 2))
    same = all(first[k] == second[k] for k in first if k != "compile") and first.keys() == second.keys()
    rows.append((model, cluster, f"{first['compile']['total_s']:.1f} s", shape(first),
                 f"{first['estimate']['step_time_s']:.2f} s", "yes" if same else "NO"))
published = load(f"{out}/llama3-405b.published.json")
rows.append(("llama3-405b (Meta's shape)", "dgx-h100:2048", "-", shape(published),
             f"{published['estimate']['step_time_s']:.2f} s", "-"))
header = ("model", "cluster", "planning", "plan", "step time", "deterministic")
widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
for row in [header, tuple("-" * w for w in widths)] + rows:
    print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())
if any(r[5] == "NO" for r in rows):
    sys.exit("a plan differed between two runs")
PYTHON
