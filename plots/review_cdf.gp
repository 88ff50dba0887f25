# review_cdf.gp -- one latency metric's CDF for several designs overlaid, with
# the SLO limits on it (latsim report --html, latsim plot RUN RUN... --kind cdf),
# or its tail view: 1 - CDF on a log axis, so that P99 (0.01) and P99.9 (0.001)
# are read off as easily as the median.
# Set by latsim before `load`: $cdf (rows "value_ms p", one index per curve),
# ncurves, array cname[ncurves] (each curve's legend), optionally array
# ccol[ncurves] (each curve's colour, "#rrggbb": a design keeps its colour on
# every picture of a page; several runs' metrics: a colour per run) and cdt
# (each curve's dash type: a dash per metric), tail (1: the tail view), $slo (rows "limit_ms p
# \"label\" label_y": p is 1 - p in the tail view; label_y the label's height, below p
# where several limits share it), nslo (rows in $slo), title_text,
# xlabel_text.
if (!exists("tail")) tail = 0
if (!exists("ccol")) { array ccol[8] = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#999999"] }
if (!exists("cdt")) { array cdt[ncurves > 0 ? ncurves : 1]; do for [i=1:|cdt|] { cdt[i] = 1 } }
set title title_text noenhanced
set xlabel xlabel_text noenhanced
set logscale x
set format x "%g"
set grid xtics ytics
set key noenhanced
if (tail) {
  set ylabel "share of requests slower (1 - CDF, log scale)"
  set logscale y
  set yrange [0.0009:1.05]
  set ytics ("1" 1, "0.1 (P90)" 0.1, "0.01 (P99)" 0.01, "0.001 (P99.9)" 0.001)
  set key top right box opaque
  ycol(p) = (1 - p) > 0 ? 1 - p : NaN
} else {
  set ylabel "share of requests at or below (CDF)"
  set yrange [0:1.02]
  set ytics 0.1
  set key bottom right box opaque
  ycol(p) = p
}
ybot = tail ? 0.0009 : 0
ytop = tail ? 1.05 : 1.02
if (nslo > 0) {
  plot for [i=1:ncurves] $cdf index (i-1) using 1:(ycol($2)) with lines lw 2 lc rgb ccol[(i-1)%|ccol|+1] dashtype cdt[(i-1)%|cdt|+1] title cname[i], \
       $slo using 1:(ybot):(0):(ytop - ybot) with vectors nohead dt 2 lw 1.5 lc rgb "black" title "SLO limit (ms)", \
       $slo using 1:2 with points pt 7 ps 1.2 lc rgb "black" notitle, \
       $slo using 1:4:3 with labels right offset -0.6,0.8 font ",9" noenhanced notitle
} else {
  plot for [i=1:ncurves] $cdf index (i-1) using 1:(ycol($2)) with lines lw 2 lc rgb ccol[(i-1)%|ccol|+1] dashtype cdt[(i-1)%|cdt|+1] title cname[i]
}
