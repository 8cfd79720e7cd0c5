#!/usr/bin/env bash
# Enforces the layer dependency graph on #include lines.
#
#   scripts/check_layers.sh [ROOT]      (ROOT defaults to the repository root)
#
# A file under ROOT/src/<layer>/ may include "<dep>/..." only for <dep> = <layer> itself or a layer
# in its allowed list below (the graph of the design: support is below everything). System and
# third-party includes (<...>, or "..." naming no layer) are not checked. tools/ may use any layer.
# Prints every violation as file:line and exits 1 if there is one; a src/ folder that is not a
# known layer is a violation too, so a new layer cannot skip the check.
set -euo pipefail

root="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
if [[ ! -d "${root}/src" ]]; then
  echo "check_layers: ${root}/src does not exist; pass the repository root" >&2
  exit 2
fi

# layer -> layers it may include (besides itself). Keep in step with the src/*/CMakeLists.txt
# DEPS and the layer map in README.md.
declare -A allowed=(
  [support]=""
  [ir]="support"
  [hlo]="support ir"
  [kernels]="support ir"
  [interp]="support ir kernels"
  [cost]="support ir cluster"
  [cluster]="support"
  [solver]="support"
  [autodiff]="support ir"
  [models]="support ir autodiff"
  [sharding]="support ir cluster cost solver"
  [pipeline]="support ir cluster cost sharding solver"
  [plan]="support ir hlo cluster cost autodiff pipeline sharding solver"
  [spmd]="support ir cluster cost solver sharding pipeline plan"
  [runtime]="support ir kernels interp cluster"
  [api]="support ir hlo kernels cluster cost solver autodiff models sharding pipeline plan spmd runtime"
)

violations=0
report() {
  echo "$1" >&2
  violations=$((violations + 1))
}

for layer_dir in "${root}"/src/*/; do
  layer="$(basename "${layer_dir}")"
  if [[ -z "${allowed[${layer}]+set}" ]]; then
    report "src/${layer}/: unknown layer; add it to scripts/check_layers.sh with its allowed deps"
    continue
  fi
  ok=" ${layer} ${allowed[${layer}]} "
  # file:line:#include "dep/..."  for every quoted include that names a directory.
  while IFS= read -r hit; do
    [[ -z "${hit}" ]] && continue
    file="${hit%%:*}"
    rest="${hit#*:}"
    line="${rest%%:*}"
    text="${rest#*:}"
    dep="$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^/"]+)\/.*/\1/' <<<"${text}")"
    # Only includes of project layers are checked ("oneapi/dnnl/..." uses <> anyway).
    [[ -n "${allowed[${dep}]+set}" ]] || continue
    if [[ "${ok}" != *" ${dep} "* ]]; then
      report "${file#"${root}"/}:${line}: layer '${layer}' may not include \"${dep}/...\" (allowed: ${allowed[${layer}]:-none})"
    fi
  done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^/"]+/' "${layer_dir}" \
             --include='*.h' --include='*.cc' --include='*.cpp' --include='*.hpp' || true)
done

if ((violations > 0)); then
  echo "check_layers: ${violations} violation(s) of the layer graph" >&2
  exit 1
fi
echo "check_layers: OK" >&2
