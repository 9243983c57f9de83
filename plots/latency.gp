# latency.gp — latency vs sequence length, log-log, one panel per
# head_dim × causal (or model shape), one line per variant; gaps where a
# row was not ok.
#   gnuplot -c plots/latency.gp DATADIR OUTFILE [png|svg]
load ARG1."/meta.gp"
if (npanels == 0) { print "latency.gp: no panel on this figure page: nothing to draw"; exit }
fig_title = sprintf("Attention %s latency — %s", exists("pass_title") ? pass_title : "forward", gpu_name)
fig_subtitle = sprintf("%s · run %s", grid_note, run_id)
fig_key = "legend_ms"
call "plots/style.gp" (ARG3 eq "" ? "png" : ARG3) ARG2 sprintf("%d", npanels)
set logscale y 10
set format y "%g"
set ylabel "latency (ms, median; log scale)"
set multiplot
do for [p = 1:npanels] {
    eval panel_at(p)
    set title panel_title[p]
    if (panel_n_ms[p] == 0) { eval empty_panel } else {
        plot for [i = 1:nvariants] panel_file[p] index i - 1 using 1:2 with linespoints lt vlt(i) notitle
    }
}
eval fig_legend
plot for [i = 1:nvariants] NaN with linespoints lt vlt(i) title (legend_ms[i] ? variant_name[i] : "")
unset multiplot
