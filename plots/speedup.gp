# speedup.gp — speedup of each variant over a reference variant at the same
# point (reference ms / variant ms), one panel per head_dim × causal.
#   gnuplot -c plots/speedup.gp DATADIR OUTFILE [png|svg] [naive|cudnn_sdpa]
load ARG1."/meta.gp"
ref = ARGC >= 4 ? ARG4 : "naive"
if (ref eq "cudnn_sdpa" && !have_cudnn) { print "speedup.gp: no cudnn_sdpa rows in this run: nothing to draw"; exit }
column = ref eq "naive" ? 5 : 6
rows = int(ceil(npanels / 2.0)); cols = npanels > 1 ? 2 : 1
call "plots/style.gp" (ARG3 eq "" ? "png" : ARG3) ARG2 sprintf("%d", cols * 700 + 150) sprintf("%d", rows * 480 + 60)
set ylabel sprintf("speedup over %s (×)", ref) noenhanced
set yrange [0:*]
set multiplot layout rows, cols title sprintf("Speedup over %s — %s, %s mode, bf16 (%s)", ref, gpu, mode, run) noenhanced
do for [p = 1:npanels] {
    set title panel_title[p]
    plot for [i = 0:nvariants - 1] panel_file[p] index i using 1:column with linespoints lt i + 1 title columnheader(1), \
         1 with lines dt 3 lc rgb "#888888" notitle
}
unset multiplot
