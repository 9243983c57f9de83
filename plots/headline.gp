# headline.gp — each fused kernel's speed relative to the vendor kernel:
# cudnn_sdpa ms / variant ms (> 1: faster than cuDNN), one panel per
# head_dim × causal (or model shape), one y range for all panels fitted
# to the data, the parity line at 1, each point's value written beside it
# where build/report found room (away from the parity line first, never on
# a line, point, error bar or other label); PyTorch peers (torch_*)
# dashed, without values. In a compare run each ratio comes from the
# samples (Hodges–Lehmann, build/report's report_speed_ratio) with its
# interval drawn as an error bar; rows measured row after row give ratios of
# medians and no bar; the second subtitle line says which (headline_how).
# Variants more than 2× slower than cudnn_sdpa everywhere (the eager naive
# and inplace, and their PyTorch peers) are left out, and the subtitle says
# so: they would crush an axis that has to show a few percent. A run of
# burst and sustained rows draws each as its own series, against the
# cudnn_sdpa rows of its own regime.
#   gnuplot -c plots/headline.gp DATADIR OUTFILE [png|svg]
load ARG1."/meta.gp"
if (npanels == 0) { print "headline.gp: no panel on this figure page: nothing to draw"; exit }
if (!have_cudnn) { print "headline.gp: no cudnn_sdpa rows in this run: nothing to draw"; exit }
if (headline_n == 0) { print "headline.gp: no variant to set against cudnn_sdpa: nothing to draw"; exit }
fig_title = sprintf("Speed relative to cuDNN (cudnn_sdpa)%s — %s", exists("pass_title") ? ", " . pass_title : "", gpu_name)
fig_subtitle = sprintf("%s · run %s", grid_note, run_id) . (headline_note eq "" ? "" : " · ".headline_note)
fig_subtitle2 = headline_how
bar_title = headline_level . " interval"
fig_key = "legend_headline"
fig_key_extra = 1 + headline_bars; fig_key_extra_len = strlen("1 = as fast as cudnn_sdpa")
call "plots/style.gp" (ARG3 eq "" ? "png" : ARG3) ARG2 sprintf("%d", npanels) "1"
set yrange [headline_ymin:headline_ymax]
set y2range [headline_ymin:headline_ymax]
empty_ymin = headline_ymin; empty_ymax = headline_ymax
set ytics nomirror format "%.2f"
set y2tics ("= cudnn_sdpa" 1) tc rgb "#333333" font ",10" offset -0.6, 0
set ylabel "cudnn_sdpa time / variant time  (> 1: faster)"
# a value's label where build/report placed it (column 9: clear of every
# line, point and other label; our variants only, the dashed PyTorch peers
# are drawn for comparison, unlabelled), NaN for none. A label not drawn is
# an empty text at y = 1, not an undefined point: gnuplot 5.4 crashes on
# `with labels` over a block whose one point is undefined (and an
# expression that reads a NaN column is undefined: valid() tests it first).
# two decimals, or three where two would round a value across the parity
# line onto it (0.995 is not "1.00": its label sits below the line)
label_text(v) = (sprintf("%.2f", v) eq "1.00" && v != 1) ? sprintf("%.3f", v) : sprintf("%.2f", v)
# the lines and their value labels, the same on every panel
lines = 'for [i = 1:nvariants] panel_file[p] index i - 1 using 1:(headline_show[i] ? $6 : NaN) with linespoints lt vlt(i) notitle, ' . \
    'for [i = 1:nvariants] panel_file[p] index i - 1 using 1:(valid(9) ? $9 : 1):(valid(9) ? label_text($6) : "") with labels font ",9" tc lt vlt(i) notitle'
# the intervals (columns 10 and 11) as error bars, under the lines: only the
# series panel_bars[p] lists (those with a bar in panel p), since gnuplot
# warns of a plot clause without a valid point, even in an empty loop
bar(p, k) = int(word(panel_bars[p], k))
set multiplot
do for [p = 1:npanels] {
    eval panel_at(p)
    set title panel_title[p]
    if (panel_n_headline[p] == 0) { eval empty_panel } else {
        if (words(panel_bars[p]) == 0) {
            plot 1 with lines dt 2 lw 1.5 lc rgb "#444444" notitle, @lines
        } else {
            plot 1 with lines dt 2 lw 1.5 lc rgb "#444444" notitle, \
                 for [k = 1:words(panel_bars[p])] panel_file[p] index bar(p, k) - 1 using 1:6:10:11 \
                     with yerrorbars lt vlt(bar(p, k)) lw 1.5 dt solid pt 0 notitle, \
                 @lines
        }
    }
}
eval fig_legend
plot for [i = 1:nvariants] NaN with linespoints lt vlt(i) title (legend_headline[i] ? variant_name[i] : ""), \
     NaN with lines dt 2 lw 1.5 lc rgb "#444444" title "1 = as fast as cudnn_sdpa", \
     for [k = 1:headline_bars] '+' using (NaN):(NaN):(NaN):(NaN) with yerrorbars lc rgb "#444444" lw 1.5 pt 0 title bar_title
unset multiplot
