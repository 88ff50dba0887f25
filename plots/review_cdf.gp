# review_cdf.gp -- one latency metric's CDF for several designs overlaid, with
# the SLO limits on it (latsim report --html, latsim plot RUN RUN... --kind cdf).
# Set by latsim before `load`: $cdf (rows "value_ms p", one index per curve),
# ncurves, array cname[ncurves] (each curve's legend), $slo (rows "limit_ms p
# \"label\""), nslo (rows in $slo), title_text, xlabel_text.
set title title_text noenhanced
set xlabel xlabel_text noenhanced
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
set style line 5 lw 2 lc rgb "#ff7f0e"
set style line 6 lw 2 lc rgb "#8c564b"
set style line 7 lw 2 lc rgb "#e377c2"
set style line 8 lw 2 lc rgb "#17becf"
set style line 9 lw 2 dt 2 lc rgb "#1f77b4"
set style line 10 lw 2 dt 2 lc rgb "#d62728"
set style line 11 lw 2 dt 2 lc rgb "#2ca02c"
set style line 12 lw 2 dt 2 lc rgb "#9467bd"
if (nslo > 0) {
  plot for [i=1:ncurves] $cdf index (i-1) using 1:2 with lines ls ((i-1)%12+1) title cname[i], \
       $slo using 1:(0):(0):(1.02) with vectors nohead dt 2 lw 1.5 lc rgb "black" title "SLO limit (ms)", \
       $slo using 1:2 with points pt 7 ps 1.2 lc rgb "black" notitle, \
       $slo using 1:2:3 with labels right offset -0.6,0.8 font ",9" noenhanced notitle
} else {
  plot for [i=1:ncurves] $cdf index (i-1) using 1:2 with lines ls ((i-1)%12+1) title cname[i]
}
