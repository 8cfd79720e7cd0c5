#!/usr/bin/env bash
# Killing one MPI rank in the middle of training ends every other rank, with a message naming
# the lost rank, well within 30 s (issues 7 and 30): never a hang.
#
#   tests/tools/mpi_rank_failure_test.sh path/to/alpa [run arguments]
#
# The run arguments (default: gpt-tiny on local:4, planned as one stage) are those of
# `alpa run ... --backend mpi --steps 100000`, on 4 ranks.
set -u
alpa="$1"
shift
run_args=("$@")
if ((${#run_args[@]} == 0)); then run_args=(gpt-tiny --cluster local:4); fi
log="$(mktemp)"
trap 'rm -f "${log}"' EXIT

mpirun -np 4 --oversubscribe --allow-run-as-root "${alpa}" run "${run_args[@]}" \
  --backend mpi --steps 100000 >"${log}" 2>&1 &
launcher=$!

# Wait for training to be under way (the first step's row), at most 60 s.
for _ in $(seq 600); do
  if grep -qE '^ +2 ' "${log}"; then break; fi
  sleep 0.1
done
if ! grep -qE '^ +2 ' "${log}"; then
  echo "FAIL: training never started"; cat "${log}"; kill -9 "${launcher}"; exit 1
fi

# The ranks are mpirun's children (read from /proc: no procps needed); kill the second one.
children=()
for entry in /proc/[0-9]*; do
  read -r _ _ _ parent _ <"${entry}/stat" 2>/dev/null || continue
  if [[ "${parent}" == "${launcher}" ]]; then children+=("${entry#/proc/}"); fi
done
victim="$(printf '%s\n' "${children[@]}" | sort -n | sed -n 2p)"
if [[ -z "${victim}" ]]; then
  echo "FAIL: no rank process under mpirun (pid ${launcher})"; kill -9 "${launcher}"; exit 1
fi
start_ms=$(($(date +%s%N) / 1000000))
kill -9 "${victim}"
wait "${launcher}"
status=$?
elapsed_ms=$(($(date +%s%N) / 1000000 - start_ms))

echo "mpirun exited with ${status} ${elapsed_ms} ms after rank process ${victim} was killed"
tail -n 12 "${log}"
if [[ "${status}" -eq 0 ]]; then echo "FAIL: exit status 0"; exit 1; fi
if ((elapsed_ms >= 30000)); then echo "FAIL: took ${elapsed_ms} ms"; exit 1; fi
if ! grep -qE 'process rank [0-9]+ .*(signal 9|Killed)|timed out' "${log}"; then
  echo "FAIL: no message naming the lost rank"; exit 1
fi
echo PASS
