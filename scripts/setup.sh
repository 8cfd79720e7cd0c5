#!/usr/bin/env bash
# Prepares a fresh Debian/Ubuntu machine to build Alpa C++, then configures the build directory.
#
#   scripts/setup.sh
#
# 1. Installs the Debian packages the project needs, only those missing (dpkg-query first, so a
#    second run does nothing and takes well under a second). Runs apt-get as root, or through sudo.
# 2. Makes the Python venv <repo>/.venv with python/requirements.txt (scripts/python_env.sh; a
#    no-op when it is current).
# 3. Configures <repo>/build with Ninja, RelWithDebInfo, warnings as errors and the Python package
#    on, unless it is already configured that way (ninja re-runs CMake by itself when a
#    CMakeLists.txt changes).
#
# Progress goes to stderr, so wrappers can keep stdout for the program's own output.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${repo_root}/build"

log() { echo "setup: $*" >&2; }

# Compiler and build tools, the libraries of src/ (fmt, JSON, CLI11, oneDNN and the OpenCL loader
# its CMake config needs, Eigen, zlib, libzip for NumPy's .npz batches, CBC for the solver's MILP,
# Open MPI), the test and benchmark frameworks, clang for the fuzzer.
packages=(
  cmake ninja-build g++ pkg-config
  libfmt-dev nlohmann-json3-dev libcli11-dev libdnnl-dev ocl-icd-opencl-dev libeigen3-dev
  zlib1g-dev libzip-dev coinor-libcbc-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev
  # ONNX's protobuf classes (libonnx-dev, with libprotobuf-dev for its headers): the ONNX front end.
  libonnx-dev libprotobuf-dev
  # Open MPI: the MPI engine of the communicator and `mpirun` for its tests.
  libopenmpi-dev openmpi-bin
  # chromium renders the HTML plan report in its test, libpng-dev reads the screenshot back.
  chromium libpng-dev
  # The Python package's venv (scripts/python_env.sh) and its extension module's headers.
  python3 python3-venv python3-dev
)

# One dpkg-query for all packages; a package it does not know is missing too.
declare -A installed=()
while read -r state name; do
  if [[ "${state}" == ii ]]; then installed["${name%%:*}"]=1; fi
done < <(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' "${packages[@]}" 2>/dev/null || true)
missing=()
for package in "${packages[@]}"; do
  if [[ -z "${installed[${package}]+set}" ]]; then missing+=("${package}"); fi
done

if ((${#missing[@]} > 0)); then
  log "installing missing packages: ${missing[*]}"
  apt_get=(apt-get)
  if [[ "$(id -u)" -ne 0 ]]; then
    if ! command -v sudo >/dev/null 2>&1; then
      log "error: not root and sudo is not available; install as root: apt-get install ${missing[*]}"
      exit 1
    fi
    log "not running as root: using sudo for apt-get"
    apt_get=(sudo apt-get)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${apt_get[@]}" update -qq >&2
  "${apt_get[@]}" install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# The Python package's venv (its build and test dependencies, pinned in python/requirements.txt).
python="$("${repo_root}/scripts/python_env.sh")"

# Configure only when the build directory is missing or configured differently.
cache="${build_dir}/CMakeCache.txt"
if [[ -f "${cache}" ]] && ! grep -qx 'CMAKE_GENERATOR:INTERNAL=Ninja' "${cache}"; then
  log "error: ${build_dir} was configured with another generator than Ninja; remove it and rerun"
  exit 1
fi
if [[ ! -f "${build_dir}/build.ninja" ]] ||
   ! grep -qx 'CMAKE_BUILD_TYPE:STRING=RelWithDebInfo' "${cache}" ||
   ! grep -qx 'ALPA_WERROR:BOOL=ON' "${cache}" ||
   ! grep -qx 'ALPA_PYTHON:BOOL=ON' "${cache}" ||
   ! grep -qx "Python_EXECUTABLE:FILEPATH=${python}" "${cache}"; then
  log "configuring ${build_dir}"
  cmake -S "${repo_root}" -B "${build_dir}" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DALPA_WERROR=ON -DALPA_PYTHON=ON "-DPython_EXECUTABLE:FILEPATH=${python}" >&2
fi
