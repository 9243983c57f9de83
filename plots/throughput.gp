# throughput.gp — TFLOP/s vs sequence length (4·B·H·S²·D FLOPs, halved when
# causal), one panel per head_dim × causal; the run's measured bf16 GEMM peak
# (attnbench --peak) is the dashed line.
#   gnuplot -c plots/throughput.gp DATADIR OUTFILE [png|svg]
load ARG1."/meta.gp"
rows = int(ceil(npanels / 2.0)); cols = npanels > 1 ? 2 : 1
call "plots/style.gp" (ARG3 eq "" ? "png" : ARG3) ARG2 sprintf("%d", cols * 700 + 150) sprintf("%d", rows * 480 + 60)
set logscale y 10
set format y "%g"
set yrange [*:*]
set ylabel "TFLOP/s (log scale)"
set multiplot layout rows, cols title sprintf("Attention forward throughput — %s, %s mode, bf16 (%s)", gpu, mode, run) noenhanced
do for [p = 1:npanels] {
    set title panel_title[p]
    if (peak_tflops == peak_tflops) {
        set yrange [*:peak_tflops * 1.6]
        plot for [i = 0:nvariants - 1] panel_file[p] index i using 1:3 with linespoints lt i + 1 title columnheader(1), \
             peak_tflops with lines dt 2 lw 1.5 lc rgb "#444444" title sprintf("bf16 GEMM peak %.0f", peak_tflops)
    } else {
        plot for [i = 0:nvariants - 1] panel_file[p] index i using 1:3 with linespoints lt i + 1 title columnheader(1)
    }
}
unset multiplot
