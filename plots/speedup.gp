# speedup.gp — speedup of each variant over naive at the same point
# (naive ms / variant ms), one panel per head_dim × causal (or model
# shape); naive is the line at 1. (Speed relative to cudnn_sdpa is
# headline.gp.)
#   gnuplot -c plots/speedup.gp DATADIR OUTFILE [png|svg]
load ARG1."/meta.gp"
if (npanels == 0) { print "speedup.gp: no panel on this figure page: nothing to draw"; exit }
if (ARGC >= 4 && ARG4 ne "naive") { print sprintf("speedup.gp: over %s is not drawn here: headline.gp draws the fused kernels against cudnn_sdpa", ARG4); exit }
if (!have_naive) { print "speedup.gp: no naive rows in this run: nothing to draw"; exit }
fig_title = sprintf("Speedup over naive (eager, one launch per op)%s — %s", exists("pass_title") ? ", " . pass_title : "", gpu_name)
fig_subtitle = sprintf("%s · run %s", grid_note, run_id)
fig_key = "legend_naive"
call "plots/style.gp" (ARG3 eq "" ? "png" : ARG3) ARG2 sprintf("%d", npanels)
set yrange [0:*]
set ylabel "speedup over naive (×)"
set multiplot
do for [p = 1:npanels] {
    eval panel_at(p)
    set title panel_title[p]
    if (panel_n_naive[p] == 0) { eval empty_panel } else {
        plot for [i = 1:nvariants] panel_file[p] index i - 1 using 1:5 with linespoints lt vlt(i) notitle
    }
}
eval fig_legend
plot for [i = 1:nvariants] NaN with linespoints lt vlt(i) title (legend_naive[i] ? variant_name[i] : "")
unset multiplot
