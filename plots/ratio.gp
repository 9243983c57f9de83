# ratio.gp — current / baseline median per compared row, with each row's
# allowed slowdown (bench/thresholds.conf) drawn in red: a point above the
# red mark is a slowdown past the limit (the gate also weighs noise).
#   gnuplot -c plots/ratio.gp DATADIR OUTFILE [png|svg]
load ARG1."/meta.gp"
if (!have_ratio) { print "ratio.gp: no baseline given: nothing to draw"; exit }
stats ratio_file using 1 nooutput
n = STATS_records
call "plots/style.gp" (ARG3 eq "" ? "png" : ARG3) ARG2 sprintf("%d", n * 14 + 300 > 900 ? n * 14 + 300 : 900) "620"
unset logscale x
set format x "%g"
set xlabel ""
set xrange [-1:n]
set xtics rotate by 90 right font ",8" noenhanced
set ylabel "current / baseline (median ms)"
set key inside top right
set title sprintf("Current vs baseline — %s: %s against %s", gpu, run, baseline) noenhanced
plot ratio_file using 1:3 with steps lc rgb "#cc0000" lw 1.5 title "1 + allowed slowdown", \
     1 with lines dt 3 lc rgb "#888888" notitle, \
     ratio_file using 1:2:xtic(4) with points lt 1 pt 7 ps 0.8 title "ratio"
