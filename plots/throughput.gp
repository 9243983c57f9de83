# throughput.gp — throughput vs sequence length as % of the run's measured
# bf16 GEMM peak (attnbench --peak: an 8192³ cuBLAS GEMM), linear from 0 to
# 100%, TFLOP/s on the right axis at the same tics; one panel per head_dim ×
# causal (per model shape in a run of several: plots/README.md). FLOPs:
# 4·B·H·S²·D, halved when causal, for every variant; a backward figure's
# 2.5 times that, a forward + backward one's 3.5 times (docs/measuring.md),
# so that the passes' rates compare. A run without --peak has no peak:
# TFLOP/s on a linear axis from 0 instead.
#   gnuplot -c plots/throughput.gp DATADIR OUTFILE [png|svg]
load ARG1."/meta.gp"
if (npanels == 0) { print "throughput.gp: no panel on this figure page: nothing to draw"; exit }
have_peak = peak_tflops == peak_tflops && peak_tflops > 0
fig_title = sprintf("Attention %s throughput — %s", exists("pass_title") ? pass_title : "forward", gpu_name)
fig_subtitle = sprintf("%s · run %s", grid_note, run_id) . \
    (have_peak ? sprintf(" · 100%% = this run's bf16 GEMM peak, %.0f TFLOP/s", peak_tflops) : " · no GEMM peak measured (run without --peak)")
fig_key = "legend_tflops"
call "plots/style.gp" (ARG3 eq "" ? "png" : ARG3) ARG2 sprintf("%d", npanels) (have_peak ? "1" : "0")
if (have_peak) {
    # 0–100%, further only if a variant beat the GEMM peak
    top = tflops_max == tflops_max && tflops_max > peak_tflops ? 10 * ceil(tflops_max / peak_tflops * 10) : 100
    set yrange [0:top]
    empty_ymin = 0; empty_ymax = top
    set ytics 0, 20 nomirror format "%g%%"
    set y2range [0:top * peak_tflops / 100]
    set y2tics 0, peak_tflops / 5 format "%.0f"
    set ylabel "% of the measured bf16 GEMM peak"
    set y2label "TFLOP/s"
} else {
    set yrange [0:*]
    set ylabel "TFLOP/s"
}
# % of the peak, or TFLOP/s as they are
scale = have_peak ? 100 / peak_tflops : 1
set multiplot
do for [p = 1:npanels] {
    eval panel_at(p)
    set title panel_title[p]
    if (panel_n_tflops[p] == 0) { eval empty_panel } else {
        plot for [i = 1:nvariants] panel_file[p] index i - 1 using 1:($3 * scale) with linespoints lt vlt(i) notitle
    }
}
eval fig_legend
plot for [i = 1:nvariants] NaN with linespoints lt vlt(i) title (legend_tflops[i] ? variant_name[i] : "")
unset multiplot
