# timeseries.gp -- a run over time: latency percentiles per interval (top),
# throughput and replicas up (bottom).
# Set by latsim before `load`: $ts (rows "minute e2e_p50 e2e_p99 ttft_p50
# ttft_p99 throughput_rps replicas", the minute at the interval's middle, NaN
# where an interval has no value), has_ttft (0: no LLM pool), e2e_slo and
# ttft_slo (the [slo] P99 limits, ms, NaN when none), replicas_max (the most
# replicas up, NaN unknown: the y2 range holds it with room above), title_text.
set multiplot layout 2,1 title title_text noenhanced
set grid
set key outside right top box noenhanced
set xlabel "simulated time (min)"
set ylabel "latency (ms)"
set logscale y
set yrange [*:*]
set datafile missing "NaN"
if (has_ttft) {
  plot $ts using 1:3 with lines lw 2 lc rgb "#d62728" title "E2E P99", \
       '' using 1:2 with lines lc rgb "#ff9896" title "E2E P50", \
       '' using 1:5 with lines lw 2 lc rgb "#1f77b4" title "TTFT P99", \
       '' using 1:4 with lines lc rgb "#aec7e8" title "TTFT P50", \
       (e2e_slo == e2e_slo ? e2e_slo : 1/0) with lines dt 2 lc rgb "#d62728" title "E2E P99 SLO", \
       (ttft_slo == ttft_slo ? ttft_slo : 1/0) with lines dt 2 lc rgb "#1f77b4" title "TTFT P99 SLO"
} else {
  plot $ts using 1:3 with lines lw 2 lc rgb "#d62728" title "E2E P99", \
       '' using 1:2 with lines lc rgb "#ff9896" title "E2E P50", \
       (e2e_slo == e2e_slo ? e2e_slo : 1/0) with lines dt 2 lc rgb "#d62728" title "E2E P99 SLO"
}
unset logscale y
set ylabel "requests/s"
set y2label "replicas up"
set ytics nomirror
set y2tics
set yrange [0:*]
# Replicas on their own axis, their line kept off the frame: a quarter above the most.
if (!exists("replicas_max")) replicas_max = NaN
if (replicas_max == replicas_max && replicas_max > 0) { set y2range [0:replicas_max * 1.25 + 0.5] }
set yrange [0:*]
plot $ts using 1:6 with lines lw 2 lc rgb "#2ca02c" title "throughput", \
     '' using 1:7 axes x1y2 with steps lc rgb "#7f7f7f" title "replicas up"
unset multiplot
