# cdf.gp -- latency CDFs of one run (latsim plot RUN) with its SLO limits.
# Set by latsim before `load`: $cdf (rows "value_ms p", one index per metric,
# in the order of the words of `metrics`), $slo (rows "limit_ms p \"label\""),
# nslo (rows in $slo), title_text.
set title title_text noenhanced
set xlabel "latency (ms, log scale)"
set ylabel "share of requests at or below (CDF)"
set logscale x
set format x "%g"
set yrange [0:1.02]
set ytics 0.1
set grid xtics ytics
set key bottom right box opaque noenhanced
set style line 1 lw 2 lc rgb "#1f77b4"
set style line 2 lw 2 lc rgb "#d62728"
set style line 3 lw 2 lc rgb "#2ca02c"
set style line 4 lw 2 lc rgb "#9467bd"
nm = words(metrics)
if (nslo > 0) {
  plot for [i=1:nm] $cdf index (i-1) using 1:2 with lines ls i title word(metrics, i), \
       $slo using 1:2 with points pt 7 ps 1.5 lc rgb "black" title "SLO limit (ms, percentile)", \
       $slo using 1:(0):(0):2 with vectors nohead dt 2 lw 1.5 lc rgb "black" notitle, \
       $slo using 1:2:3 with labels left offset 0.8,-0.8 noenhanced font ",9" notitle
} else {
  plot for [i=1:nm] $cdf index (i-1) using 1:2 with lines ls i title word(metrics, i)
}
