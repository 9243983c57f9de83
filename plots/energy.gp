# energy.gp — energy efficiency vs sequence length: TFLOP per joule (the
# row's TFLOP/s over its average board power, NVML, over its timed window),
# linear from 0, one panel per head_dim × causal (or model shape), one
# line per variant. A run without power readings (no NVML, or a run older
# than the power columns) says so and draws nothing.
#   gnuplot -c plots/energy.gp DATADIR OUTFILE [png|svg]
load ARG1."/meta.gp"
if (npanels == 0) { print "energy.gp: no panel on this figure page: nothing to draw"; exit }
if (!have_energy) { print "energy.gp: no power recorded in this run: nothing to draw"; exit }
fig_title = sprintf("Attention %s energy efficiency — %s", exists("pass_title") ? pass_title : "forward", gpu_name)
fig_subtitle = sprintf("%s · run %s · TFLOP per joule = TFLOP/s ÷ average board power", grid_note, run_id)
fig_key = "legend_energy"
call "plots/style.gp" (ARG3 eq "" ? "png" : ARG3) ARG2 sprintf("%d", npanels)
set yrange [0:*]
set ylabel "TFLOP per joule (TFLOP/s per W)"
set multiplot
do for [p = 1:npanels] {
    eval panel_at(p)
    set title panel_title[p]
    if (panel_n_energy[p] == 0) { eval empty_panel } else {
        plot for [i = 1:nvariants] panel_file[p] index i - 1 using 1:7 with linespoints lt vlt(i) notitle
    }
}
eval fig_legend
plot for [i = 1:nvariants] NaN with linespoints lt vlt(i) title (legend_energy[i] ? variant_name[i] : "")
unset multiplot
