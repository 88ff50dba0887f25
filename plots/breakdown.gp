# breakdown.gp -- where the mean end-to-end latency goes, as stacked bars.
# Set by latsim before `load`: $bars (rows "\"label\" network queue service
# overhead", ms), has_network (0: no network hop in this system: not drawn),
# title_text, xlabel_text.
set title title_text noenhanced
set xlabel xlabel_text noenhanced
set ylabel "mean latency (ms)"
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border rgb "black"
set boxwidth 0.7
set yrange [0:*]
set grid ytics
set key outside right top box noenhanced
set xtics rotate by -30 noenhanced
if (has_network) {
  plot $bars using 2:xtic(1) title "network" lc rgb "#8c564b", \
       '' using 3 title "queue" lc rgb "#d62728", \
       '' using 4 title "service (compute)" lc rgb "#1f77b4", \
       '' using 5 title "overhead" lc rgb "#7f7f7f"
} else {
  plot $bars using 3:xtic(1) title "queue" lc rgb "#d62728", \
       '' using 4 title "service (compute)" lc rgb "#1f77b4", \
       '' using 5 title "overhead" lc rgb "#7f7f7f"
}
