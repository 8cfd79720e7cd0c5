#!/usr/bin/env bash
# Profiles this machine twice in a row (`alpa profile --cluster local:N`) and compares the two
# databases figure by figure: the relative difference of each measurement's median, over the
# figures both runs kept (a flagged figure is never used, so it is listed, not compared), and of
# the derived figures the cost model reads where both runs have them. Prints a summary and every
# figure that moved more than 10%. Run it on an otherwise idle machine: a build beside it is load
# the profiles measure.
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

for run in 1 2; do
  "${alpa}" profile --cluster "local:${devices}" -o "${work}/run${run}.json" >/dev/null
done

python3 - "${work}/run1.json" "${work}/run2.json" <<'EOF'
import json
import sys

first, second = (json.load(open(path)) for path in sys.argv[1:3])
by_name = {m["name"]: m for m in second["measurements"]}
rows, flagged = [], []
for m in first["measurements"]:
    other = by_name[m["name"]]
    if m["flagged"] or other["flagged"]:
        flagged.append(m["name"])
        continue
    rows.append((abs(other["median_s"] - m["median_s"]) / m["median_s"], m["name"]))

def derived(database):
    d = database["derived"]
    figures = {f"peak_flops {k}": v for k, v in d["peak_flops"].items()}
    if d["memory_bandwidth"] > 0:  # 0: the largest add was flagged, so there is none
        figures["memory_bandwidth"] = d["memory_bandwidth"]
    for kind, fit in d.get("collectives", {}).items():
        figures[f"{kind} latency_s"] = fit["latency_s"]
        figures[f"{kind} bandwidth"] = fit["bandwidth"]
    return figures

d1, d2 = derived(first), derived(second)
derived_rows = [(abs(d2[k] - v) / v, k) for k, v in d1.items() if k in d2 and v > 0]

rows.sort(reverse=True)
derived_rows.sort(reverse=True)
print(f"measurements kept by both runs: {len(rows)}; flagged in either: {len(flagged)}")
for label, found in (("a kept measurement", rows), ("a derived figure in both", derived_rows)):
    if found:
        print(f"largest difference of {label}: {found[0][0]:.1%} ({found[0][1]})")
    else:
        print(f"largest difference of {label}: none to compare")
over = [r for r in rows + derived_rows if r[0] > 0.10]
print(f"figures more than 10% apart: {len(over)}")
for difference, name in over:
    print(f"  {difference:.1%}  {name}")
for name in flagged:
    print(f"  flagged (not used): {name}")
EOF
