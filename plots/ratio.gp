# ratio.gp — current / baseline per row, as the gate (bench/gate/gate.c) sees
# it, for a baseline measured together with the run (the two sides of one
# A/B run: report_measured_together; for runs measured apart it draws
# nothing and says why, meta.gp's ratio_why): one panel per head_dim ×
# causal (or model shape), x = S, one marker series per variant (the
# colours and marker shapes of the other figures), filled = cold rows, open = graph rows (+ = hot), every
# mode the two runs share; the red bar at each S is the allowed ratio, 1 +
# the row's limit (bench/gate/thresholds.conf); a black ring marks a row the
# gate calls throttled (slower, at an SM clock lower by more than the
# limit: reported, not judged), a red ring one it calls SLOWER.
# Variants sit side by side around their S so that markers do not hide one
# another. Rows off the panels' main family (e.g. the seed's point) are
# drawn at their S too.
#   gnuplot -c plots/ratio.gp DATADIR OUTFILE [png|svg]
load ARG1."/meta.gp"
if (!have_ratio) { print "ratio.gp: ".ratio_why.": nothing to draw"; exit }
fig_title = sprintf("Current / baseline time per row%s — %s", exists("pass_title") ? ", " . pass_title : "", gpu_name)
modes_text = ""
do for [m in ratio_modes] { modes_text = modes_text . (modes_text eq "" ? "" : ", ") . m }
fig_subtitle = sprintf("%s, %s · run %s against baseline %s · %d rows (%s)%s · %d slower than allowed", \
    grid_shape, kinds_note_all, run_id, baseline_run_id, ratio_rows, modes_text, \
    ratio_throttled ? sprintf(" · %d throttled", ratio_throttled) : "", ratio_slower)
fig_key = "legend_ratio"
fig_key_extra = words(ratio_modes) + 3; fig_key_extra_len = strlen("throttled")
call "plots/style.gp" (ARG3 eq "" ? "png" : ARG3) ARG2 sprintf("%d", nratio_panels)
set yrange [ratio_ymin:ratio_ymax]
set ytics format "%.2f"
set xrange [ratio_seq_min * 2 ** -0.5 : ratio_seq_max * 2 ** 0.5]
set ylabel "current / baseline (median time)"
# variant i sits dodge(i) octaves off its S
dodge(i) = (i - (nvariants + 1) / 2.0) * (nvariants > 1 ? 0.5 / nvariants : 0)
xat(x, i) = x * 2 ** dodge(i)
mark(m, i) = m == 0 ? variant_pt_filled[i] : m == 1 ? variant_pt_open[i] : 1
bar = 0.32
set multiplot
do for [p = 1:nratio_panels] {
    eval panel_at(p)
    set title ratio_panel_title[p]
    f = ratio_panel_file[p]
    plot 1 with lines dt 3 lc rgb "#888888" notitle, \
         f index nvariants using ($1 * 2 ** -bar):2:($1 * (2 ** bar - 2 ** -bar)):(0) with vectors nohead lw 3 lc rgb "#d62728" notitle, \
         for [i = 1:nvariants] f index i - 1 using (xat($1, i)):2:(mark($6, i)) with points lt vlt(i) pt variable ps 1.2 notitle, \
         for [i = 1:nvariants] f index i - 1 using (xat($1, i)):($7 != 0 ? $2 : NaN) with points pt 6 ps 2.6 lw 1.5 lc rgb "#000000" notitle, \
         for [i = 1:nvariants] f index i - 1 using (xat($1, i)):($8 != 0 ? $2 : NaN) with points pt 6 ps 2.6 lw 2 lc rgb "#d62728" notitle
}
eval fig_legend
set key width -2 samplen 1.5
plot for [i = 1:nvariants] NaN with points lt vlt(i) pt variant_pt_filled[i] title (legend_ratio[i] ? variant_name[i] : ""), \
     for [m in ratio_modes] NaN with points pt (m eq "cold" ? 7 : m eq "graph" ? 6 : 1) lc rgb "#666666" title m, \
     NaN with lines lw 3 lc rgb "#d62728" title "1 + limit", \
     NaN with points pt 6 ps 1.8 lw 1.5 lc rgb "#000000" title (ratio_throttled ? "throttled" : ""), \
     NaN with points pt 6 ps 1.8 lw 2 lc rgb "#d62728" title (ratio_slower ? "SLOWER" : "")
unset multiplot
