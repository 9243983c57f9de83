# style.gp — the look and the page every attnbench figure shares.
#   call "plots/style.gp" FORMAT OUTFILE NPANELS [Y2]
# FORMAT png or svg; OUTFILE the file to write; NPANELS the panels (two per
# row, as many rows as they need: a run of model shapes has five or more,
# and the figure grows in height, each panel keeping its size); Y2 1 when
# the panels carry a second y axis (room on the right).
# Before the call a script sets fig_title and fig_subtitle. The panels are
# drawn with no key; the figure's ONE legend is a strip under the title and
# subtitle, across the whole width, drawn last from NaN functions (gnuplot
# 5.4's `keyentry` alone in a plot trips an assertion):
#   set multiplot
#   do for [p = 1:npanels] { eval panel_at(p); set title ...; plot ... }
#   eval fig_legend
#   plot for [i = 1:nvariants] NaN with linespoints lt vlt(i) title variant_name[i]
#   unset multiplot
# Panels are placed by hand (not `multiplot layout`) so that they line up
# whatever their tic labels, and no legend sits on a data line.
npan = ARG3 + 0
fig_y2 = ARGC >= 4 ? ARG4 + 0 : 0
cols = npan > 1 ? 2 : 1
nrows = int(ceil(npan / real(cols)))
cell_w = cols > 1 ? 700 : 980
cell_h = 430
band = 112
fig_w = cols * cell_w
fig_h = band + nrows * cell_h

if (ARG1 eq "svg") {
    set terminal svg size fig_w, fig_h dynamic noenhanced font "Helvetica,13" background rgb "white"
} else {
    set terminal pngcairo size fig_w, fig_h noenhanced font "Helvetica,12" background rgb "white"
}
set output ARG2
set datafile separator whitespace

# the panel grid, in pixels from the top left, to screen fractions
m_left = 82; m_right = fig_y2 ? 100 : 26; m_top = 34; m_bottom = 60
col_of(p) = (p - 1) % cols
row_of(p) = int((p - 1) / cols)
sx(px) = px / real(fig_w)
sy(py) = 1 - py / real(fig_h)
panel_at(p) = sprintf("set lmargin at screen %.5f; set rmargin at screen %.5f; set tmargin at screen %.5f; set bmargin at screen %.5f", \
    sx(col_of(p) * cell_w + m_left), sx((col_of(p) + 1) * cell_w - m_right), \
    sy(band + row_of(p) * cell_h + m_top), sy(band + (row_of(p) + 1) * cell_h - m_bottom))

unset key
# a legend of more than 8 variants (ours and the PyTorch peers) packs its
# entries closer: two rows of six fit the strip; with peers, longer line
# samples, so that the legend shows their dash
legend_width = exists("nvariants") && nvariants > 8 ? -2 : 1
legend_samplen = exists("npeers") && npeers > 0 ? 3.5 : 2.5
# the legend strip: everything the panels set, undone; title, subtitle and
# key at the top (the label texts are the variables, never eval'd text)
fig_legend = "unset logscale; unset border; unset tics; unset xlabel; unset ylabel; unset y2label; " . \
    "unset title; unset grid; unset label; unset arrow; unset object; set offsets 0, 0, 0, 0; " . \
    "set xrange [0:1]; set yrange [0:1]; " . \
    sprintf("set lmargin at screen 0.01; set rmargin at screen 0.99; set tmargin at screen %.5f; set bmargin at screen %.5f; ", sy(62), sy(band - 4)) . \
    sprintf("set key center center horizontal Left reverse samplen %g spacing 1.1 width %d nobox maxcols 12; ", legend_samplen, legend_width) . \
    sprintf("set label 101 fig_title at screen 0.5, %.5f center font ',17' tc rgb '#111111'; ", sy(24)) . \
    sprintf("set label 102 fig_subtitle at screen 0.5, %.5f center font ',12' tc rgb '#555555'", sy(50))

set border lc rgb "#555555"
set grid xtics ytics mxtics mytics lw 1 lc rgb "#e4e4e4", lw 1 lc rgb "#f2f2f2"
set tics textcolor rgb "#333333"
set title offset 0, -0.4 font ",13"

# one colour and marker per variant (colour-blind safe): our variants take
# linetypes 1-8 in the run's order, solid with filled markers; a PyTorch
# peer (torch_*) takes 11-18, the same colours a shade darker (black and
# grey as they are), dashed, with open markers, in the colour of the variant
# of ours it pairs with (torch_sdpa_cudnn with cudnn_sdpa, ...). meta.gp says which variant is
# which (variant_peer, variant_colour: bench/report/report_data.c); vlt(i) is the
# linetype of variant i in every figure.
set linetype 1 lc rgb "#0072b2" lw 2 pt 7 ps 1.0
set linetype 2 lc rgb "#e69f00" lw 2 pt 5 ps 1.0
set linetype 3 lc rgb "#009e73" lw 2 pt 9 ps 1.1
set linetype 4 lc rgb "#cc79a7" lw 2 pt 11 ps 1.1
set linetype 5 lc rgb "#d55e00" lw 2 pt 13 ps 1.1
set linetype 6 lc rgb "#56b4e9" lw 2 pt 15 ps 1.1
set linetype 7 lc rgb "#000000" lw 2 pt 7 ps 1.0
set linetype 8 lc rgb "#999999" lw 2 pt 5 ps 1.0
peer_dash = "dt (12, 6)"
eval "set linetype 11 lc rgb '#004c78' lw 2 pt 6 ps 1.1 " . peer_dash
eval "set linetype 12 lc rgb '#a87400' lw 2 pt 4 ps 1.1 " . peer_dash
eval "set linetype 13 lc rgb '#00674b' lw 2 pt 8 ps 1.2 " . peer_dash
eval "set linetype 14 lc rgb '#a34d80' lw 2 pt 10 ps 1.2 " . peer_dash
eval "set linetype 15 lc rgb '#9c4400' lw 2 pt 12 ps 1.2 " . peer_dash
eval "set linetype 16 lc rgb '#2a86bd' lw 2 pt 14 ps 1.2 " . peer_dash
eval "set linetype 17 lc rgb '#000000' lw 2 pt 6 ps 1.1 " . peer_dash
eval "set linetype 18 lc rgb '#999999' lw 2 pt 4 ps 1.1 " . peer_dash
set linetype cycle 8
vlt(i) = variant_colour[i] + (variant_peer[i] ? 10 : 0)
# the same markers filled and open (ratio.gp: cold vs graph rows), by colour
array pt_filled[8] = [7, 5, 9, 11, 13, 15, 7, 5]
array pt_open[8] = [6, 4, 8, 10, 12, 14, 6, 4]

# sequence lengths are powers of two: a log2 axis with plain numbers, from
# the smallest S to the largest drawn (meta.gp), with room on both sides;
# a fixed range also keeps a one-point figure from an empty autoscale
set logscale x 2
set format x "%.0f"
set xlabel "sequence length S (tokens)" offset 0, 0.3
if (exists("seq_min") && seq_min > 0) { set xrange [seq_min * 2 ** -0.4 : seq_max * 2 ** 0.4] }

# a panel with no value to draw: its frame and a note (gnuplot refuses a
# plot without a single point), on the y range of the figure's other panels
# where the script fixes one (empty_ymin, empty_ymax: set them after this
# call), else from 1 to 10; a model-shape run (the llm grid) has such
# panels wherever a kernel skips grouped heads
empty_ymin = 1
empty_ymax = 10
empty_panel = "set label 201 'no ok row in this panel' at graph 0.5, 0.5 center tc rgb '#777777'; " . \
    "plot [] [empty_ymin:empty_ymax] NaN notitle; unset label 201"
