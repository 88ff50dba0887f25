#!/usr/bin/env bash
# prom-roundtrip: latsim's --metrics read by a real Prometheus (docs/metrics.md,
# "Prometheus / OpenMetrics").  Run by tests/test_omx.c; by hand:
#   tests/prom-roundtrip.sh [LATSIM_BIN]
# 1. latsim runs scenarios/chat_plan.ini with a 10 s interval and an SLO of
#    P99 E2E <= 10 s (a bucket bound of the E2E histogram), writing the
#    OpenMetrics file, the time-series CSV and the JSON with its alerts;
# 2. promtool turns the file into TSDB blocks and a Prometheus server on
#    127.0.0.1 serves them: for every interval, PromQL's
#    histogram_quantile(0.99, sum by (le) (rate(...[10s]))) must fall in the
#    same histogram bucket as latsim's own P99 of that interval (the buckets'
#    resolution), for the client's E2E and vLLM's e2e of the pool;
# 3. promtool test rules evaluates the alert "P99 above the SLO for K intervals"
#    as a Prometheus alerting rule over the same series: it must fire at the
#    simulated second latsim's own alert fires, and not one interval before.
# Prints one line per failed check and "prom-roundtrip: ok ..." at the end;
# exit 0 ok, 1 a check failed, 77 prometheus or promtool missing.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:-${LATSIM_BIN:-./latsim}}
command -v promtool >/dev/null && command -v prometheus >/dev/null || { echo "prom-roundtrip: prometheus/promtool not installed"; exit 77; }
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
start=1767225600
dt=10
k=3
"$bin" run scenarios/chat_plan.ini --no-store --json --seed 1 --set sim.requests=12000 --set slo.e2e_p99_ms=10000 \
    --interval ${dt}s --alert-intervals $k --metrics "$tmp/m.om" --timeseries "$tmp/ts.csv" >"$tmp/run.json" 2>"$tmp/err" \
    || { echo "prom-roundtrip: latsim run failed: $(head -2 "$tmp/err")"; exit 1; }
promtool tsdb create-blocks-from openmetrics "$tmp/m.om" "$tmp/tsdb" >"$tmp/blocks.log" 2>&1 \
    || { echo "prom-roundtrip: promtool could not read the file: $(tail -2 "$tmp/blocks.log")"; exit 1; }
printf 'global:\n  scrape_interval: 1h\n' >"$tmp/prom.yml"
port=$((19100 + RANDOM % 800))
prometheus --config.file="$tmp/prom.yml" --storage.tsdb.path="$tmp/tsdb" --storage.tsdb.retention.time=100y \
    --web.listen-address=127.0.0.1:$port >"$tmp/prom.log" 2>&1 &
pid=$!
for i in $(seq 1 100); do
    promtool query instant http://127.0.0.1:$port 'vector(1)' >/dev/null 2>&1 && break
    kill -0 "$pid" 2>/dev/null || { echo "prom-roundtrip: prometheus did not start: $(tail -2 "$tmp/prom.log")"; exit 1; }
    sleep 0.2
done
cd "$tmp" || exit 1   # from here every file is in $tmp (a stray one cannot land in the checkout)
n=$(($(wc -l <"$tmp/ts.csv") - 1))
end=$((start + dt * (n - 1)))   # the last whole interval's end
fail=0
for metric in latsim_e2e_request_latency_seconds 'vllm:e2e_request_latency_seconds'; do
    promtool query range http://127.0.0.1:$port \
        "histogram_quantile(0.99, sum by (le) (rate(${metric}_bucket[${dt}s])))" \
        --start=$((start + dt)) --end=$end --step=${dt}s >"$tmp/q.txt" 2>&1 || { echo "prom-roundtrip: query failed: $(head -2 "$tmp/q.txt")"; exit 1; }
    # PromQL's P99 per interval end vs latsim's e2e_p99_ms of the interval ending there,
    # each put in its bucket of vLLM's e2e bounds.
    awk -v dt=$dt -v start=$start -v metric="$metric" '
        BEGIN { split("0.3 0.5 0.8 1 1.5 2 2.5 5 10 15 20 30 40 50 60 120 240 480 960 1920 7680", b, " "); nb = 21 }
        function bucket(v,   i) { for (i = 1; i <= nb; i++) if (v <= b[i] + 1e-9) return i; return nb + 1 }
        FNR == NR { if (FNR > 1) { split($0, f, ","); p99[f[2] + 0] = f[11] / 1000 } next }
        /@\[/ { v = $1; t = $2; gsub(/[@\[\]]/, "", t); sec = t - start
                if (!(sec in p99) || p99[sec] == "") next
                checked++
                if (bucket(v) != bucket(p99[sec])) { bad++; printf "prom-roundtrip: %s at %d s: PromQL P99 %.4g s, latsim %.4g s: different buckets\n", metric, sec, v, p99[sec] } }
        END { printf "%d %d\n", checked + 0, bad + 0 > "/dev/stderr" }' "$tmp/ts.csv" "$tmp/q.txt" 2>"$tmp/counts" || true
    read -r checked bad <"$tmp/counts"
    [ "${checked:-0}" -ge 10 ] || { echo "prom-roundtrip: $metric: only ${checked:-0} intervals compared"; fail=1; }
    [ "${bad:-1}" = 0 ] || fail=1
    echo "$metric: $checked intervals compared, $bad in another bucket" >>"$tmp/summary"
done
# The alert: latsim's own first firing, and Prometheus's rule over the same series.
fired=$(grep -o '"fired_s": [0-9.e+]*' "$tmp/run.json" | head -1 | awk '{print $2}')
[ -n "$fired" ] || { echo "prom-roundtrip: latsim's alert did not fire (the test needs one)"; exit 1; }
fired=${fired%.*}
cat >"$tmp/rules.yml" <<EOF
groups:
  - name: latsim
    rules:
      - alert: E2EP99AboveSLO
        expr: histogram_quantile(0.99, sum by (le) (rate(latsim_e2e_request_latency_seconds_bucket[${dt}s]))) > 10
        for: $(( (k - 1) * dt ))s
EOF
{
    echo "rule_files: [rules.yml]"
    echo "evaluation_interval: ${dt}s"
    echo "tests:"
    echo "  - interval: ${dt}s"
    echo "    input_series:"
    grep '^latsim_e2e_request_latency_seconds_bucket' "$tmp/m.om" | awk '
        { key = $1; if (!(key in vals)) order[++n] = key; vals[key] = vals[key] " " $2 }
        END { for (i = 1; i <= n; i++) { k = order[i]; gsub(/"/, "\\\"", k); printf "      - series: \"%s\"\n        values: \"%s\"\n", k, substr(vals[order[i]], 2) } }'
    echo "    alert_rule_test:"
    echo "      - eval_time: $((fired - dt))s"
    echo "        alertname: E2EP99AboveSLO"
    echo "        exp_alerts: []"
    echo "      - eval_time: ${fired}s"
    echo "        alertname: E2EP99AboveSLO"
    echo "        exp_alerts:"
    echo "          - exp_labels: {}"
} >"$tmp/test.yml"
if ! (cd "$tmp" && promtool test rules test.yml >"$tmp/rt.log" 2>&1); then
    echo "prom-roundtrip: the Prometheus alert does not fire at latsim's ${fired} s:"; sed -n 1,12p "$tmp/rt.log"
    fail=1
fi
[ $fail = 0 ] || exit 1
echo "prom-roundtrip: ok: $(paste -sd';' "$tmp/summary"); alert fired at ${fired} s in both"
