#!/bin/bash
# tests/mpi-kill.sh LATSIM GRID DB [sweep VARY]: runs `mpirun -n 3 LATSIM
# explore GRID --db DB` (--enable-recovery), kills rank 1 with SIGKILL once 10
# tasks are stored, and prints mpirun's exit status ("rc=N"), then explore's
# stdout and stderr.  With `sweep VARY`: `LATSIM sweep GRID --vary VARY --db
# DB` instead (a sweep stores at the end), killed once rank 1 is simulating (it
# has a forked task worker).
# Rank 1 (and its task's worker) is found by its environment: this script's
# marker and OMPI_COMM_WORLD_RANK=1.
bin=$1 grid=$2 db=$3 mode=${4:-explore} vary=$5
export LATSIM_KILL_MARK=$$.$RANDOM
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 LATSIM_MPI_TIMEOUT_S=${LATSIM_MPI_TIMEOUT_S:-10}
out=$(mktemp /tmp/latsim_mpikill_XXXXXX)
if [ "$mode" = sweep ]; then
  set -- sweep "$grid" --vary "$vary" --db "$db"
else
  set -- explore "$grid" --db "$db"
fi
timeout ${KILL_TIMEOUT:-120} mpirun --oversubscribe --enable-recovery -n 3 "$bin" "$@" >"$out.1" 2>"$out.2" &
mp=$!
# The processes of rank 1: the rank and, while it simulates, its task's worker
# (one grep over every environment, then the few that carry the marker).
rank1() {
  for e in $(grep -lzx "LATSIM_KILL_MARK=$LATSIM_KILL_MARK" /proc/[0-9]*/environ 2>/dev/null); do
    if grep -qzx OMPI_COMM_WORLD_RANK=1 "$e" 2>/dev/null; then
      p=${e#/proc/}; echo "${p%/environ}"
    fi
  done
}
for _ in $(seq 600); do
  kill -0 "$mp" 2>/dev/null || break
  if [ "$mode" = sweep ]; then
    [ "$(rank1 | wc -l)" -ge 2 ] && break
  else
    n=$(sqlite3 "$db" "SELECT count(*) FROM sweep_points" 2>/dev/null)
    [ "${n:-0}" -ge 10 ] && break
  fi
  sleep 0.05
done
killed=""
for p in $(rank1); do
  kill -9 "$p" 2>/dev/null && killed="$killed${killed:+ }$p"
done
wait "$mp"
echo "rc=$? killed=${killed:-none}"
cat "$out.1" "$out.2"
rm -f "$out" "$out.1" "$out.2"
