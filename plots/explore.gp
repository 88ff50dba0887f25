# explore.gp -- an exploration's configurations (latsim report explore
# --html): x the configuration's cost, y its SLO metric (mean over its seeds,
# log scale); configurations eligible for the best (meeting the SLO in every
# seed, or all when the exploration has slo = off) filled, the others open;
# the Pareto frontier (cost against the metric, over the eligible ones) as
# steps; the best configuration marked and labelled.
# Set by latsim before `load`: $ok and $other (rows "usd_per_hour metric_ms"),
# $front (the frontier, cheapest first, rows "usd_per_hour metric_ms"), $best
# (one row "usd_per_hour metric_ms \"label\""; NaN when none), nbest (0 or 1),
# title_text, ylabel_text.
set title title_text noenhanced
set xlabel "cost ($ per hour)"
set ylabel ylabel_text noenhanced
set logscale y
set format y "%g"
set grid xtics ytics
set key below box noenhanced
set offsets graph 0.04, graph 0.25, graph 0.1, graph 0.1
bl = nbest > 0 ? ', $best using 1:2 with points pt 3 ps 3 lw 2 lc rgb "black" title "best", $best using 1:2:3 with labels left offset 1.5,-1.2 font ",9" noenhanced notitle' : ""
plot $other using 1:2 with points pt 6 ps 1.2 lc rgb "#d62728" title "not eligible (misses the SLO in a seed)", \
     $ok using 1:2 with points pt 7 ps 1.2 lc rgb "#1f77b4" title "eligible", \
     $front using 1:2 with steps lw 2 lc rgb "#2ca02c" title "Pareto frontier" @bl
