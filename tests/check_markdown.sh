#!/usr/bin/env bash
# check_markdown.sh — the Markdown tables of the given files render as tables
# (GitHub-flavoured): every table is a header row, a |---| separator row and
# rows with the header's number of cells; a row starting with '|' outside a
# table (a blank line inside a table ends it, and the rest becomes a
# paragraph of pipes) is an error. Fenced code blocks are skipped. Prints
# FILE:LINE: why for each problem and `markdown: N passed, N failed` (files).
#   usage: tests/check_markdown.sh FILE...
set -u
pass=0 fail=0
for f in "$@"; do
    if awk -v file="$f" '
        function cells(s,   n, i, c, esc) {
            n = 0; esc = 0
            for (i = 1; i <= length(s); i++) {
                c = substr(s, i, 1)
                if (c == "\\" && !esc) { esc = 1; continue }
                if (c == "|" && !esc) n++
                esc = 0
            }
            return n - 1 # cells between the outer pipes
        }
        function sep(s) { return s ~ /^ *\|( *:?-+:? *\|)+ *$/ }
        { line[NR] = $0 }
        END {
            bad = 0; fence = 0; intable = 0; want = 0
            for (i = 1; i <= NR; i++) {
                s = line[i]
                if (s ~ /^ *```/) { fence = !fence; intable = 0; continue }
                if (fence) continue
                if (s !~ /^ *\|/) { intable = 0; continue }
                if (!intable) {
                    if (i < NR && sep(line[i + 1])) {
                        intable = 1; want = cells(s)
                        if (cells(line[i + 1]) != want) {
                            printf "%s:%d: the separator has %d cells, the header %d\n", file, i + 1, cells(line[i + 1]), want; bad = 1
                        }
                        i++
                        continue
                    }
                    printf "%s:%d: a table row outside a table (is a blank line or a missing |---| row breaking it?)\n", file, i; bad = 1
                    continue
                }
                if (cells(s) != want) {
                    printf "%s:%d: %d cells where the header has %d\n", file, i, cells(s), want; bad = 1
                }
            }
            exit bad
        }' "$f"; then
        echo "ok $f"
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
    fi
done
echo "markdown: $pass passed, $fail failed"
[ $fail = 0 ]
