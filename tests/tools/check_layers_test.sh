#!/usr/bin/env bash
# scripts/check_layers.sh on a made-up tree: the graph comes from the layers' CMake DEPS (their
# transitive closure, a commented-out DEPS ignored), an include of a layer not linked is named by
# file and line, a layer without alpa_add_library is named, and a clean tree passes.
#
#   tests/tools/check_layers_test.sh path/to/scripts/check_layers.sh
set -u
check="$1"
tree="$(mktemp -d)"
trap 'rm -rf "${tree}"' EXIT
mkdir -p "${tree}"/src/{support,ir,cost,pipeline}
printf 'alpa_add_library(support SRCS s.cc)\n' >"${tree}/src/support/CMakeLists.txt"
printf 'alpa_add_library(ir\n  SRCS i.cc\n  DEPS support)\n' >"${tree}/src/ir/CMakeLists.txt"
printf 'alpa_add_library(cost SRCS c.cc DEPS ir PRIVATE_LIBS fmt)\n' >"${tree}/src/cost/CMakeLists.txt"
printf '# DEPS ir cost pipeline\nalpa_add_library(pipeline SRCS p.cc DEPS cost)\n' \
  >"${tree}/src/pipeline/CMakeLists.txt"
# pipeline reaches cost, ir (through cost) and support.
printf '#include "ir/shape.h"\n#include "cost/model.h"\n#include "support/status.h"\n#include <vector>\n' \
  >"${tree}/src/pipeline/p.cc"
printf '#include "ir/shape.h"\n' >"${tree}/src/cost/c.cc"

fail() { echo "FAIL: $1"; echo "$2"; exit 1; }

out="$("${check}" "${tree}" 2>&1)" || fail "a clean tree was refused" "${out}"

printf '#include "pipeline/p.h"\n' >"${tree}/src/ir/i.cc"
mkdir -p "${tree}/src/extra"
out="$("${check}" "${tree}" 2>&1)" && fail "violations passed" "${out}"
grep -q "src/ir/i.cc:1: layer 'ir' may not include \"pipeline/...\"" <<<"${out}" ||
  fail "the include of an unlinked layer is not named" "${out}"
grep -q "src/extra/CMakeLists.txt: no alpa_add_library(extra" <<<"${out}" ||
  fail "a layer without alpa_add_library is not named" "${out}"
grep -q "2 violation(s)" <<<"${out}" || fail "not exactly two violations" "${out}"
echo PASS
