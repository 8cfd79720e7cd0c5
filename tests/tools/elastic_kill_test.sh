#!/usr/bin/env bash
# Issue 35: `alpa run --elastic` outlives a lost rank. gpt-tiny trains on 4 MPI ranks with a
# checkpoint every 10 steps; one rank is killed (kill -9) once the first checkpoint is committed.
# The supervisor must re-plan for 3 devices, resume from the last checkpoint and finish, report
# a recovery under 30 s, and the losses after recovery must equal, bit for bit, those of a run
# started on 3 ranks from the same checkpoint (made again here by 4 ranks and the same seed).
#
#   tests/tools/elastic_kill_test.sh path/to/alpa
set -u
alpa="$1"
steps=200
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
log="${work}/log"
mpirun_flags=(--oversubscribe)
if ((EUID == 0)); then mpirun_flags+=(--allow-run-as-root); fi

"${alpa}" run gpt-tiny --cluster local:4 --backend mpi --elastic --checkpoint-dir "${work}/ckpt" \
  --checkpoint-every 10 --steps "${steps}" >"${log}" 2>&1 &
supervisor=$!

# Wait for the first checkpoint, at most 120 s.
for _ in $(seq 1200); do
  if [[ -f "${work}/ckpt/LATEST" ]]; then break; fi
  sleep 0.1
done
if [[ ! -f "${work}/ckpt/LATEST" ]]; then
  echo "FAIL: no checkpoint was committed"; cat "${log}"; kill -9 "${supervisor}"; exit 1
fi

# The children of a process, read from /proc (no procps needed).
children_of() {
  for entry in /proc/[0-9]*; do
    read -r _ _ _ parent _ 2>/dev/null <"${entry}/stat" || continue
    if [[ "${parent}" == "$1" ]]; then echo "${entry#/proc/}"; fi
  done
}
launcher="$(children_of "${supervisor}" | head -n 1)"
victim="$(children_of "${launcher}" | sort -n | sed -n 2p)"
if [[ -z "${victim}" ]]; then
  echo "FAIL: no rank process under mpirun (pid ${launcher})"; cat "${log}"
  kill -9 "${supervisor}"; exit 1
fi
kill -9 "${victim}"
wait "${supervisor}"
status=$?
cat "${log}" | grep -E '^(elastic| *run|resumed| +[0-9]+ +(run|[0-9]+ \()|alpa: error)' | head -n 20
if [[ "${status}" -ne 0 ]]; then echo "FAIL: the supervisor exited with ${status}"; tail -n 30 "${log}"; exit 1; fi

resumed_after="$(sed -nE 's/.*re-planning for 3 devices and resuming after step ([0-9]+).*/\1/p' "${log}")"
if [[ -z "${resumed_after}" ]]; then echo "FAIL: no re-planning for 3 devices"; tail -n 30 "${log}"; exit 1; fi
recovery="$(sed -nE 's/.*recovered in ([0-9.]+) (s|ms).*/\1 \2/p' "${log}")"
read -r amount unit <<<"${recovery}"
if [[ -z "${amount:-}" ]]; then echo "FAIL: no recovery time reported"; exit 1; fi
if [[ "${unit}" == "s" ]] && awk "BEGIN { exit !(${amount} >= 30) }"; then
  echo "FAIL: recovery took ${amount} s"; exit 1
fi

# The supervised run's steps after the relaunch: (step, loss) rows after "elastic     run 2".
awk '/^elastic +run 2 /{on=1} on && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+\.[0-9]+$/ {print $1, $2}' "${log}" \
  >"${work}/supervised"
# The same checkpoint made again by 4 ranks, then a run on 3 ranks from it.
mpirun -np 4 "${mpirun_flags[@]}" "${alpa}" run gpt-tiny --cluster local:4 --backend mpi \
  --steps "${resumed_after}" --checkpoint-dir "${work}/reference" >/dev/null 2>&1 ||
  { echo "FAIL: the reference checkpoint"; exit 1; }
mpirun -np 3 "${mpirun_flags[@]}" "${alpa}" run gpt-tiny --cluster local:3 --backend mpi \
  --steps "$((steps - resumed_after))" --resume "${work}/reference" >"${work}/reference.log" 2>&1 ||
  { echo "FAIL: the reference run on 3 ranks"; cat "${work}/reference.log"; exit 1; }
awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+\.[0-9]+$/ {print $1, $2}' "${work}/reference.log" >"${work}/expected"
if [[ ! -s "${work}/expected" ]] || ! diff -q "${work}/supervised" "${work}/expected" >/dev/null; then
  echo "FAIL: the losses after recovery differ from a run on 3 ranks from step ${resumed_after}"
  diff "${work}/supervised" "${work}/expected" | head -n 10
  exit 1
fi
echo "PASS: resumed after step ${resumed_after} on 3 ranks, recovered in ${amount} ${unit}," \
  "$(wc -l <"${work}/expected") steps equal to the reference's"
