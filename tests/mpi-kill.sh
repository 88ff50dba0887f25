#!/bin/bash
# tests/mpi-kill.sh LATSIM GRID DB: runs `mpirun -n 3 LATSIM explore GRID --db DB`
# (--enable-recovery), kills rank 1 with SIGKILL once 10 tasks are stored, and
# prints mpirun's exit status ("rc=N"), then explore's stdout and stderr.
# Rank 1 (and its task's worker) is found by its environment: this script's
# marker and OMPI_COMM_WORLD_RANK=1.
bin=$1 grid=$2 db=$3
export LATSIM_KILL_MARK=$$.$RANDOM
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 LATSIM_MPI_TIMEOUT_S=${LATSIM_MPI_TIMEOUT_S:-3}
out=$(mktemp /tmp/latsim_mpikill_XXXXXX)
timeout ${KILL_TIMEOUT:-120} mpirun --oversubscribe --enable-recovery -n 3 "$bin" explore "$grid" --db "$db" >"$out.1" 2>"$out.2" &
mp=$!
for _ in $(seq 300); do
  n=$(sqlite3 "$db" "SELECT count(*) FROM sweep_points" 2>/dev/null)
  [ "${n:-0}" -ge 10 ] && break
  sleep 0.1
done
killed=""
for e in /proc/[0-9]*/environ; do
  p=${e#/proc/}; p=${p%/environ}
  env=$( { tr '\0' '\n' < "$e"; } 2>/dev/null) || continue
  if grep -qx "LATSIM_KILL_MARK=$LATSIM_KILL_MARK" <<<"$env" && grep -qx OMPI_COMM_WORLD_RANK=1 <<<"$env"; then
    kill -9 "$p" 2>/dev/null && killed="$killed${killed:+ }$p"
  fi
done
wait "$mp"
echo "rc=$? killed=${killed:-none}"
cat "$out.1" "$out.2"
rm -f "$out" "$out.1" "$out.2"
