# memory.gp — device memory each variant needs beyond Q, K, V and O, vs
# sequence length, on a linear axis from zero (GiB, or MiB when every value
# is under 1 GiB): the eager variants' B·H·S×S score buffers (double with
# S where B·S is fixed, as on the FlashAttention grid), and the fused
# kernels on the zero line, which the axis keeps in view (a log axis cannot
# draw their 0).
#   gnuplot -c plots/memory.gp DATADIR OUTFILE [png|svg]
load ARG1."/meta.gp"
if (npanels == 0) { print "memory.gp: no panel on this figure page: nothing to draw"; exit }
fig_title = sprintf("Extra device memory%s — %s", exists("pass_title") ? ", " . pass_title : "", gpu_name)
fig_subtitle = sprintf("%s · run %s", grid_note, run_id) . (mem_note eq "" ? "" : " · ".mem_note)
fig_key = "legend_mem"
call "plots/style.gp" (ARG3 eq "" ? "png" : ARG3) ARG2 sprintf("%d", npanels)
# a little room under zero, so that markers on the zero line stay clear of
# the border; tics from 0 up only
top = mem_max > 0 ? mem_max / mem_per_unit : 1
step = 10 ** floor(log10(top / 4.0))
step = top / step > 20 ? 5 * step : top / step > 8 ? 2 * step : step
set yrange [-0.04 * top:1.06 * top]
empty_ymin = -0.04 * top; empty_ymax = 1.06 * top
set ytics 0, step format "%g"
set ylabel sprintf("extra device memory (%s)", mem_unit)
set multiplot
do for [p = 1:npanels] {
    eval panel_at(p)
    set title panel_title[p]
    if (panel_n_mem[p] == 0) { eval empty_panel } else {
        plot for [i = 1:nvariants] panel_file[p] index i - 1 using 1:($4 / mem_per_unit) with linespoints lt vlt(i) notitle
    }
}
eval fig_legend
plot for [i = 1:nvariants] NaN with linespoints lt vlt(i) title (legend_mem[i] ? variant_name[i] : "")
unset multiplot
