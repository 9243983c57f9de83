#!/usr/bin/env bash
# check_house.sh — what keeps the repository walkable and small enough to
# travel to the GPU machine (its whole working tree goes with every call, at
# most 64 MiB, and a peer library must fit beside it):
#   size     the tracked working tree is under HOUSE_MAX_MIB (default 20) MiB;
#   readme   README.md is at most 250 lines and links every page of docs/;
#   words    no README, docs page, comment or sub-README speaks of issue
#            numbers, journal version tags (v12, v4–v15) or lent/borrowed
#            machines: the text says what a thing is. The performance
#            journals (variants/NOTES*.md) and the measured results keep
#            their history.
# Run from the repository root (a git checkout). Prints one line per check
# that fails, and `house: N passed, N failed`.
#   usage: tests/check_house.sh
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || echo .)" || exit 2
git rev-parse --git-dir >/dev/null 2>&1 || { echo "check_house.sh: not a git checkout" >&2; exit 2; }
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }

# size: the bytes of every tracked file as it is in the working tree
max_mib=${HOUSE_MAX_MIB:-20}
bytes=$(git ls-files -z | xargs -0 stat -c %s -- 2>/dev/null | awk '{s += $1} END {print s + 0}')
mib=$(awk -v b="$bytes" 'BEGIN {printf "%.1f", b / 1048576}')
if awk -v b="$bytes" -v m="$max_mib" 'BEGIN {exit !(b < m * 1048576)}'; then
    ok "size: the tracked tree is $mib MiB (limit $max_mib)"
else
    bad size "the tracked tree is $mib MiB, over $max_mib MiB; the largest files:
$(git ls-files -z | xargs -0 stat -c '%s %n' -- | sort -rn | head -n 5)"
fi

# readme: short, and every docs page reachable from it
lines=$(wc -l <README.md)
missing=
for page in docs/*.md; do
    [ -e "$page" ] || continue
    grep -qF "($page)" README.md || missing="$missing $page"
done
if [ "$lines" -le 250 ] && [ -z "$missing" ]; then
    ok "readme: $lines lines, every docs page linked"
else
    [ "$lines" -le 250 ] || bad readme "README.md is $lines lines, over 250"
    [ -z "$missing" ] || bad readme "README.md links no$missing"
fi

# words: tags a reader has no key to. Identifiers such as v0..v3 registers,
# ld.shared.v4, a frontend's "v1.14", a lab configuration named `v1` or
# actions/checkout@v4 are code, not tags.
pattern='(\bissue #?[0-9]+|\bissues #?[0-9]+ *(and|,|/)|\bv[0-9]{1,2}\b[^.0-9(@]|\bv[0-9]{1,2}$|NOTES[^ ]* v[0-9]|\blent\b|borrow(ed|s)?\b)'
hits=$(git grep -nIE "$pattern" -- ':!variants/NOTES*.md' ':!results/' ':!fuzz/corpus/' ':!tests/fixtures/' \
    ':!tests/check_house.sh' | grep -vE 'checkout@v[0-9]|`v[0-9]+`|,v[0-9]+,|\b(v[0-3]|v1\[|k1|q1)\b *[,=;)\[]|uint32_t v0|"v[0-9]+"' )
if [ -z "$hits" ]; then
    ok "words: no issue numbers, version tags or borrowed machines"
else
    bad words "text that speaks of issues, version tags or borrowed machines:
$(head -n 20 <<<"$hits")"
fi

echo "house: $pass passed, $fail failed"
[ $fail = 0 ]
