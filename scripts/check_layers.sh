#!/usr/bin/env bash
# Enforces the layer dependency graph on #include lines.
#
#   scripts/check_layers.sh [ROOT]      (ROOT defaults to the repository root)
#
# The graph is the CMake link graph itself: each src/<layer>/CMakeLists.txt declares its layer
# with alpa_add_library(<layer> ... DEPS a b ...), and a file under src/<layer>/ may include
# "<dep>/..." only for <dep> = <layer>, support (below everything) or a layer <layer> reaches
# through DEPS (the transitive closure: what it links). So the check can be no looser than what
# links, and a new DEPS entry is the one place a dependency is granted. System and third-party
# includes (<...>, or "..." naming no layer) are not checked; tools/ may use any layer. Prints
# every violation as file:line, and the graph with --print; exits 1 on a violation. A src/
# folder without an alpa_add_library is a violation too, so a new layer cannot skip the check.
set -euo pipefail

print_graph=0
if [[ "${1:-}" == "--print" ]]; then
  print_graph=1
  shift
fi
root="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
if [[ ! -d "${root}/src" ]]; then
  echo "check_layers: ${root}/src does not exist; pass the repository root" >&2
  exit 2
fi

violations=0
report() {
  echo "$1" >&2
  violations=$((violations + 1))
}

# layer -> its direct DEPS, read from alpa_add_library(<layer> ... DEPS ... [PUBLIC_LIBS|PRIVATE_LIBS|SRCS ...]).
declare -A direct=()
for layer_dir in "${root}"/src/*/; do
  layer="$(basename "${layer_dir}")"
  cmake="${layer_dir}CMakeLists.txt"
  call=""
  if [[ -f "${cmake}" ]]; then
    call="$(sed 's/#.*//' "${cmake}" | tr '\n' ' ' | grep -oE 'alpa_add_library\([^)]*\)' || true)"
  fi
  if [[ -z "${call}" ]]; then
    report "src/${layer}/CMakeLists.txt: no alpa_add_library(${layer} ...); every layer declares its DEPS there"
    continue
  fi
  deps=""
  in_deps=0
  for word in ${call#alpa_add_library(}; do
    word="${word%)}"
    case "${word}" in
      DEPS) in_deps=1 ;;
      SRCS | PUBLIC_LIBS | PRIVATE_LIBS) in_deps=0 ;;
      *) if ((in_deps)) && [[ -n "${word}" ]]; then deps+=" ${word}"; fi ;;
    esac
  done
  direct[${layer}]="${deps}"
done

# The transitive closure of `direct` from one layer, support always included.
closure() {
  local -A seen=([support]=1)
  local stack=(${direct[$1]:-})
  while ((${#stack[@]} > 0)); do
    local next="${stack[-1]}"
    unset 'stack[-1]'
    [[ -n "${seen[${next}]+set}" ]] && continue
    seen[${next}]=1
    stack+=(${direct[${next}]:-})
  done
  echo "${!seen[@]}"
}

for layer_dir in "${root}"/src/*/; do
  layer="$(basename "${layer_dir}")"
  [[ -n "${direct[${layer}]+set}" ]] || continue  # reported above
  allowed="$(closure "${layer}" | tr ' ' '\n' | sort | tr '\n' ' ')"
  if ((print_graph)); then echo "${layer}: ${allowed}"; fi
  ok=" ${layer} ${allowed} "
  # file:line:#include "dep/..."  for every quoted include that names a directory.
  while IFS= read -r hit; do
    [[ -z "${hit}" ]] && continue
    file="${hit%%:*}"
    rest="${hit#*:}"
    line="${rest%%:*}"
    text="${rest#*:}"
    dep="$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^/"]+)\/.*/\1/' <<<"${text}")"
    # Only includes of project layers are checked ("oneapi/dnnl/..." uses <> anyway).
    [[ -n "${direct[${dep}]+set}" ]] || continue
    if [[ "${ok}" != *" ${dep} "* ]]; then
      report "${file#"${root}"/}:${line}: layer '${layer}' may not include \"${dep}/...\": it does not link it (its DEPS reach: ${allowed})"
    fi
  done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^/"]+/' "${layer_dir}" \
             --include='*.h' --include='*.cc' --include='*.cpp' --include='*.hpp' || true)
done

if ((violations > 0)); then
  echo "check_layers: ${violations} violation(s) of the layer graph" >&2
  exit 1
fi
echo "check_layers: OK" >&2
