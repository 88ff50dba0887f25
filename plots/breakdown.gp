# breakdown.gp -- where the mean end-to-end latency goes: each bar stacked to
# 100 % of its mean, each part labelled with its milliseconds (so that a few
# ms of network or overhead stay visible next to seconds of compute).
# Set by latsim before `load`: $bars (rows "\"label\" network queue service
# overhead", ms), has_network (0: no network hop in this system: not drawn),
# title_text, xlabel_text.
set title title_text noenhanced
set xlabel xlabel_text noenhanced
set ylabel "share of the mean latency (%)"
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border rgb "black"
set boxwidth 0.7
set yrange [0:100]
set ytics 10
set grid ytics
set key outside right top box noenhanced
# Many bars (a sweep's points, many pools and classes): smaller labels, so
# that each stays inside its bar and the names under the bars apart.
stats $bars using 2 nooutput
nb = STATS_records
lfont = nb > 8 ? ",7" : ",9"
set xtics noenhanced font lfont
if (nb > 6) { set xtics rotate by -25 left }
set bmargin 8
tot(a, b, c, d) = a + b + c + d
sh(x, t) = t > 0 ? 100.0 * x / t : 0
ms(x) = x >= 1000 ? sprintf("%.3g s", x / 1000) : x >= 1 ? sprintf("%.3g ms", x) : sprintf("%.2g ms", x)
# A part's label at its middle, when it is tall enough to hold one (3 %).
lab(x, t) = sh(x, t) >= 3 ? ms(x) : ""
# Parts too thin for a label are named under their bar instead.
small(x, t, name) = (x > 0 && sh(x, t) < 3) ? sprintf("\n%s %s", name, ms(x)) : ""
tic(a, b, c, d, e) = a . small(b, tot(b, c, d, e), "network") . small(c, tot(b, c, d, e), "queue") . small(d, tot(b, c, d, e), "service") . small(e, tot(b, c, d, e), "overhead")
plot $bars using (sh($2, tot($2, $3, $4, $5))):xtic(tic(strcol(1), $2, $3, $4, $5)) title (has_network ? "network" : "network (none)") lc rgb "#8c564b", \
     '' using (sh($3, tot($2, $3, $4, $5))) title "queue" lc rgb "#d62728", \
     '' using (sh($4, tot($2, $3, $4, $5))) title "service (compute)" lc rgb "#1f77b4", \
     '' using (sh($5, tot($2, $3, $4, $5))) title "overhead" lc rgb "#7f7f7f", \
     '' using ($0):(sh($2 / 2, tot($2, $3, $4, $5))):(lab($2, tot($2, $3, $4, $5))) with labels font lfont tc rgb "white" notitle, \
     '' using ($0):(sh($2 + $3 / 2, tot($2, $3, $4, $5))):(lab($3, tot($2, $3, $4, $5))) with labels font lfont tc rgb "white" notitle, \
     '' using ($0):(sh($2 + $3 + $4 / 2, tot($2, $3, $4, $5))):(lab($4, tot($2, $3, $4, $5))) with labels font lfont tc rgb "white" notitle, \
     '' using ($0):(sh($2 + $3 + $4 + $5 / 2, tot($2, $3, $4, $5))):(lab($5, tot($2, $3, $4, $5))) with labels font lfont tc rgb "white" notitle
