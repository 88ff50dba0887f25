# frontier.gp -- cost against SLO attainment for a plan (latsim plot PLAN).
# Every simulated configuration is a point: x its cost, y its worst SLO term as
# value / limit (1 = exactly at the limit; below 1 meets every term).  The
# frontier is the best ratio reachable at each cost; the chosen one is marked.
# Each configuration is labelled once with its full name ("chat.gpu=h100
# chat.tp=4 chat.replicas=6", every pool named): latsim places the labels
# (`set label ... at screen`) beside their points where they stay inside the
# frame and clear of each other, leaving off those that have no room (the
# plan's table lists every one); the frame and the axes' ranges are fixed here
# for that, and the legend sits below the plot, away from the data.
# Set by latsim before `load`: $met and $missed (rows "usd_per_hour ratio"),
# $front (the frontier, rows "usd_per_hour ratio"), $best (one row
# "usd_per_hour ratio"), ycap (ratios above are drawn at it), ymin, xmin, xmax,
# the frame fr_l, fr_r, fr_b, fr_t (shares of the picture), the labels,
# title_text.
set title title_text noenhanced
set xlabel "cost ($ per hour)"
set ylabel "worst SLO term: value / limit (log scale; < 1 meets the SLO)"
set logscale y
set format y "%g"
set ytics (0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.5, 2, 3, 5, 10, 20)
set yrange [ymin:ycap * 1.15]
set xrange [xmin:xmax]
set lmargin at screen fr_l
set rmargin at screen fr_r
set bmargin at screen fr_b
set tmargin at screen fr_t
set grid xtics ytics
set key at screen 0.5, screen 0.02 center bottom horizontal maxrows 2 box noenhanced
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb "black"
set label 1 "SLO" at graph 0.01, first 1 offset 0,0.6
plot $missed using 1:($2 > ycap ? ycap : $2) with points pt 6 ps 1.2 lc rgb "#D55E00" title "misses the SLO (saturated at the top)", \
     $met using 1:2 with points pt 7 ps 1.2 lc rgb "#0072B2" title "meets the SLO (1 seed)", \
     $front using 1:($2 > ycap ? ycap : $2) with steps lw 2 lc rgb "#009E73" title "frontier: best ratio at this cost", \
     $best using 1:2 with points pt 3 ps 3 lw 2 lc rgb "black" title "chosen (confirmed)"
