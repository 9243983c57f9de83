# latency.gp — latency vs sequence length, log-log, one panel per
# head_dim × causal, one line per variant; gaps where a row was not ok.
#   gnuplot -c plots/latency.gp DATADIR OUTFILE [png|svg]
load ARG1."/meta.gp"
rows = int(ceil(npanels / 2.0)); cols = npanels > 1 ? 2 : 1
call "plots/style.gp" (ARG3 eq "" ? "png" : ARG3) ARG2 sprintf("%d", cols * 700 + 150) sprintf("%d", rows * 480 + 60)
set logscale y 10
set format y "%g"
set ylabel "latency (ms, median)"
set multiplot layout rows, cols title sprintf("Attention forward latency — %s, %s mode, bf16 (%s)", gpu, mode, run) noenhanced
do for [p = 1:npanels] {
    set title panel_title[p]
    plot for [i = 0:nvariants - 1] panel_file[p] index i using 1:2 with linespoints lt i + 1 title columnheader(1)
}
unset multiplot
