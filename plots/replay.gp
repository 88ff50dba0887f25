# replay.gp -- observed and predicted latency CDFs of a replay (latsim replay --plot DIR).
# Set by latsim before `load`: $obs and $pred (rows "value_ms p", one index per
# metric, in the order of the words of `metrics`: ttft tpot itl e2e queue, those
# observed), title_text.  One panel per metric, log-scale latency.
nm = words(metrics)
cols = nm > 1 ? 2 : 1
rows = (nm + 1) / 2
set multiplot layout rows, cols title title_text noenhanced
set logscale x
set format x "%g"
set yrange [0:1.02]
set ytics 0.2
set grid xtics ytics
set key top left box opaque noenhanced
set ylabel "share of requests at or below"
do for [i=1:nm] {
  set title word(metrics, i) noenhanced
  set xlabel sprintf("%s (ms, log scale)", word(metrics, i)) noenhanced
  plot $obs index (i-1) using 1:2 with steps lw 2 lc rgb "#1f77b4" title "observed", \
       $pred index (i-1) using 1:2 with lines lw 2 lc rgb "#d62728" title "predicted (latsim)"
}
unset multiplot
