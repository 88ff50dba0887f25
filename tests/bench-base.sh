#!/usr/bin/env bash
# bench-base.sh -- `make bench`: this checkout's ./latsim beside a baseline build,
# case by case, in one table.
#
#   tests/bench-base.sh [--base COMMIT] [--repeat N] [CASE]
#
# COMMIT (default 3fb2c66, the engine before the station graph) is built once
# into build/base-COMMIT/ (git archive of that commit, then its own make) and
# kept there.  Each case is a whole process, `latsim run FILE --no-store --json`
# (the planner: `latsim plan ...`), run N times (default 5) for each binary,
# the two binaries alternating so that both see the same neighbours; the table
# has the medians: wall seconds, events/s and requests/s (requests = measured +
# warm-up, fixed by the case), the speed ratio now/base (base wall / now wall,
# and the same for CPU seconds, which a busy machine disturbs less), and the
# largest peak resident memory seen.  A case the baseline cannot run (a feature
# it predates) shows "-" for it.  CASE: only cases whose name contains it.
#
# Cases: M/M/8 (utilisation 0.9), 10^6 LLM requests on 16 continuous-batching
# replicas (roofline cost: `cost = auto` without a calibrated model), the same
# with `cost = profile` (a Vidur operator profile fitted at bench time from
# tests/data/vidur into a scratch database), a 4096-replica LLM fleet behind
# power_of_two and least_outstanding routers, a router over 2048 single-server
# pools (least_outstanding: the router's index of its out-edges' loads), the
# three-model gateway (net, result cache, complexity router, two LLM pools:
# scenarios/gateway_three_models.ini), the planner on scenarios/chat_plan.ini
# (two workers) and `latsim replay` of the observed 300-request vLLM run
# (docs/observed.md; a baseline older than the replay command shows "fail").
set -uo pipefail
cd "$(dirname "$0")/.."

base=3fb2c66
repeat=5
only=
while [ $# -gt 0 ]; do
    case $1 in
        --base) base=${2:?--base needs a commit}; shift 2 ;;
        --repeat) repeat=${2:?--repeat needs a count}; shift 2 ;;
        -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "bench: unknown option $1" >&2; exit 2 ;;
        *) only=$1; shift ;;
    esac
done
case $repeat in ''|*[!0-9]*|0) echo "bench: --repeat takes a count >= 1" >&2; exit 2 ;; esac

now=./latsim
[ -x "$now" ] || { echo "bench: $now not found (make latsim)" >&2; exit 1; }

# ---- the baseline build ---------------------------------------------------------
rev=$(git rev-parse --short "$base^{commit}" 2>/dev/null) || { echo "bench: unknown commit $base" >&2; exit 2; }
bdir=build/base-$rev
if [ ! -x "$bdir/latsim" ]; then
    echo "bench: building $rev into $bdir (once)" >&2
    rm -rf "$bdir" && mkdir -p "$bdir" || exit 1
    git archive "$rev" | tar -x -C "$bdir" || { echo "bench: git archive $rev failed" >&2; exit 1; }
    if ! make -C "$bdir" -j2 VERSION="$rev" latsim >"$bdir.log" 2>&1; then
        echo "bench: building $rev failed (see $bdir.log)" >&2
        rm -f "$bdir/latsim"
        exit 1
    fi
fi
old=$bdir/latsim

tmp=$(mktemp -d /tmp/latsim-bench-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# ---- the cases --------------------------------------------------------------------
cat >"$tmp/mm8.ini" <<'EOF'
[sim]
requests = 2000000
warmup = 100000
seed = 1
[workload]
arrival = poisson
rate = 7200
[pool mm8]
servers = 8
service_ms = exp(mean=1)
EOF
cat >"$tmp/llm16.ini" <<'EOF'
[sim]
requests = 1000000
warmup = 20000
seed = 1
[workload]
arrival = poisson
rate = 110
prompt_tokens = lognormal(mean=1000, cv=1.0)
output_tokens = lognormal(mean=200, cv=1.0)
[pool chat]
kind = llm
model = llama-3-8b
gpu = h100
replicas = 16
scheduler = continuous
truncate = yes
EOF
cat >"$tmp/profile.ini" <<'EOF'
[sim]
requests = 200000
warmup = 10000
seed = 1
[workload]
arrival = poisson
rate = 40
prompt_tokens = lognormal(mean=1000, cv=1.0)
output_tokens = lognormal(mean=200, cv=1.0)
[pool chat]
kind = llm
model = llama-3-8b
gpu = a100
replicas = 16
scheduler = continuous
truncate = yes
cost = profile
EOF
cat >"$tmp/fleet.ini" <<'EOF'
[sim]
requests = 100000
warmup = 40000
seed = 1
[workload]
arrival = poisson
rate = 20000
prompt_tokens = lognormal(mean=500, cv=0.5)
output_tokens = lognormal(mean=50, cv=0.5)
[pool chat]
kind = llm
model = llama-3-8b
gpu = h100
replicas = 4096
scheduler = continuous
truncate = yes
routing = power_of_two
EOF
# A router over 2048 single-server pools (utilisation 0.9), 1.1e5 requests.
{
    printf '[sim]\nrequests = 100000\nwarmup = 10000\nseed = 1\n[workload]\narrival = poisson\nrate = 23040\n'
    printf 'target = lb\n[pool lb]\nkind = router\npolicy = least_outstanding\nnext = p0'
    for ((i = 1; i < 2048; i++)); do printf ', p%d' $i; done
    printf '\n'
    for ((i = 0; i < 2048; i++)); do printf '[pool p%d]\nservice_ms = exp(mean=80)\n' $i; done
} >"$tmp/router2048.ini"

# The profile case's calibration: the Vidur slice imported and fitted by each
# binary into its own database (a baseline may not open a newer schema: one
# whose import fails gets this checkout's copy, and shows "-" if it cannot read it).
calib_for() {   # calib_for BINARY DB: 0 when the database was built
    "$1" calib import vidur tests/data/vidur --model llama-3-8b --gpu a100 --db "$2" >/dev/null 2>&1 &&
    "$1" calib fit profile --model llama-3-8b --gpu a100 --tp 1 --db "$2" >/dev/null 2>&1
}
calib_ok=0
if calib_for "$now" "$tmp/cal-now.db"; then
    calib_ok=1
    calib_for "$old" "$tmp/cal-old.db" || { rm -f "$tmp/cal-old.db"; cp "$tmp/cal-now.db" "$tmp/cal-old.db"; }
fi
# The observed-run fit's database: the real vLLM run imported by each binary (a
# baseline without `calib import observed` fails that case once: "-").
obs_for() {     # obs_for BINARY DB
    "$1" calib import observed tests/data/observed/vllm_rtx4090_llama31_8b_requests.jsonl \
        --scenario scenarios/replay_vllm_rtx4090.ini --db "$2" >/dev/null 2>&1
}
obs_for "$now" "$tmp/obs-now.db" || rm -f "$tmp/obs-now.db"
obs_for "$old" "$tmp/obs-old.db" || rm -f "$tmp/obs-old.db"

# name|requests counted|args after the binary (DB is replaced by each binary's database)
CASES=(
    "M/M/8 rho=0.9, 2.1e6 req|2100000|run $tmp/mm8.ini --no-store --json"
    "LLM 16x continuous, 1e6 req|1020000|run $tmp/llm16.ini --no-store --json"
    "LLM 16x cost=profile, 2e5 req|210000|run $tmp/profile.ini --no-store --json --db DB"
    "LLM 4096x power_of_two, 1e5|140000|run $tmp/fleet.ini --no-store --json"
    "LLM 4096x least_outstanding|140000|run $tmp/fleet.ini --no-store --json --set pool_chat.routing=least_outstanding"
    "router 2048 pools least_outst.|110000|run $tmp/router2048.ini --no-store --json"
    "gateway 3 models, 2e5 req|220000|run scenarios/gateway_three_models.ini --no-store --json --set sim.requests=200000 --set sim.warmup=20000"
    "planner chat_plan.ini|0|plan scenarios/chat_plan.ini --target-rate 50 --gpus h100,a100,l40s --tp 1,2,4,8 --replicas 1:64 --jobs 2 --no-store --json"
    "replay observed vLLM, 300 req|300|replay tests/data/observed/vllm_rtx4090_llama31_8b_requests.jsonl --scenario scenarios/replay_vllm_rtx4090.ini --json"
    "calib fit observed, 300 req|300|calib fit observed --model llama-3.1-8b --gpu rtx-4090 --db OBS"
)

have_time=0
[ -x /usr/bin/time ] && have_time=1

# run_one WHO ARGS: one whole-process run of binary WHO (now|old); prints
# "wall cpu maxrss_kib events simulations" or "fail".
run_one() {
    local who=$1 args=$2 bin=$now
    [ "$who" = old ] && bin=$old
    args=${args//OBS/$tmp/obs-$who.db}
    args=${args//DB/$tmp/cal-$who.db}
    local -a argv
    read -r -a argv <<<"$args"
    local i
    for i in "${!argv[@]}"; do argv[$i]=${argv[$i]//pool_chat/pool chat}; done   # one word in the table
    # bash's time (ms resolution) around /usr/bin/time (peak memory of the run).
    local rc TIMEFORMAT='%3R %3U %3S'
    if [ $have_time = 1 ]; then
        { time /usr/bin/time -f '%M' -o "$tmp/mem" "$bin" "${argv[@]}" >"$tmp/out" 2>"$tmp/err"; } 2>"$tmp/time"
        rc=$?
    else
        { time "$bin" "${argv[@]}" >"$tmp/out" 2>"$tmp/err"; } 2>"$tmp/time"
        rc=$?
        echo - >"$tmp/mem"
    fi
    if [ $rc != 0 ] && [ $rc != 3 ]; then echo fail; return; fi   # 3: saturated, still a run
    local ev sims
    ev=$(grep -o '"events": [0-9]*' "$tmp/out" | head -1 | grep -o '[0-9]*$')
    sims=$(grep -o '"simulations": [0-9]*' "$tmp/out" | head -1 | grep -o '[0-9]*$')
    tail -1 "$tmp/time" | awk -v ev="${ev:-0}" -v sims="${sims:-0}" -v mem="$(tail -1 "$tmp/mem")" \
        '{ printf "%s %.3f %s %s %s\n", $1, $2 + $3, mem, ev, sims }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print v[int((NR + 1) / 2)] }'; }
maxof() { sort -g | tail -1; }
# fmt VALUE PRINTF-FORMAT: "-" stays "-"
fmt() { if [ "$1" = - ] || [ -z "$1" ]; then echo -; else awk -v v="$1" -v f="$2" 'BEGIN { printf f, v }'; fi; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b + 0 == 0) print "-"; else printf "%.4g", a / b }'; }

printf 'now: %s (%s)   base: %s (%s)   medians of %d alternated whole-process runs\n' \
    "$now" "$(git describe --always --dirty 2>/dev/null)" "$old" "$rev" "$repeat"
printf '%-32s %8s %8s %10s %10s %10s %10s %6s %6s %7s %7s\n' case "base s" "now s" "base ev/s" "now ev/s" \
    "base rq/s" "now rq/s" speed cpu "base MB" "now MB"
rc=0
for c in "${CASES[@]}"; do
    IFS='|' read -r name reqs args <<<"$c"
    [ -n "$only" ] && [[ $name != *"$only"* ]] && continue
    if [[ $args == *"--db DB"* ]] && [ $calib_ok = 0 ]; then
        printf '%-32s skipped: the calibration database could not be built\n' "$name"
        continue
    fi
    : >"$tmp/r.now"; : >"$tmp/r.old"
    old_ok=1
    for ((k = 0; k < repeat; k++)); do
        run_one now "$args" >>"$tmp/r.now"
        if [ $old_ok = 1 ]; then
            run_one old "$args" >>"$tmp/r.old"
            grep -q fail "$tmp/r.old" && old_ok=0      # the baseline lacks the feature: once is enough
        fi
    done
    if grep -q fail "$tmp/r.now"; then
        printf '%-32s failed (this checkout)\n' "$name"
        rc=1
        continue
    fi
    declare -A W C M E S
    for who in now old; do
        f=$tmp/r.$who
        if [ "$who" = old ] && [ $old_ok = 0 ]; then W[$who]=-; C[$who]=-; M[$who]=-; E[$who]=-; S[$who]=-; continue; fi
        W[$who]=$(awk '{ print $1 }' "$f" | median)
        C[$who]=$(awk '{ print $2 }' "$f" | median)
        M[$who]=$(awk '{ print $3 }' "$f" | maxof)
        E[$who]=$(awk '{ print $4 }' "$f" | median)
        S[$who]=$(awk '{ print $5 }' "$f" | median)
    done
    evs() { [ "${W[$1]}" = - ] && { echo -; return; }; div "${E[$1]}" "${W[$1]}"; }
    if [ "$reqs" = 0 ]; then   # the planner: simulations per second in the rate columns
        rqs_now=$(div "${S[now]}" "${W[now]}"); rqs_old=-
        [ "${W[old]}" != - ] && rqs_old=$(div "${S[old]}" "${W[old]}")
        ev_now=-; ev_old=-
        name="$name, ${S[now]} sims"
    else
        rqs_now=$(div "$reqs" "${W[now]}"); rqs_old=-
        [ "${W[old]}" != - ] && rqs_old=$(div "$reqs" "${W[old]}")
        ev_now=$(evs now); ev_old=$(evs old)
    fi
    mb() { [ "$1" = - ] && { echo -; return; }; awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
    printf '%-32s %8s %8s %10s %10s %10s %10s %6s %6s %7s %7s\n' "$name" \
        "$(fmt "${W[old]}" %.2f)" "$(fmt "${W[now]}" %.2f)" "$(fmt "$ev_old" %.3g)" "$(fmt "$ev_now" %.3g)" \
        "$(fmt "$rqs_old" %.3g)" "$(fmt "$rqs_now" %.3g)" "$(fmt "$(div "${W[old]}" "${W[now]}")" %.2f)" \
        "$(fmt "$(div "${C[old]}" "${C[now]}")" %.2f)" "$(mb "${M[old]}")" "$(mb "${M[now]}")"
done
[ $have_time = 1 ] || echo "(no /usr/bin/time: peak memory not measured)"
echo "speed, cpu: base / now of the median wall and CPU seconds (> 1: now is faster); planner rates: simulations/s"
exit $rc
