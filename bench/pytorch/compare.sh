#!/usr/bin/env bash
# One GPT training step, alpa against PyTorch on this CPU, measured side by side in one run
# (issue 7's benchmark): the zoo's GPT (src/models/gpt.h) with the same layers, hidden size,
# heads, sequence, vocabulary, batch, optimizer (Adam) and thread count; alpa's fast kernels
# against its reference kernels (the interpreter's handlers, --kernels reference) on the same one
# device; and alpa's scaling from one device to two in-process devices (data parallel, local:2).
# Prints the median step time of each and the ratios; the ratios, not the times, go in
# bench/pytorch/README.md.
#
#   bench/pytorch/compare.sh [--layers 2 --hidden 256 --heads 4 --seq 128 --vocab 1024 --batch 8]
#
# Needs the built ./alpa and Debian's python3-torch (/usr/bin/python3). PyTorch's matmuls go to
# the system BLAS (libblas.so.3): with only Debian's reference BLAS installed they ran at 6 GFLOP/s
# here, so install libopenblas0-pthread (it takes over the alternative) for a fair peer, and the
# peer runs without OPENBLAS_CORETYPE=Haswell, which halves OpenBLAS on these machines
# (../shared/reference/machine-notes.md): PyTorch at its best.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
alpa="${repo_root}/alpa"
config=(--layers 2 --hidden 256 --heads 4 --seq 128 --vocab 1024 --batch 8)
if (($# > 0)); then config=("$@"); fi
steps=6
threads="$(nproc)"

median_step() {  # the median time_s of a run's steps, the first (warm-up) left out
  /usr/bin/python3 -c '
import json, statistics, sys
document = json.load(sys.stdin)
steps = document["steps"] if isinstance(document, dict) else document
print(statistics.median(step["time_s"] for step in steps[1:]))'
}

if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "error: /usr/bin/python3 cannot import torch; apt-get install python3-torch" \
    "libopenblas0-pthread" >&2
  exit 2
fi
echo "config: ${config[*]}, ${steps} steps (median of the last $((steps - 1))), ${threads} threads" >&2
blas="$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 || true)"
if [[ "${blas}" != *openblas* ]]; then
  echo "warning: libblas.so.3 is ${blas:-missing}, not OpenBLAS: PyTorch will be slow;" \
    "apt-get install libopenblas0-pthread" >&2
fi
torch_s="$(env -u OPENBLAS_CORETYPE /usr/bin/python3 "${repo_root}/bench/pytorch/gpt_step.py" "${config[@]}" \
  --steps "${steps}" --threads "${threads}" --lr 0.001 | median_step)"
alpa_run() {  # the median step time of alpa run on the cluster $1 with the kernels $2
  "${alpa}" run gpt-tiny "${config[@]}" --lr 0.001 --steps "${steps}" --json --cluster "$1" \
    --method data --kernels "$2" | median_step
}
alpa_s="$(alpa_run local:1 fast)"
reference_s="$(alpa_run local:1 reference)"
alpa2_s="$(alpa_run local:2 fast)"

/usr/bin/python3 - "${torch_s}" "${alpa_s}" "${reference_s}" "${alpa2_s}" <<'PY'
import sys
torch_s, alpa_s, reference_s, alpa2_s = map(float, sys.argv[1:])
print(f"{'engine':<40} {'s/step':>8} {'vs PyTorch':>11}")
print(f"{'PyTorch ' + __import__('torch').__version__:<40} {torch_s:>8.3f} {1.0:>10.2f}x")
print(f"{'alpa, 1 device, fast kernels':<40} {alpa_s:>8.3f} {torch_s / alpa_s:>10.2f}x")
print(f"{'alpa, 1 device, reference kernels':<40} {reference_s:>8.3f} {torch_s / reference_s:>10.2f}x")
print(f"{'alpa, local:2 data parallel':<40} {alpa2_s:>8.3f} {torch_s / alpa2_s:>10.2f}x")
print(f"alpa fast kernels vs reference kernels: {reference_s / alpa_s:.2f}x")
print(f"alpa scaling 1 -> 2 devices: {alpa_s / alpa2_s:.2f}x")
PY
