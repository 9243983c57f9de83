# style.gp — the look every attnbench figure shares, and the terminal.
# Loaded by each script after meta.gp:  call 'plots/style.gp' FORMAT OUTFILE W H
#   FORMAT png or svg; OUTFILE the file to write; W, H pixels.
if (ARG1 eq "svg") {
    set terminal svg size ARG3+0, ARG4+0 dynamic noenhanced font "Helvetica,13" background rgb "white"
} else {
    set terminal pngcairo size ARG3+0, ARG4+0 noenhanced font "Helvetica,12" background rgb "white"
}
set output ARG2
set datafile separator whitespace
set border lc rgb "#555555"
set grid xtics ytics mxtics mytics lw 1 lc rgb "#e4e4e4", lw 1 lc rgb "#f2f2f2"
set tics textcolor rgb "#333333"
set key outside right top vertical Left reverse samplen 2 spacing 1.2 box lc rgb "#bbbbbb"
# one colour and marker per variant, in --list order (colour-blind safe)
set linetype 1 lc rgb "#0072b2" lw 2 pt 7 ps 0.9
set linetype 2 lc rgb "#e69f00" lw 2 pt 5 ps 0.9
set linetype 3 lc rgb "#009e73" lw 2 pt 9 ps 1.0
set linetype 4 lc rgb "#cc79a7" lw 2 pt 11 ps 1.0
set linetype 5 lc rgb "#d55e00" lw 2 pt 13 ps 1.0
set linetype 6 lc rgb "#56b4e9" lw 2 pt 3 ps 1.0
set linetype 7 lc rgb "#000000" lw 2 pt 1 ps 1.0
set linetype 8 lc rgb "#999999" lw 2 pt 2 ps 1.0
set linetype cycle 8
# sequence lengths are powers of two: a log2 axis with plain numbers
set logscale x 2
set format x "%.0f"
set xlabel "sequence length (tokens)"
set offsets graph 0.04, graph 0.04, 0, 0
