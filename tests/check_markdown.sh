#!/usr/bin/env bash
# check_markdown.sh — the Markdown files of the repository render and link
# as GitHub shows them:
#   tables: every table is a header row, a |---| separator row and rows with
#     the header's number of cells; a row starting with '|' outside a table (a
#     blank line inside a table ends it, and the rest becomes a paragraph of
#     pipes) is an error;
#   links: every relative link [text](PATH) and [text](PATH#anchor) names a
#     file or folder that exists (relative to the file holding the link), and
#     every #anchor a heading of the file it points into, by GitHub's rule
#     (lower case; what is not a letter, digit, space, - or _ dropped; spaces
#     to -; a repeated heading gains -1, -2, ...). Links to http(s) and
#     mailto are not followed.
# Fenced code blocks and `inline code` are skipped. Prints FILE:LINE: why for
# each problem and `markdown: N passed, N failed` (files).
#   usage: tests/check_markdown.sh [FILE...]   (default: every tracked *.md)
set -u
[ $# -gt 0 ] || { mapfile -t files < <(git ls-files '*.md'); set -- "${files[@]}"; }
[ $# -gt 0 ] || { echo "check_markdown.sh: no Markdown files (run from the repository root)" >&2; exit 2; }

# links FILE: prints FILE:LINE: why for each relative link or anchor that
# does not resolve; exit 1 when one does not.
links() {
    perl -CSD -Mutf8 -e '
        use strict; use warnings;
        my %slugs; # file -> { slug => 1 }
        sub slugs_of {
            my ($path) = @_;
            return $slugs{$path} if $slugs{$path};
            my (%s, %seen); my $fence = 0;
            open(my $fh, "<:encoding(UTF-8)", $path) or return $slugs{$path} = {};
            while (my $l = <$fh>) {
                if ($l =~ /^\s*```/) { $fence = !$fence; next }
                next if $fence || $l !~ /^#{1,6}\s+(.*?)\s*#*\s*$/;
                my $t = lc $1;
                $t =~ s/`//g;
                $t =~ s/\[([^\]]*)\]\([^)]*\)/$1/g;  # a link in a heading: its text
                $t =~ s/[^\p{L}\p{N}\p{M} _-]//g;
                $t =~ s/ /-/g;
                my $slug = $t;
                $slug = "$t-" . $seen{$t} if $seen{$t};
                $seen{$t}++;
                $s{$slug} = 1;
            }
            return $slugs{$path} = \%s;
        }
        my $file = $ARGV[0];
        (my $dir = $file) =~ s{[^/]*$}{};
        open(my $fh, "<:encoding(UTF-8)", $file) or die "$file: $!\n";
        my ($fence, $bad) = (0, 0);
        while (my $l = <$fh>) {
            my $ln = $.; # slugs_of reads other files, which moves $.
            if ($l =~ /^\s*```/) { $fence = !$fence; next }
            next if $fence;
            $l =~ s/`[^`]*`//g;
            while ($l =~ /\[[^\]]*\]\(([^)\s]+)\)/g) {
                my $target = $1;
                next if $target =~ m{^(https?|mailto):};
                my ($path, $anchor) = split /#/, $target, 2;
                my $where = $path eq "" ? $file : $dir . $path;
                if ($path ne "" && !-e $where) {
                    print "$file:$ln: link to $target: $where does not exist\n"; $bad = 1; next;
                }
                next unless defined $anchor;
                if (-d $where || $where !~ /\.md$/) {
                    print "$file:$ln: link to $target: an anchor into something that is not a Markdown file\n"; $bad = 1; next;
                }
                next if slugs_of($where)->{$anchor};
                print "$file:$ln: link to $target: no heading of $where has the anchor #$anchor\n"; $bad = 1;
            }
        }
        exit $bad;
    ' "$1"
}

pass=0 fail=0
for f in "$@"; do
    [ -f "$f" ] || { echo "$f: no such file"; fail=$((fail + 1)); continue; }
    links "$f" || { fail=$((fail + 1)); continue; }
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
