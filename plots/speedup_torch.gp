# speedup_torch.gp — each of our variants against PyTorch: the fastest
# PyTorch peer's (torch_*) ms at the same point and mode over the variant's
# ms (> 1: ours is faster than anything PyTorch ran there), one panel per
# head_dim × causal (or model shape), linear from 0 with the parity line
# at 1; the subtitle names the peer that was the fastest, and at how many
# points. A run without peer rows beside ours says so and draws nothing.
#   gnuplot -c plots/speedup_torch.gp DATADIR OUTFILE [png|svg]
load ARG1."/meta.gp"
if (npanels == 0) { print "speedup_torch.gp: no panel on this figure page: nothing to draw"; exit }
if (!have_torch) { print "speedup_torch.gp: no PyTorch peer (torch_*) rows beside ours in this run: nothing to draw"; exit }
fig_title = sprintf("Speedup over the best PyTorch peer%s — %s", exists("pass_title") ? ", " . pass_title : "", gpu_name)
fig_subtitle = sprintf("%s · run %s · %s", grid_note, run_id, torch_note)
fig_key = "legend_torch"
fig_key_extra = 1; fig_key_extra_len = strlen("1 = as fast as the best PyTorch peer")
call "plots/style.gp" (ARG3 eq "" ? "png" : ARG3) ARG2 sprintf("%d", npanels) "1"
set yrange [0:torch_ymax]
set y2range [0:torch_ymax]
empty_ymin = 0; empty_ymax = torch_ymax
set ytics nomirror format "%.1f"
set y2tics ("= best peer" 1) tc rgb "#333333" font ",10" offset -0.6, 0
set ylabel "best PyTorch peer time / variant time  (> 1: faster)"
set multiplot
do for [p = 1:npanels] {
    eval panel_at(p)
    set title panel_title[p]
    if (panel_n_torch[p] == 0) { eval empty_panel } else {
        plot 1 with lines dt 2 lw 1.5 lc rgb "#444444" notitle, \
             for [i = 1:nvariants] panel_file[p] index i - 1 using 1:8 with linespoints lt vlt(i) notitle
    }
}
# the legend: our variants with a point here (a peer's own column is empty) and the parity line
eval fig_legend
plot for [i = 1:nvariants] NaN with linespoints lt vlt(i) title (legend_torch[i] ? variant_name[i] : ""), \
     NaN with lines dt 2 lw 1.5 lc rgb "#444444" title "1 = as fast as the best PyTorch peer"
unset multiplot
