# load.gp -- latency percentiles against load for a sweep (latsim plot SWEEP),
# with the SLO limits and the goodput (highest rate meeting the SLO).
# Set by latsim before `load`: $pts (rows "rate_rps v1 v2 ...", one column per
# word of `series`, NaN where unknown), $slo (rows "limit_ms \"label\""), nslo,
# goodput (req/s, NaN when unknown), xlo and xhi (the x range), nsat and array
# satx[nsat] (the x of the saturated points, which have no latencies: marked by
# a red dotted line, not dropped), title_text, xlabel_text.
set title title_text noenhanced
set xlabel xlabel_text noenhanced
set ylabel "latency (ms, log scale)"
set logscale y
set format y "%g"
set grid xtics ytics
set key top left box opaque noenhanced
set datafile missing "NaN"
ns = words(series)
colors = "#1f77b4 #d62728 #2ca02c #ff7f0e #9467bd #8c564b"
set xrange [xlo:xhi]
if (goodput == goodput) {
  set arrow 1 from goodput, graph 0 to goodput, graph 1 nohead dt 3 lw 2 lc rgb "#17becf"
  set label 1 sprintf("goodput %.3g req/s", goodput) at goodput, graph 0.95 right offset -0.5,0 tc rgb "#17becf"
}
do for [i=1:nsat] {
  set arrow (100 + i) from satx[i], graph 0 to satx[i], graph 1 nohead dt 3 lw 1.5 lc rgb "#d62728"
}
satkey = nsat > 0 ? "saturated (no latency)" : ""
if (nslo > 0) {
  plot 1/0 with lines dt 3 lw 1.5 lc rgb "#d62728" title satkey, \
       for [i=1:ns] $pts using 1:(column(i+1)) with linespoints lw 2 pt 7 ps 0.8 lc rgb word(colors, i) title word(series, i), \
       $slo using (xlo):1:(xhi - xlo):(0) with vectors nohead dt 2 lw 1.5 lc rgb "black" title "SLO limits", \
       $slo using (xlo):1:2 with labels left offset 0.5,0.6 noenhanced font ",9" notitle
} else {
  plot 1/0 with lines dt 3 lw 1.5 lc rgb "#d62728" title satkey, \
       for [i=1:ns] $pts using 1:(column(i+1)) with linespoints lw 2 pt 7 ps 0.8 lc rgb word(colors, i) title word(series, i)
}
