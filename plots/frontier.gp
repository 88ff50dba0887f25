# frontier.gp -- cost against SLO attainment for a plan (latsim plot PLAN).
# Every simulated configuration is a point: x its cost, y its worst SLO term as
# value / limit (1 = exactly at the limit; below 1 meets every term).  The
# frontier is the best ratio reachable at each cost; the chosen one is marked.
# Each point is labelled by its configuration ("gpu=h100 tp=4 replicas=6");
# the x range has room on the right so that labels stay inside the frame, and
# the legend sits below the plot, away from the data.
# Set by latsim before `load`: $met and $missed (rows "usd_per_hour ratio"),
# $labels (rows "usd_per_hour ratio \"configuration\"", nlabels of them),
# $front (the frontier, rows "usd_per_hour ratio"), $best (one row
# "usd_per_hour ratio \"label\""), ycap (ratios above are drawn at it), ymin,
# title_text.
set title title_text noenhanced
set xlabel "cost ($ per hour)"
set ylabel "worst SLO term: value / limit (log scale; < 1 meets the SLO)"
set logscale y
set format y "%g"
set ytics (0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.5, 2, 3, 5, 10, 20)
set yrange [ymin:ycap * 1.15]
set grid xtics ytics
set key below box noenhanced
set offsets graph 0.04, graph 0.22, 0, 0
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb "black"
set label 1 "SLO" at graph 0.01, first 1 offset 0,0.6
labs = nlabels > 0 ? ', $labels using 1:2:3 with labels left offset 0.7,0.6 font ",7" tc rgb "#555555" noenhanced notitle' : ""
plot $missed using 1:($2 > ycap ? ycap : $2) with points pt 6 ps 1.2 lc rgb "#d62728" title "misses the SLO (saturated at the top)", \
     $met using 1:2 with points pt 7 ps 1.2 lc rgb "#1f77b4" title "meets the SLO (1 seed)", \
     $front using 1:($2 > ycap ? ycap : $2) with steps lw 2 lc rgb "#2ca02c" title "frontier: best ratio at this cost", \
     $best using 1:2 with points pt 3 ps 3 lw 2 lc rgb "black" title "chosen (confirmed)", \
     $best using 1:2:3 with labels left offset 1.5,-1.2 font ",10" noenhanced notitle @labs
