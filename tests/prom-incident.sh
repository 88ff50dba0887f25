#!/usr/bin/env bash
# prom-incident: the README's incident loop, run as written (README.md,
# "An incident before any GPU exists"; run by tests/test_omx.c,
# omx/prometheus_incident).  By hand:
#   tests/prom-incident.sh [LATSIM_BIN]
# 1. latsim simulates scenarios/chat_plan.ini with a traffic spike (50 req/s,
#    75 from minute 5 to 25, 50 again) against [slo] ttft_p99_ms = 1000,
#    writing the OpenMetrics file (1-minute scrapes) and its own alerts;
# 2. promtool turns the file into TSDB blocks and a Prometheus server on
#    127.0.0.1 serves them: PromQL's TTFT P99 over the minute ending where
#    latsim's alert fires is above the 1 s limit;
# 3. the documents' page, "P99 above the SLO for 15 minutes", as a Prometheus
#    alerting rule (for: 14m over 1-minute rates: true at the end of the first
#    minute above, firing 14 minutes later) evaluated by promtool test rules
#    over the same series: it fires at latsim's second and not one minute before.
# Prints "prom-incident: ok: ..." at the end; exit 0 ok, 1 a check failed,
# 77 prometheus or promtool missing.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:-${LATSIM_BIN:-./latsim}}
command -v promtool >/dev/null && command -v prometheus >/dev/null || { echo "prom-incident: prometheus/promtool not installed"; exit 77; }
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
start=1767225600
# The README's command.
"$bin" run scenarios/chat_plan.ini --no-store --json --set "workload.rate=schedule(0s:50, 5m:75, 25m:50)" \
    --set sim.requests=135000 --set slo.ttft_p99_ms=1000 --interval 60s --metrics "$tmp/incident.om" >"$tmp/run.json" 2>"$tmp/err" \
    || { echo "prom-incident: latsim run failed: $(head -2 "$tmp/err")"; exit 1; }
fired=$(grep -o '"fired_s": [0-9.e+]*' "$tmp/run.json" | head -1 | awk '{print $2}')
[ -n "$fired" ] || { echo "prom-incident: latsim's alert did not fire"; exit 1; }
fired=${fired%.*}
promtool tsdb create-blocks-from openmetrics "$tmp/incident.om" "$tmp/data" >"$tmp/blocks.log" 2>&1 \
    || { echo "prom-incident: promtool could not read the file: $(tail -2 "$tmp/blocks.log")"; exit 1; }
printf 'global:\n  scrape_interval: 1h\n' >"$tmp/prom.yml"
port=$((19900 + RANDOM % 90))
prometheus --config.file="$tmp/prom.yml" --storage.tsdb.path="$tmp/data" --storage.tsdb.retention.time=100y \
    --web.listen-address=127.0.0.1:$port >"$tmp/prom.log" 2>&1 &
pid=$!
for i in $(seq 1 100); do
    promtool query instant http://127.0.0.1:$port 'vector(1)' >/dev/null 2>&1 && break
    kill -0 "$pid" 2>/dev/null || { echo "prom-incident: prometheus did not start: $(tail -2 "$tmp/prom.log")"; exit 1; }
    sleep 0.2
done
cd "$tmp" || exit 1
expr='histogram_quantile(0.99, sum by (le) (rate(latsim_time_to_first_token_seconds_bucket[1m])))'
promtool query instant http://127.0.0.1:$port "$expr" --time=$((start + fired)) >"$tmp/q.txt" 2>&1 \
    || { echo "prom-incident: query failed: $(head -2 "$tmp/q.txt")"; exit 1; }
p99=$(awk '/=>/ { print $3; exit }' "$tmp/q.txt")
awk -v v="${p99:-0}" 'BEGIN { exit !(v > 1) }' || { echo "prom-incident: PromQL's TTFT P99 at ${fired} s is ${p99:-none}, not above 1 s"; exit 1; }
cat >"$tmp/rules.yml" <<EOF
groups:
  - name: latsim
    rules:
      - alert: TTFTP99AboveSLO
        expr: $expr > 1
        for: 14m
EOF
{
    echo "rule_files: [rules.yml]"
    echo "evaluation_interval: 1m"
    echo "tests:"
    echo "  - interval: 1m"
    echo "    input_series:"
    grep '^latsim_time_to_first_token_seconds_bucket' "$tmp/incident.om" | awk '
        { key = $1; if (!(key in vals)) order[++n] = key; vals[key] = vals[key] " " $2 }
        END { for (i = 1; i <= n; i++) { k = order[i]; gsub(/"/, "\\\"", k); printf "      - series: \"%s\"\n        values: \"%s\"\n", k, substr(vals[order[i]], 2) } }'
    echo "    alert_rule_test:"
    echo "      - eval_time: $((fired - 60))s"
    echo "        alertname: TTFTP99AboveSLO"
    echo "        exp_alerts: []"
    echo "      - eval_time: ${fired}s"
    echo "        alertname: TTFTP99AboveSLO"
    echo "        exp_alerts:"
    echo "          - exp_labels: {}"
} >"$tmp/test.yml"
promtool test rules test.yml >"$tmp/rt.log" 2>&1 \
    || { echo "prom-incident: the Prometheus alert does not fire at latsim's ${fired} s:"; sed -n 1,12p "$tmp/rt.log"; exit 1; }
printf 'prom-incident: ok: PromQL TTFT P99 %.1f s at %d s; alert fired at %d s (minute %d) in both\n' "$p99" "$fired" "$fired" $((fired / 60))
