#!/usr/bin/env bash
# check_report.sh — renders the report page (build/report html) of the
# committed H200 run in headless Chromium at 1400 px width and checks it:
#   (a) the page logs no console message (no error, no failed resource);
#   (b) no broken image: every <img>/<a> target exists beside the page and is a
#       real PNG/SVG, and in the browser every image loaded (naturalWidth > 0);
#   (c) no sideways scrolling at 1400 px: scrollWidth <= clientWidth;
#   (d) a screenshot of the top of the page (1400×1800), kept as a CI artefact;
# plus the page's order (what ran, headline, figures, tables, environment), the
# sentences generated from the rows, a non-ok row's reason as its tooltip,
# markup in the input files shown as text (escaped), and a run with PyTorch
# peers (tests/fixtures/peers.csv): peers compete for the fastest kernel per
# point, marked "(PyTorch)", the speedup-over-PyTorch table holds the run's
# numbers, and that page too fits 1400 px; a run of model shapes
# (tests/fixtures/llm.csv): its tables grouped by shape, fitting 1400 px;
# a run whose rows come from several revisions: its first section says
# which, with their dates; a compare run (tests/fixtures/compare/): its
# ratios interleaved, with their intervals, and a run of burst and sustained
# rows: a table per regime, fitting 1400 px; a run of the forward, the
# backward and forward + backward (tests/fixtures/passes.csv): a table
# section per pass, fitting 1400 px; a decode run (tests/fixtures/decode.csv):
# a Decode section whose table lists each decode point's variants with
# their GB/s (and % of the read peak, given one), fitting 1400 px, and none
# for a run without decode rows; and make plots / make report / make figures in a
# scratch tree: which run they draw, and that no file name or figures.conf
# line runs a command.
#
# Needs: build/report (make build/report) and Chromium from Debian
# (apt-get install chromium; found as chromium or chromium-browser), bash,
# coreutils (timeout, od, mktemp), grep, sed, awk. Run from anywhere; it works
# in a temp dir and writes only the screenshot.
#
# Usage: [REPORT_BIN=build/report] tests/check_report.sh [SCREENSHOT]
#   SCREENSHOT (or $REPORT_SCREENSHOT): where the screenshot goes
#   (default build/report-screenshot.png, relative to the repository root).
# Prints one line per check ("ok …" / "FAIL …") and closes with
# "report: N passed, N failed"; exits 1 on a failed check, 2 when something
# it needs is missing (one line saying what).
#
# How the browser checks work, and why:
#   - Chromium's --enable-logging=stderr --v=0 prints every console message of
#     the page as a "CONSOLE" line (errors, warnings, logs alike: the page has no
#     JavaScript, so any console line is a failure), and uncaught exceptions as
#     "Uncaught …". It does not print "Failed to load resource" for file://
#     pages, so a missing image is caught by (b) instead: the files on disk,
#     and the browser's own view of each <img>.
#   - The in-browser measurements (image loaded, scrollWidth, clientWidth) come
#     from a test-only copy of the page, probe.html, written beside it with a
#     small <script> appended that writes the numbers into the DOM; Chromium's
#     --dump-dom prints the DOM after the load event (all images settled) and
#     the script's line is grepped. The product page itself carries no test code.
#   - Chromium runs with --no-sandbox (as root, and in containers without user
#     namespaces, it will not start otherwise; the page is a local file we wrote)
#     and its own throw-away profile.
#   - Before trusting any of this, a self-test page with a console.error, a
#     missing image and a 2000 px wide box must make all three detectors fire.
set -u

cd "$(dirname "$0")/.." || exit 2
REPORT_BIN=${REPORT_BIN:-build/report}
FIGDIR=plots/h200
# the run the committed figures show, as their figures.conf names it
RUN=$(sed -n 's/^RESULTS=\(.*\)\.csv$/\1/p' "$FIGDIR/figures.conf")
[ -f "$RUN.csv" ] || { echo "check_report.sh: $FIGDIR/figures.conf names no run (RESULTS=...csv)" >&2; exit 2; }
SHOT=${1:-${REPORT_SCREENSHOT:-build/report-screenshot.png}}
WIDTH=1400
HEIGHT=1800

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
    echo "check_report: chromium not found: install it (apt-get install chromium)" >&2
    exit 2
fi
if [ ! -x "$REPORT_BIN" ]; then
    echo "check_report: $REPORT_BIN not found: run make build/report first" >&2
    exit 2
fi
for f in "$RUN.csv" "$RUN.env"; do
    [ -f "$f" ] || { echo "check_report: fixture $f missing" >&2; exit 2; }
done

TMP=$(mktemp -d /tmp/check_report.XXXXXX) || exit 2
trap 'rm -rf "$TMP"' EXIT
PAGE_DIR=$TMP/page
mkdir -p "$PAGE_DIR"

passed=0
failed=0
ok() { echo "ok $*"; passed=$((passed + 1)); }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }
finish() {
    echo "report: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit $?
}

# chromium ARGS...: headless at WIDTH×HEIGHT, its own profile, bounded in time.
chromium() {
    timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
        --no-first-run --no-default-browser-check --disable-extensions --mute-audio \
        --user-data-dir="$TMP/profile" --window-size=$WIDTH,$HEIGHT "$@"
}

# The test-only measuring script, appended to a copy of a page. It writes one
# line into the DOM after the load event; the marker is split in the source so
# the source itself never matches.
PROBE_JS='<script>
addEventListener("load", function () {
  var d = document.documentElement, imgs = document.images, bad = [];
  for (var i = 0; i < imgs.length; i++)
    if (!imgs[i].complete || !imgs[i].naturalWidth) bad.push(imgs[i].getAttribute("src"));
  var p = document.createElement("pre");
  p.textContent = "PROBE" + "-RESULT viewport=" + innerWidth + " client=" + d.clientWidth +
    " scroll=" + Math.max(d.scrollWidth, document.body.scrollWidth) +
    " images=" + imgs.length + " broken=" + bad.length + " [" + bad.join(" ") + "]";
  document.body.appendChild(p);
});
</script>'

# probe PAGE LOG: dumps PAGE's DOM (stderr into LOG), prints the probe's line.
probe() {
    chromium --enable-logging=stderr --v=0 --virtual-time-budget=10000 --dump-dom \
        "file://$1" 2>"$2" | grep -o 'PROBE-RESULT [^<]*' | head -n 1
}

# field LINE NAME: the number after NAME= in a probe line.
field() { sed -n "s/.* $2=\([0-9]*\).*/\1/p" <<<"$1"; }

# console_lines LOG: the page's console messages and uncaught exceptions.
console_lines() { grep -E 'CONSOLE|Uncaught|Failed to load resource' "$1"; }

# ---------------------------------------------------------- self-test
# A page that must trip every detector, so a Chromium that logs differently
# cannot make the checks pass by seeing nothing.
SELF=$TMP/self
mkdir -p "$SELF"
{
    echo '<!DOCTYPE html><html><head><meta charset="utf-8"><title>self-test</title></head><body>'
    echo '<div style="width:2000px">wide</div><img src="missing.png" alt="">'
    echo '<script>console.error("check_report self-test");</script>'
    echo "$PROBE_JS</body></html>"
} >"$SELF/probe.html"
line=$(probe "$SELF/probe.html" "$SELF/log")
if console_lines "$SELF/log" | grep -q 'check_report self-test' &&
    [ "$(field "$line" broken)" = 1 ] && [ "$(field "$line" scroll)" -gt "$(field "$line" client)" ] 2>/dev/null; then
    ok "self-test: a console.error, a missing image and a 2000 px box are all detected"
else
    fail "self-test: the detectors did not fire on a page built to trip them (probe: '${line:-none}'); the checks below cannot be trusted"
fi

# ------------------------------------------------------------ the page
# The committed run, its .env, and the committed figures beside the page.
figs=0
for f in "$FIGDIR"/*.png "$FIGDIR"/*.svg; do
    [ -f "$f" ] && cp "$f" "$PAGE_DIR/" && figs=$((figs + 1))
done
if "$REPORT_BIN" html "$RUN.csv" "$PAGE_DIR" --env "$RUN.env" >"$TMP/report.out" 2>&1 &&
    [ -s "$PAGE_DIR/report.html" ]; then
    ok "build/report html wrote report.html ($figs figure files beside it)"
else
    fail "build/report html failed: $(tr '\n' ' ' <"$TMP/report.out")"
    finish
fi
PAGE=$PAGE_DIR/report.html

# (a) + (d): the product page itself, its console log and a screenshot.
chromium --enable-logging=stderr --v=0 --hide-scrollbars --screenshot="$TMP/shot.png" \
    "file://$PAGE" >"$TMP/shot.out" 2>"$TMP/page.log"
if [ ! -s "$TMP/shot.png" ]; then
    fail "(a) chromium did not render the page: $(tail -n 3 "$TMP/page.log" | tr '\n' ' ')"
elif console_lines "$TMP/page.log" >"$TMP/console.txt"; then
    fail "(a) console messages while loading the page: $(head -n 3 "$TMP/console.txt" | tr '\n' ' ')"
else
    ok "(a) the page loads with no console message and no failed resource"
fi

# (d) the screenshot: a PNG of WIDTH×HEIGHT (IHDR: width, height big-endian at 16).
read -r w h < <(od -An -tu1 -j16 -N8 "$TMP/shot.png" 2>/dev/null |
    awk '{print $1*16777216+$2*65536+$3*256+$4, $5*16777216+$6*65536+$7*256+$8}')
if [ "$(head -c 8 "$TMP/shot.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
    [ "${w:-0}" = $WIDTH ] && [ "${h:-0}" = $HEIGHT ] &&
    mkdir -p "$(dirname "$SHOT")" && cp "$TMP/shot.png" "$SHOT"; then
    ok "(d) screenshot of the top of the page (${w}x${h}) kept at $SHOT"
else
    fail "(d) no ${WIDTH}x${HEIGHT} PNG screenshot (got ${w:-?}x${h:-?}), or $SHOT not writable"
fi

# (b) part 1: every image and link target names a real file beside the page.
bad_files=""
nimg=0
while IFS= read -r attr; do
    name=${attr#*\"}
    name=${name%\"}
    case $name in "#"* | http:* | https:*) continue ;; esac
    [[ $attr == src=* ]] && nimg=$((nimg + 1))
    file=$PAGE_DIR/$name
    case $name in
    *.png) [ "$(head -c 8 "$file" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
        bad_files="$bad_files $name" ;;
    *.svg) grep -q '<svg' "$file" 2>/dev/null || bad_files="$bad_files $name" ;;
    *) [ -s "$file" ] || bad_files="$bad_files $name" ;;
    esac
done < <(grep -oE '(src|href)="[^"]*"' "$PAGE")
# (b) part 2 and (c): the browser's view, from the test-only probe copy.
cp "$PAGE" "$PAGE_DIR/probe.html"
echo "$PROBE_JS" >>"$PAGE_DIR/probe.html"
line=$(probe "$PAGE_DIR/probe.html" "$TMP/probe.log")
broken=$(field "$line" broken)
shown=$(field "$line" images)
if [ -n "$bad_files" ]; then
    fail "(b) image/link targets missing or not PNG/SVG beside the page:$bad_files"
elif [ "$nimg" -eq 0 ]; then
    fail "(b) the page shows no image although $figs figure files lie beside it"
elif [ -z "$line" ]; then
    fail "(b) the in-browser image check printed nothing"
elif [ "$broken" != 0 ] || [ "$shown" != "$nimg" ]; then
    fail "(b) broken images in the browser: $line"
else
    ok "(b) all $nimg images load (files are real PNGs; the browser reports naturalWidth > 0 for each)"
fi
viewport=$(field "$line" viewport)
client=$(field "$line" client)
scroll=$(field "$line" scroll)
if [ -z "$line" ] || [ "$viewport" != $WIDTH ]; then
    fail "(c) could not measure at $WIDTH px (viewport '${viewport:-?}', probe '${line:-none}')"
elif [ "$scroll" -gt "$client" ]; then
    fail "(c) the page scrolls sideways at $WIDTH px: scrollWidth $scroll > clientWidth $client"
else
    ok "(c) no sideways scrolling at $WIDTH px: scrollWidth $scroll <= clientWidth $client"
fi

# The page's order and what the top says.
order=$(grep -oE 'id="(run|headline|figures|tables|environment)"' "$PAGE" | tr -d '"' | sed 's/id=//' | tr '\n' ' ')
toc_line=$(grep -n 'class="toc"' "$PAGE" | head -n 1 | cut -d: -f1)
run_line=$(grep -n 'id="run"' "$PAGE" | head -n 1 | cut -d: -f1)
if [ "$order" = "run headline figures tables environment " ] && [ -n "$toc_line" ] && [ "$toc_line" -lt "$run_line" ] &&
    grep -q 'is fastest at [0-9]* of [0-9]* points' "$PAGE" && grep -q 'Against the vendor kernel cudnn_sdpa' "$PAGE" &&
    grep -q 'NVIDIA H200' "$PAGE" && grep -q 'peak_gemm_bf16_tflops' "$PAGE"; then
    ok "page order: contents, what ran, headline (generated sentences), figures, tables, environment"
else
    fail "page order or headline wrong: sections '$order'"
fi

# The ceilings sentence: the read-only stream beside the copy when the run
# measured it (a run from before it has no peak_read_gbps: not named).
mkdir -p "$TMP/read"
sed 's/^peak_copy_gbps=.*/&\npeak_read_gbps=3951.5/' "$RUN.env" > "$TMP/read/run.env"
if "$REPORT_BIN" html "$RUN.csv" "$TMP/read" --env "$TMP/read/run.env" >/dev/null 2>&1 &&
    grep -q 'device-to-device copy <b>[0-9]* GB/s</b>, read alone <b>3952 GB/s</b>\.' "$TMP/read/report.html" &&
    ! grep -q 'read alone' "$PAGE"; then
    ok "peaks: the read-only ceiling named beside the copy when the run has it, not otherwise"
else
    fail "peaks: 'read alone <b>3952 GB/s</b>' not beside the copy (or named for a run without it)"
fi

# A non-ok row: its status in the cell, its reason (with quotes) escaped in the tooltip.
mkdir -p "$TMP/gaps"
if "$REPORT_BIN" html tests/fixtures/gaps.csv "$TMP/gaps" >/dev/null 2>&1 &&
    grep -q 'title="needs compute capability &quot;9.0&quot;, here 8.0">skipped<' "$TMP/gaps/report.html" &&
    grep -q 'title="needs 99999 MiB of workspace, 1000 MiB free">oom<' "$TMP/gaps/report.html"; then
    ok "non-ok rows show their status with the reason, escaped, as a tooltip (tests/fixtures/gaps.csv)"
else
    fail "non-ok rows of tests/fixtures/gaps.csv lack their escaped reason tooltip"
fi

# Everything taken from the input files is escaped: the gaps run with markup in
# a variant name, the GPU, a reason and the .env.
H=$TMP/hostile
mkdir -p "$H"
sed -e 's/,inplace,/,"in<b>place<\/b>\&""x""",/' -e 's/,h200,/,h<i>200,/' \
    -e 's/"needs 99999 MiB of workspace, 1000 MiB free"/"<img src=x onerror=""alert(1)""> \& q"/' \
    tests/fixtures/gaps.csv >"$H/run.csv"
printf '%s\n' 'gpu_name=<script>alert("env")</script>' 'timestamp=2026&<x>' 'git_rev="><img src=y>' >"$H/run.env"
if ! "$REPORT_BIN" html "$H/run.csv" "$H" >"$H/out" 2>&1; then
    fail "escaping: build/report html refused the run with markup in it: $(tr '\n' ' ' <"$H/out")"
elif grep -qE '<script|<img src=[xy]|<b>place|<i>200|<x>' "$H/report.html"; then
    fail "escaping: markup from the input files reaches the page: $(grep -oE '<script|<img src=[xy]|<b>place|<i>200|<x>' "$H/report.html" | sort -u | tr '\n' ' ')"
elif grep -qF 'in&lt;b&gt;place&lt;/b&gt;&amp;&quot;x&quot;' "$H/report.html" &&
    grep -qF 'title="&lt;img src=x onerror=&quot;alert(1)&quot;&gt; &amp; q"' "$H/report.html" &&
    grep -qF '&lt;script&gt;alert(&quot;env&quot;)&lt;/script&gt;' "$H/report.html" &&
    grep -qF 'h&lt;i&gt;200' "$H/report.html"; then
    ok "escaping: markup in a variant name, the GPU, a reason and the .env is shown as text"
else
    fail "escaping: the escaped variant name, reason, GPU or .env value is missing from the page"
fi

# fits_width DIR: DIR/report.html, probed in Chromium, does not scroll
# sideways at $WIDTH px; the probe's line is left in $line.
fits_width() {
    cp "$1/report.html" "$1/probe.html"
    echo "$PROBE_JS" >>"$1/probe.html"
    line=$(probe "$1/probe.html" "$1/probe.log")
    [ -n "$line" ] && [ "$(field "$line" scroll)" -le "$(field "$line" client)" ]
}

# PyTorch peers: at D=64 causal (cold and graph) torch_sdpa_cudnn is the
# fastest of all, so the fastest-kernel table names it, marked; the
# speedup table has the three points, flash_hopper at D=128 causal 1.24×
# over torch_sdpa_cudnn (1.89776 / 1.52669 ms), shaded as a win.
P=$TMP/peers
mkdir -p "$P"
if ! "$REPORT_BIN" html tests/fixtures/peers.csv "$P" >"$P/out" 2>&1; then
    fail "peers: build/report html refused tests/fixtures/peers.csv: $(tr '\n' ' ' <"$P/out")"
else
    sed -n '/id="table-speedup-torch"/,/<\/table>/p' "$P/report.html" >"$P/torch.html"
    # the fastest-kernel table is the only one whose name cells carry the mark
    wins=$(grep -o '<td class="grp name">torch_sdpa_cudnn <span class="peer">(PyTorch)</span></td>' "$P/report.html" | wc -l)
    if [ "$wins" != 2 ]; then
        fail "peers: the fastest-kernel table does not name torch_sdpa_cudnn (PyTorch) at D=64 causal in both modes ($wins cells)"
    elif [ "$(grep -c '^<tr><td>' "$P/torch.html")" != 3 ] ||
        ! grep -q '<td class="grp name">torch_sdpa_cudnn</td><td>1.898</td>.*<td class="best">1.24</td></tr>' "$P/torch.html"; then
        fail "peers: the speedup-over-PyTorch table lacks its 3 points or flash_hopper's 1.24 at D=128 causal"
    else
        if ! fits_width "$P"; then
            fail "peers: the page with 12 variants scrolls sideways at $WIDTH px (probe '${line:-none}')"
        else
            ok "peers: torch_sdpa_cudnn (PyTorch) fastest at D=64 causal, the speedup table right, no sideways scrolling"
        fi
    fi
fi

# Model shapes (tests/fixtures/llm.csv, the llm grid's five shapes): the
# tables are grouped by shape under the figures' panel titles, a shape's
# rows under its own header, and the page fits the width.
L=$TMP/llm
mkdir -p "$L"
if ! "$REPORT_BIN" html tests/fixtures/llm.csv "$L" >"$L/out" 2>&1; then
    fail "model shapes: build/report html refused tests/fixtures/llm.csv: $(tr '\n' ' ' <"$L/out")"
elif [ "$(grep -c '<tr class="panel"><th colspan="[0-9]*">H=[0-9]*\( KV=[0-9]*\( (MQA)\)\?\)\?, D=[0-9]*, causal</th></tr>' "$L/report.html")" != 15 ] ||
    ! grep -A1 '>H=16 KV=1 (MQA), D=128, causal</th></tr>' "$L/report.html" | grep -q '^<tr><td>2048</td><td>8</td><td>16</td>'; then
    fail "model shapes: the tables are not grouped by the 5 shapes (3 tables × 5 headers), each shape's rows under its own"
else
    if ! fits_width "$L"; then
        fail "model shapes: the page scrolls sideways at $WIDTH px (probe '${line:-none}')"
    else
        ok "model shapes: a table section per shape (H=16 KV=1 (MQA), D=128, causal, ...), no sideways scrolling"
    fi
fi

# A run assembled from three revisions (the committed plots/h200 run, its
# rows measured by cbd4fe3 and then extended with --extend --force by
# a48f90f and adf03dd): the first section, "What ran", names every
# revision with its rows and when they were measured, and the .env's
# continuations, before anything else on the page.
X=$TMP/mixed
mkdir -p "$X"
if ! "$REPORT_BIN" html results/h200/20261201T034152Z.csv "$X" >"$X/out" 2>&1; then
    fail "revisions: build/report html refused results/h200/20261201T034152Z.csv: $(tr '\n' ' ' <"$X/out")"
else
    sed -n '/id="run"/,/id="headline"/p' "$X/report.html" >"$X/run.html"
    if grep -q 'the rows come from 3 revisions' "$X/run.html" &&
        grep -q '<code>cbd4fe390dd5</code> (454 rows, 2026-12-01T' "$X/run.html" &&
        grep -q '<code>a48f90fd3b16</code> (50 rows, ' "$X/run.html" &&
        grep -q '<code>adf03dd90fb4</code> (96 rows, ' "$X/run.html" &&
        [ "$(grep -o 'extended 2026-12-01T[0-9:]*Z by <code>' "$X/run.html" | wc -l)" = 5 ]; then
        ok "revisions: the page's first section names the 3 revisions of its rows, their dates and the 5 extensions"
    else
        fail "revisions: the first section of a run of 3 revisions does not name them, their rows and dates, and its extensions"
    fi
fi

# A compare run (tests/fixtures/compare/20261210T120000Z: its variants
# measured in turns, the samples beside the rows): "What ran" says so and
# "Where it stands" gives each variant's interleaved ratio with its
# interval; the same rows with compare_run emptied are "row after row".
C=$TMP/compare
mkdir -p "$C/plain"
sed -E '2,$ s/,[^,]*,([^,]*)$/,,\1/' tests/fixtures/compare/20261210T120000Z.csv >"$C/plain/20261210T120000Z.csv"
if ! "$REPORT_BIN" html tests/fixtures/compare/20261210T120000Z.csv "$C" >"$C/out" 2>&1 ||
    ! "$REPORT_BIN" html "$C/plain/20261210T120000Z.csv" "$C/plain" >>"$C/out" 2>&1; then
    fail "compare run: build/report html refused tests/fixtures/compare/20261210T120000Z.csv: $(tr '\n' ' ' <"$C/out")"
elif ! grep -q '<b>in turns</b>: compare run' "$C/report.html" ||
    ! grep -q '<li><b>D = 128, causal</b>, S = 4096 (sustained): flash_hopper 1\.[0-9][0-9]× \[1\.[0-9][0-9], 1\.[0-9][0-9]\]' "$C/report.html"; then
    fail "compare run: the page does not say the rows were measured in turns, or where flash_hopper stands with its interval"
elif ! grep -q '<b>row after row</b>' "$C/plain/report.html" ||
    ! grep -q 'S = 4096 (sustained): flash_hopper 1\.[0-9][0-9]×, flash_mma 0\.[0-9][0-9]× (row after row)' "$C/plain/report.html"; then
    fail "compare run: the same rows without compare_run are not stated as measured row after row"
elif ! fits_width "$C"; then
    fail "compare run: the page scrolls sideways at $WIDTH px (probe '${line:-none}')"
else
    ok "compare run: measured in turns, where it stands with intervals (row after row without compare_run), no sideways scrolling"
fi

# Burst and sustained rows in one run (tests/fixtures/compare/regimes.csv):
# a full table per regime, each saying its regime, the sustained one with
# the settled clock (MHz) and power (W) of every row; the page fits 1400 px.
G=$TMP/regimes
mkdir -p "$G"
if ! "$REPORT_BIN" html tests/fixtures/compare/regimes.csv "$G" >"$G/out" 2>&1; then
    fail "regimes: build/report html refused tests/fixtures/compare/regimes.csv: $(tr '\n' ' ' <"$G/out")"
elif ! grep -q '<h3 id="table-cold">cold, burst ' "$G/report.html" ||
    ! grep -q '<h3 id="table-cold-sustained">cold, sustained ' "$G/report.html" ||
    [ "$(sed -n '/id="table-cold-sustained"/,/<\/table>/p' "$G/report.html" | grep -o '<td>1755</td><td>688</td>' | wc -l)" != 6 ]; then
    fail "regimes: no table per regime, or the sustained table lacks each row's settled clock and power"
elif ! fits_width "$G"; then
    fail "regimes: the page scrolls sideways at $WIDTH px (probe '${line:-none}')"
else
    ok "regimes: a table per regime, the sustained rows' settled MHz and W, no sideways scrolling"
fi

# The forward, the backward and forward + backward in one run
# (tests/fixtures/passes.csv): the forward's tables under "Full tables",
# the backward's and forward + backward's each in a section of its own
# with its panels titled by the pass, the headline's sentences and
# fastest-kernel tables per pass; the page fits 1400 px.
W=$TMP/passes
mkdir -p "$W"
if ! "$REPORT_BIN" html tests/fixtures/passes.csv "$W" >"$W/out" 2>&1; then
    fail "passes: build/report html refused tests/fixtures/passes.csv: $(tr '\n' ' ' <"$W/out")"
elif ! grep -q '<div class="section" id="tables-bwd">' "$W/report.html" ||
    ! grep -q '<div class="section" id="tables-fwd_bwd">' "$W/report.html" ||
    [ "$(sed -n '/id="tables-bwd"/,/id="tables-fwd_bwd"/p' "$W/report.html" | grep -c '<tr class="panel"><th colspan="[0-9]*">D = 128, [a-z-]*, backward (dQ, dK, dV)</th></tr>')" != 2 ] ||
    sed -n '/id="tables"/,/id="tables-bwd"/p' "$W/report.html" | grep -q '<tr class="panel">.*backward'; then
    fail "passes: no backward and forward + backward table sections, or their panels not titled by the pass"
elif ! grep -q '<b>cold, burst, backward (dQ, dK, dV)</b>: ' "$W/report.html" ||
    [ "$(grep -c '^<p class="cap">\(Forward\|Backward (dQ, dK, dV)\|Forward + backward\)</p>$' "$W/report.html")" != 3 ]; then
    fail "passes: the headline's sentences or fastest-kernel tables are not per pass"
elif ! fits_width "$W"; then
    fail "passes: the page scrolls sideways at $WIDTH px (probe '${line:-none}')"
else
    ok "passes: a table section per pass, panels titled by the pass, the headline per pass, no sideways scrolling"
fi

# decode_rows_listed PAGE CSV [PEAK]: every decode row of CSV (q_len <
# seq_len) is in PAGE's decode table, under its panel's header (its shape
# and q_len), in the line of its kv_len, batch and heads, in its variant's
# columns (ms, GB/s, % read peak, TFLOP/s; the variants in the CSV's
# order): GB/s the CSV's gbps to the page's whole GB/s, % read peak
# 100·gbps/PEAK to its tenth, or – without PEAK. Prints how many rows it
# found, or what is wrong (exit 1).
decode_rows_listed() {
    awk -F, -v peak="${3:-}" '
    FNR == NR {
        if (FNR == 1) { for (i = 1; i <= NF; i++) c[$i] = i; next }
        if ($c["q_len"] == "" || $c["q_len"] == $c["seq_len"]) next
        v = $c["variant"]; h = $c["heads"]; kv = $c["kv_heads"]
        if (!(v in col)) col[v] = nvar++
        title = "H=" h (kv != h ? " KV=" kv (kv == 1 ? " (MQA)" : "") : "") " Q=" $c["q_len"] ", D=" $c["head_dim"] \
            ", " ($c["causal"] ? "causal" : "non-causal")
        want[title "|" $c["seq_len"] "|" $c["batch"] "|" h "|" v] = $c["gbps"]
        rows++
        next
    }
    /<div class="section" id="decode">/ { on = 1 }
    /<div class="section" id="tables">/ { on = 0 }
    !on { next }
    /^<tr class="panel">/ { title = $0; sub(/^<tr class="panel"><th colspan="[0-9]*">/, "", title); sub(/<\/th>.*/, "", title); next }
    /^<tr><td>/ {
        line = $0; gsub(/<\/td>/, "\t", line); gsub(/<[^>]*>/, "", line); n = split(line, cell, "\t")
        for (v in col) {
            key = title "|" cell[1] "|" cell[2] "|" cell[3] "|" v
            if (!(key in want)) continue
            gb = cell[5 + 4 * col[v]]; pct = cell[6 + 4 * col[v]]
            d = gb - want[key]; if (d < 0) d = -d
            if (d > 0.6) { print key ": " gb " GB/s on the page, " want[key] " in the CSV"; bad = 1 }
            if (peak == "" && pct != "–") { print key ": % read peak " pct " without a peak"; bad = 1 }
            if (peak != "") { d = pct - 100 * want[key] / peak; if (d < 0) d = -d
                if (d > 0.06) { print key ": % read peak " pct ", not " 100 * want[key] / peak; bad = 1 } }
            delete want[key]; found++
        }
    }
    END {
        for (k in want) { print k ": not in the decode table"; bad = 1 }
        if (!rows) { print "no decode row in the CSV"; bad = 1 }
        if (bad) exit 1
        print found
    }' "$2" "$1"
}

# A decode run (tests/fixtures/decode.csv: an H200 run of the decode grid,
# made without --peak): the page links a Decode section whose table lists
# every decode point's variants with their GB/s as attnbench wrote them, the
# fastest in bold, % read peak as – with the words that the peak was not
# measured; the same run with a read peak in its .env (a test value written
# here, not a measurement) gives each row its share of it; the committed
# run, without decode rows, has no such section; the page fits 1400 px.
K=$TMP/decode
mkdir -p "$K/peak"
cp tests/fixtures/decode.csv "$K/peak/run.csv"
{ cat tests/fixtures/decode.env; echo peak_read_gbps=4000.0; } >"$K/peak/run.env"
if ! "$REPORT_BIN" html tests/fixtures/decode.csv "$K" >"$K/out" 2>&1 ||
    ! "$REPORT_BIN" html "$K/peak/run.csv" "$K/peak" >>"$K/out" 2>&1; then
    fail "decode: build/report html refused tests/fixtures/decode.csv: $(tr '\n' ' ' <"$K/out")"
elif ! grep -q '<a href="#decode">Decode</a>' "$K/report.html" || ! grep -q '<div class="section" id="decode">' "$K/report.html" ||
    ! grep -q '<h3 id="decode-cold">cold, burst ' "$K/report.html"; then
    fail "decode: the page has no Decode section with its cold table, or no link to it"
elif ! listed=$(decode_rows_listed "$K/report.html" tests/fixtures/decode.csv); then
    fail "decode: the table does not list the decode rows' GB/s: $(head -n 3 <<<"$listed" | tr '\n' ' ')"
elif ! peaked=$(decode_rows_listed "$K/peak/report.html" "$K/peak/run.csv" 4000); then
    fail "decode: with a read peak, the table's GB/s or % read peak are wrong: $(head -n 3 <<<"$peaked" | tr '\n' ' ')"
elif [ "$(sed -n '/id="decode"/,/id="tables"/p' "$K/report.html" | grep -o '<td class="grp best">' | wc -l)" != 30 ]; then
    fail "decode: the fastest variant of each of the 30 decode points is not marked once"
elif ! grep -q 'not measured in this run (run with <code>--peak</code>)' "$K/report.html" ||
    ! grep -q '<code>peak_read_gbps</code>: <b>4000 GB/s</b>)' "$K/peak/report.html"; then
    fail "decode: the section does not say where the read peak comes from, or that it was not measured"
elif grep -q 'id="decode"\|href="#decode"' "$PAGE"; then
    fail "decode: the committed run, without decode rows, has a decode section or link"
elif ! fits_width "$K"; then
    fail "decode: the page scrolls sideways at $WIDTH px (probe '${line:-none}')"
else
    ok "decode: a Decode section listing the $listed decode rows' GB/s (and % of a read peak), the fastest marked, no sideways scrolling"
fi

# make plots, make report and make figures, run in a scratch tree whose
# code, plots/*.gp and build/ are this checkout's (links) and whose
# results/ and plots/<gpu>/figures.conf are the test's: a results file
# named to run a command when a shell reads its name (the newest run), and
# figures.conf lines that would run one, run nothing; figures.conf is read
# as data (an unknown key or an unsafe value refused as figures.conf:LINE,
# exit 2); a value with a quote is refused; and make plots takes the run
# figures.conf names over the newest, saying so.
F=$TMP/farm
mkdir -p "$F/results/tgpu" "$F/plots/tgpu" "$F/plots/evil" "$F/plots/evil2"
for f in Makefile bench common variants tests fuzz tools .ci build; do ln -s "$PWD/$f" "$F/$f"; done
for f in plots/*.gp; do ln -s "$PWD/$f" "$F/$f"; done
cp tests/fixtures/single.csv "$F/results/tgpu/20991231T000000Z.csv"
hostile='20991231T000001Z;touch${IFS}X;.csv'
cp tests/fixtures/single.csv "$F/results/tgpu/$hostile"
rev=$(sed -n 's/^#define ATTN_GIT_REV "\(.*\)"$/\1/p' build/build_info.h) # nothing rebuilds
fmake() { (cd "$F" && timeout 300 make --no-print-directory GIT_REV="$rev" "$@" >"$TMP/make.out" 2>&1); }
fmake plots GPU=tgpu
rc=$?
if [ -e "$F/X" ]; then
    fail "make plots: the results file named '$hostile' ran its command (X was created)"
elif [ $rc != 0 ] || ! grep -qF "make plots: results/tgpu/$hostile (the newest run under results/tgpu/" "$TMP/make.out"; then
    fail "make plots: the newest run, '$hostile', was not drawn as a file (exit $rc): $(grep -v '^[✓✗]' "$TMP/make.out" | head -n 3 | tr '\n' ' ')"
else
    fmake report GPU=tgpu
    rc=$?
    if [ -e "$F/X" ] || [ $rc != 0 ]; then
        fail "make report: the file named '$hostile' ran its command or was refused (exit $rc)"
    else
        ok "make plots, make report: the newest run named '$hostile' is drawn as a file, nothing runs"
    fi
fi
rm -rf "build/plots/tgpu"
echo 'RESULTS=results/tgpu/20991231T000000Z.csv' >"$F/plots/tgpu/figures.conf"
if fmake plots GPU=tgpu && grep -q '^make plots: results/tgpu/20991231T000000Z.csv (named by plots/tgpu/figures.conf' "$TMP/make.out"; then
    ok "make plots: the run plots/<gpu>/figures.conf names, not the newest, and it says so"
else
    fail "make plots: did not take the run figures.conf names: $(grep '^make' "$TMP/make.out" | head -n 2 | tr '\n' ' ')"
fi
rm -rf "build/plots/tgpu"
printf '%s\n' '# a line that would run a command where the shell parses it' 'RESULTS=results/tgpu/20991231T000000Z.csv' \
    'PLOT_DIR=x;{touch,X};' >"$F/plots/evil/figures.conf"
printf '%s\n' 'RESULTS=results/tgpu/a;{touch,X};.csv' >"$F/plots/evil2/figures.conf"
fmake figures GPU=evil
rc1=$?
grep -q '^make figures: plots/evil/figures.conf:3: unknown key .PLOT_DIR.' "$TMP/make.out"
said1=$?
fmake figures GPU=evil2
rc2=$?
grep -q '^make figures: plots/evil2/figures.conf:1: RESULTS=.*: a path of letters, digits' "$TMP/make.out"
said2=$?
if [ -e "$F/X" ] || [ -e "$F/x" ]; then
    fail "make figures: a figures.conf line ran its command"
elif [ $rc1 != 2 ] || [ $rc2 != 2 ] || [ $said1 != 0 ] || [ $said2 != 0 ]; then
    fail "make figures: hostile figures.conf lines not refused as figures.conf:LINE with exit 2 ($rc1, $rc2): $(grep '^make' "$TMP/make.out" | head -n 1)"
else
    ok "make figures: figures.conf read as data, an unknown key and an unsafe value refused as figures.conf:LINE"
fi
fmake plots "RESULTS=results/tgpu/it's.csv"
rc=$?
if [ $rc = 2 ] && grep -q "^make plots: RESULTS=.*single quote: refused" "$TMP/make.out"; then
    ok "make plots: a RESULTS= value with a quote refused, exit 2"
else
    fail "make plots: a RESULTS= value with a quote not refused (exit $rc)"
fi
# a run in a folder of its GPU's (results/<gpu>/decode/, train/) draws into
# build/plots/<gpu>/<folder>/RUN_ID/, not build/plots/<folder>/
mkdir -p "$F/results/tgpu/sub"
cp tests/fixtures/single.csv "$F/results/tgpu/sub/20991231T000000Z.csv"
rm -rf build/plots/tgpu build/plots/sub
fmake plots RESULTS=results/tgpu/sub/20991231T000000Z.csv
rc=$?
if [ $rc = 0 ] && [ -s build/plots/tgpu/sub/20991231T000000Z/latency.png ] && [ ! -e build/plots/sub ]; then
    ok "make plots: a run in results/<gpu>/FOLDER/ drawn into build/plots/<gpu>/FOLDER/RUN_ID/"
else
    fail "make plots: results/tgpu/sub/ run not drawn into build/plots/tgpu/sub/ (exit $rc): $(grep '^make' "$TMP/make.out" | tail -n 1)"
fi
rm -rf build/plots/tgpu

# A PLOT_DIR= that gnuplot would read as a command: a file name that starts
# with '|' (set output) or '<' (load, plot) runs it; the directory is named
# from ./ instead, and the figures are drawn into it.
for d in '|touch X;' '<touch X;'; do
    rm -f "$F/X"
    fmake plots RESULTS=results/tgpu/20991231T000000Z.csv "PLOT_DIR=$d"
    rc=$?
    if [ -e "$F/X" ]; then
        fail "make plots: PLOT_DIR='$d' ran its command (X was created)"
    elif [ $rc != 0 ] || [ ! -s "$F/$d/latency.png" ]; then
        fail "make plots: PLOT_DIR='$d' not drawn into as a directory (exit $rc): $(grep -v '^[✓✗]' "$TMP/make.out" | tail -n 2 | tr '\n' ' ')"
    else
        ok "make plots: PLOT_DIR='$d' is a directory to gnuplot, nothing runs"
    fi
    rm -rf -- "${F:?}/$d"
done

# make report of a run of three passes: each pass its own figures (the
# forward's NAME.png, NAME-bwd.png, NAME-fwd_bwd.png), the page showing
# them all, a second rendering leaving no file of the first behind.
fmake report RESULTS=tests/fixtures/passes.csv PLOT_DIR=passes-figs &&
    fmake report RESULTS=tests/fixtures/passes.csv PLOT_DIR=passes-figs
rc=$?
P3=$F/passes-figs
missing=""
for s in headline latency throughput memory; do
    for p in "" -bwd -fwd_bwd; do
        [ -s "$P3/$s$p.png" ] && [ -s "$P3/$s$p.svg" ] && grep -q "src=\"$s$p.png\"" "$P3/report.html" 2>/dev/null ||
            missing="$missing $s$p"
    done
done
if [ $rc != 0 ] || [ -n "$missing" ]; then
    fail "make report: a run of three passes lacks figures, or its page does not show them (exit $rc):${missing:- none missing}"
elif [ "$(find "$P3" -name '*.png' | wc -l)" != 12 ] || [ -e "$P3/data/page-2" ] || [ ! -f "$P3/data/bwd/meta.gp" ]; then
    fail "make report: a run of three passes does not draw exactly 12 PNGs from data/, data/bwd/ and data/fwd_bwd/"
else
    ok "make report: a run of three passes draws each pass's figures (NAME, NAME-bwd, NAME-fwd_bwd), its page shows them"
fi

# make figures: the committed set is PNG only (no SVG, none left from before),
# each PNG in a palette (IHDR colour type 3: pngquant), and its page.
touch "$F/plots/tgpu/stale.svg"
fmake figures GPU=tgpu
rc=$?
svgs=$(find "$F/plots/tgpu" -name '*.svg' | wc -l)
pngs=0 rgb=0
for f in "$F"/plots/tgpu/*.png; do
    [ -f "$f" ] || continue
    pngs=$((pngs + 1))
    [ "$(od -An -tu1 -j25 -N1 "$f" | tr -d ' ')" = 3 ] || rgb=$((rgb + 1))
done
if [ $rc = 0 ] && [ "$svgs" = 0 ] && [ "$pngs" -ge 4 ] && [ "$rgb" = 0 ] && [ -s "$F/plots/tgpu/report.html" ] &&
    grep -q '^make figures: results/tgpu/20991231T000000Z.csv (named by plots/tgpu/figures.conf) into plots/tgpu/' "$TMP/make.out"; then
    ok "make figures: the committed set is $pngs palette PNGs and its page, no SVG"
else
    fail "make figures: exit $rc, $pngs PNGs ($rgb not in a palette), $svgs SVGs: $(grep -v '^[✓✗]' "$TMP/make.out" | tail -n 2 | tr '\n' ' ')"
fi

finish
