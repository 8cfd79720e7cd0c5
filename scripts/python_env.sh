#!/usr/bin/env bash
# Makes the project's Python venv (<repo>/.venv) with exactly python/requirements.txt: the Python
# package's build (nanobind, scikit-build-core) and its tests (jax, jaxlib, flax, optax, pytest).
#
#   scripts/python_env.sh        # prints the venv's python on stdout
#
# Does nothing when the venv already holds the requirements file it was made from (a copy is kept
# in the venv), so a second run takes well under a second. About a minute the first time.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${repo_root}/.venv"
requirements="${repo_root}/python/requirements.txt"
stamp="${venv}/alpa-requirements.txt"

log() { echo "python_env: $*" >&2; }

if [[ ! -x "${venv}/bin/python" ]] || ! cmp -s "${requirements}" "${stamp}"; then
  base="$(command -v python3 || true)"
  if [[ -z "${base}" ]]; then
    log "error: no python3 on PATH; install Debian's python3, python3-venv and python3-dev"
    exit 1
  fi
  log "making ${venv} from ${base} with python/requirements.txt"
  rm -rf "${venv}"
  "${base}" -m venv "${venv}" >&2
  "${venv}/bin/python" -m pip install --quiet --disable-pip-version-check \
    -r "${requirements}" >&2
  cp "${requirements}" "${stamp}"
fi
echo "${venv}/bin/python"
