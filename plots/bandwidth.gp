# bandwidth.gp — a decode's bandwidth: GB/s against the cached keys
# (kv_len, the row's seq_len; log scale), one panel per decode family (a
# model shape and q_len, the queries per sequence, as its title says:
# "H=32 KV=8 Q=1, D=128, causal"), one line per variant. A decode is
# memory-bound: its GB/s count the bytes it must move (K and V at all
# kv_len cached keys, Q and O at its q_len rows; build/report's
# report_row_gbps, as attnbench's gbps column) over the median time. With
# the run's read-only ceiling (attnbench --peak: the .env's
# peak_read_gbps) a solid line marks it and a dashed one 90 % of it;
# without it the subtitle says it was not measured. Prefill panels (q_len
# = seq_len) are not drawn here; a run without decode rows says so and
# draws nothing.
#   gnuplot -c plots/bandwidth.gp DATADIR OUTFILE [png|svg]
load ARG1."/meta.gp"
if (!have_decode) { print "bandwidth.gp: no decode rows in this run: nothing to draw"; exit }
if (nbw_panels == 0) { print "bandwidth.gp: no decode panel on this figure page: nothing to draw"; exit }
have_peak = peak_read_gbps == peak_read_gbps && peak_read_gbps > 0
peak_title = have_peak ? sprintf("read peak %.0f GB/s (measured)", peak_read_gbps) : ""
fig_title = sprintf("Decode bandwidth — %s", gpu_name)
fig_subtitle = sprintf("%s · run %s · GB/s = (K + V at kv_len, Q + O at q_len) bytes / median time", bw_grid_note, run_id) . \
    (have_peak ? " · read peak: the read-only stream measured at the start of the run (--peak)" : " · read peak not measured (run with --peak)")
fig_key = "legend_bandwidth"
fig_key_extra = have_peak ? 2 : 0; fig_key_extra_len = strlen(peak_title)
call "plots/style.gp" (ARG3 eq "" ? "png" : ARG3) ARG2 sprintf("%d", nbw_panels)
# the decode panels' kv_len, not the run's S
set xrange [bw_seq_min * 2 ** -seq_pad : bw_seq_max * 2 ** seq_pad]
set xlabel "cached keys kv_len (tokens)" offset 0, 0.3
# one y range for every panel, from 0, with room above the peak's line for
# its label
top = 1.12 * (have_peak && !(bw_gbps_max > peak_read_gbps) ? peak_read_gbps : bw_gbps_max)
set yrange [0:top]
empty_ymin = 0; empty_ymax = top
set ytics nomirror format "%.0f"
set ylabel "bandwidth (GB/s)"
if (have_peak) {
    set label 1 peak_title at graph 0.02, first peak_read_gbps left offset 0, 0.7 font ",10" tc rgb "#444444"
}
peak_lines = have_peak ? 'peak_read_gbps with lines dt solid lw 1.5 lc rgb "#444444" notitle, ' . \
    '0.9 * peak_read_gbps with lines dt 2 lw 1.5 lc rgb "#444444" notitle, ' : ''
set multiplot
do for [p = 1:nbw_panels] {
    eval panel_at(p)
    set title bw_panel_title[p]
    if (panel_n_bandwidth[p] == 0) { eval empty_panel } else {
        plot @peak_lines for [i = 1:nvariants] bw_panel_file[p] index i - 1 using 1:12 with linespoints lt vlt(i) notitle
    }
}
eval fig_legend
if (have_peak) {
    plot for [i = 1:nvariants] NaN with linespoints lt vlt(i) title (legend_bandwidth[i] ? variant_name[i] : ""), \
         NaN with lines dt solid lw 1.5 lc rgb "#444444" title peak_title, \
         NaN with lines dt 2 lw 1.5 lc rgb "#444444" title "90 % of the read peak"
} else {
    plot for [i = 1:nvariants] NaN with linespoints lt vlt(i) title (legend_bandwidth[i] ? variant_name[i] : "")
}
unset multiplot
