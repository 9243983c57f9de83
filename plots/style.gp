# style.gp — the look and the page every attnbench figure shares.
#   call "plots/style.gp" FORMAT OUTFILE NPANELS [Y2]
# FORMAT png or svg; OUTFILE the file to write; NPANELS the panels (two per
# row, as many rows as they need: a run of model shapes has five or more,
# and the figure grows in height, each panel keeping its size); Y2 1 when
# the panels carry a second y axis (room on the right).
# Before the call a script sets fig_title and fig_subtitle (and, for a
# second line under it, fig_subtitle2: the strip grows by a line), and
# fig_key (and fig_key_extra, fig_key_extra_len: the legend's size, below).
# The figures of a pass other than the forward (the backward, forward +
# backward) say it in the title, from meta.gp's pass_title, which the
# forward's meta.gp does not set; grid_note says it too.
# The panels are drawn with no key; the figure's ONE legend is a strip
# under the title and subtitle, across the whole width, drawn last from NaN
# functions (gnuplot 5.4's `keyentry` alone in a plot trips an assertion):
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
fig_w = cols * cell_w
# a legend of more than 8 variants (ours and the PyTorch peers) packs its
# entries closer: two rows of six fit the strip; with peers, longer line
# samples, so that the legend shows their dash
legend_width = exists("nvariants") && nvariants > 8 ? -2 : 1
legend_samplen = exists("npeers") && npeers > 0 ? 3.5 : 2.5
# the strip grows with the rows its entries take, so that no entry runs into
# the subtitle or a panel: fig_key names the script's legend array (1 where
# variant i is listed; all of them without it), fig_key_extra and
# fig_key_extra_len count its other entries and the longest of their
# titles; gnuplot fits as many columns (12 at most) as the longest title
# allows, an entry about (title + sample + 4) characters of 8.9 px in the
# PNG's font, 9.7 in the SVG's
key_n = exists("fig_key_extra") ? fig_key_extra : 0
key_len = exists("fig_key_extra_len") ? fig_key_extra_len : 0
if (exists("nvariants")) {
    do for [i = 1:nvariants] {
        listed = 1
        if (exists("fig_key")) { eval sprintf("listed = %s[%d]", fig_key, i) }
        if (listed) { key_n = key_n + 1; key_len = strlen(variant_name[i]) > key_len ? strlen(variant_name[i]) : key_len }
    }
}
key_cols = int(0.98 * fig_w / ((key_len + legend_samplen + legend_width + 4) * (ARG1 eq "svg" ? 9.7 : 8.9)))
key_cols = key_cols < 1 ? 1 : key_cols > 12 ? 12 : key_cols
key_rows = int(ceil(key_n / real(key_cols)))
# a subtitle wider than the figure (a long note, a run of both regimes, a
# figure of one panel) is broken at its last " · " that fits, the rest put
# before the second line's text; widths are estimated from the text's bytes
# (an average character of the 12 pt PNG font takes about 7 px, of the SVG's
# 13 pt about 7.6; a multi-byte "·" or "–" counts more than it takes)
if (!exists("fig_subtitle2")) { fig_subtitle2 = "" }
sub_px = ARG1 eq "svg" ? 7.6 : 7.0
sub_fits(n) = n * sub_px <= fig_w - 40
if (!sub_fits(strlen(fig_subtitle))) {
    cut = 0
    do for [i = 2:strlen(fig_subtitle) - 4] {
        if (fig_subtitle[i:i + 3] eq " · " && sub_fits(i - 1)) { cut = i }
    }
    if (cut > 0) {
        rest = fig_subtitle[cut + 4:]
        fig_subtitle2 = rest . (fig_subtitle2 eq "" ? "" : " · " . fig_subtitle2)
        fig_subtitle = fig_subtitle[1:cut - 1]
    }
}
sub2 = fig_subtitle2 ne "" ? 18 : 0
band = 112 + sub2 + (key_rows > 2 ? 17 * (key_rows - 2) : 0)
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
# the legend strip: everything the panels set, undone; title, subtitle and
# key at the top (the label texts are the variables, never eval'd text)
fig_legend = "unset logscale; unset border; unset tics; unset xlabel; unset ylabel; unset y2label; " . \
    "unset title; unset grid; unset label; unset arrow; unset object; set offsets 0, 0, 0, 0; " . \
    "set xrange [0:1]; set yrange [0:1]; " . \
    sprintf("set lmargin at screen 0.01; set rmargin at screen 0.99; set tmargin at screen %.5f; set bmargin at screen %.5f; ", sy(62 + sub2), sy(band - 4)) . \
    sprintf("set key center center horizontal Left reverse samplen %g spacing 1.1 width %d nobox maxcols 12; ", legend_samplen, legend_width) . \
    sprintf("set label 101 fig_title at screen 0.5, %.5f center font ',17' tc rgb '#111111'; ", sy(24)) . \
    sprintf("set label 102 fig_subtitle at screen 0.5, %.5f center font ',12' tc rgb '#555555'", sy(50)) . \
    (sub2 ? sprintf("; set label 103 fig_subtitle2 at screen 0.5, %.5f center font ',12' tc rgb '#555555'", sy(50 + sub2)) : "")

set border lc rgb "#555555"
set grid xtics ytics mxtics mytics lw 1 lc rgb "#e4e4e4", lw 1 lc rgb "#f2f2f2"
set tics textcolor rgb "#333333"
set title offset 0, -0.4 font ",13"

# one colour and marker per variant, the same in every figure of every run:
# meta.gp gives each series (a variant's rows of one regime and init) its
# variant's look (variant_rgb, variant_pt, variant_ps: bench/report/
# report_data.c's table, the one place that lists them), our variants solid
# with filled markers, a PyTorch peer (torch_*) dashed with open ones, and
# a run's second kind of rows (sustained beside burst, a second init) in a
# dash of its own (variant_dash: gnuplot dash patterns written by
# build/report from a fixed table, never text from the data); linetype i
# is series i's, vlt(i) names it in every script
if (exists("nvariants")) {
    do for [i = 1:nvariants] {
        set linetype i lc rgb variant_rgb[i] lw 2 pt variant_pt[i] ps variant_ps[i] dt solid
        eval sprintf("set linetype %d dt %s", i, variant_dash[i])
    }
}
vlt(i) = i

# sequence lengths are powers of two: a log2 axis with plain numbers, from
# the smallest S to the largest drawn (meta.gp), with room on both sides;
# a fixed range also keeps a one-point figure from an empty autoscale
set logscale x 2
set format x "%.0f"
set xlabel "sequence length S (tokens)" offset 0, 0.3
if (exists("seq_min") && seq_min > 0) { set xrange [seq_min * 2 ** -seq_pad : seq_max * 2 ** seq_pad] }

# a panel with no value to draw: its frame and a note (gnuplot refuses a
# plot without a single point), on the y range of the figure's other panels
# where the script fixes one (empty_ymin, empty_ymax: set them after this
# call), else from 1 to 10; a model-shape run (the llm grid) has such
# panels wherever a kernel skips grouped heads
empty_ymin = 1
empty_ymax = 10
empty_panel = "set label 201 'no ok row in this panel' at graph 0.5, 0.5 center tc rgb '#777777'; " . \
    "plot [] [empty_ymin:empty_ymax] NaN notitle; unset label 201"
