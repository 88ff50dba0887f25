#!/usr/bin/env bash
# bench-mpi.sh -- `make bench-mpi`: tasks/s of `latsim explore` on the grid
# tests/bench/explore.ini (32 tasks), and of `latsim sweep` of the same
# scenario over 32 arrival rates (4 to 19.5 req/s, every one meeting the SLO:
# no narrowing rounds), under `mpirun -n K` for K = 1, 2, 4 (the MPI build,
# build/release-mpi/latsim): whole-process wall time (MPI start included),
# median of N runs (default 3), and the speed-up and efficiency against one
# rank.  Rank 0 runs one local worker besides handing out tasks, so K ranks
# simulate K tasks at a time; sweep and explore share the runner.
#
#   tests/bench-mpi.sh [--repeat N] [--only explore|sweep] [RANKS...]
set -uo pipefail
cd "$(dirname "$0")/.."
repeat=3
only=
ranks=()
while [ $# -gt 0 ]; do
    case $1 in
        --repeat) repeat=${2:?--repeat needs a count}; shift 2 ;;
        --only) only=${2:?--only needs explore or sweep}; shift 2 ;;
        *) ranks+=("$1"); shift ;;
    esac
done
[ ${#ranks[@]} -gt 0 ] || ranks=(1 2 4)
bin=build/release-mpi/latsim
[ -x "$bin" ] || { echo "bench-mpi: $bin not found (make MPI=1 build/release-mpi/latsim)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
grid=tests/bench/explore.ini
tmp=$(mktemp -d /tmp/latsim_benchmpi_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
tasks=32
printf '%-8s %-6s %9s %9s %8s %10s\n' command ranks wall_s tasks/s speedup efficiency
for cmd in explore sweep; do
    [ -z "$only" ] || [ "$only" = "$cmd" ] || continue
    if [ "$cmd" = explore ]; then args=(explore "$grid"); else args=(sweep "$grid" --vary workload.rate=4:19.5:0.5); fi
    base=
    for k in "${ranks[@]}"; do
        ws=()
        for _ in $(seq "$repeat"); do
            rm -f "$tmp/b.db"
            t0=$(date +%s.%N)
            mpirun --oversubscribe -n "$k" "$bin" "${args[@]}" --db "$tmp/b.db" >/dev/null 2>"$tmp/err" \
                || { echo "bench-mpi: mpirun -n $k $cmd failed:" >&2; cat "$tmp/err" >&2; exit 1; }
            t1=$(date +%s.%N)
            ws+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")
        done
        w=$(printf '%s\n' "${ws[@]}" | sort -g | sed -n "$(( (repeat + 1) / 2 ))p")
        r=$(awk -v n="$tasks" -v w="$w" 'BEGIN { print n / w }')
        [ -n "$base" ] || base=$r
        awk -v c="$cmd" -v k="$k" -v w="$w" -v r="$r" -v b="$base" \
            'BEGIN { printf "%-8s %-6s %9.2f %9.2f %8.2f %9.0f%%\n", c, k, w, r, r / b, 100 * r / b / k }'
    done
done
