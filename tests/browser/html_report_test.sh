#!/usr/bin/env bash
# The HTML report the way a person sees it (issue 19): rendered by headless Chromium at
# 1400x1000, it must raise no console error or uncaught exception, show the summary sentences on
# the first screen, start its first chart within the top 800 px (issue 49: the 1400x900 first
# screen holds the answer and a chart) and not scroll sideways; a PNG screenshot of that first screen is written and
# its path printed.
#
#   html_report_test.sh HYBRIDBENCH OUT_DIR [check|planted-error]
#
# check (default): a small real sweep (or the report named by HB_BROWSER_REPORT), rendered and
#   checked. planted-error: the same page with a script error planted; passes only when the check
#   catches it (proof that the check can fail).
# Exit 77 (CTest: skipped) with the reason where Chromium or the binary is missing.
set -uo pipefail

bin=${1:?usage: html_report_test.sh HYBRIDBENCH OUT_DIR [check|planted-error]}
out=${2:?usage: html_report_test.sh HYBRIDBENCH OUT_DIR [check|planted-error]}
mode=${3:-check}
case "$mode" in check | planted-error) ;; *)
  echo "unknown mode '$mode': use check or planted-error" >&2
  exit 2
  ;;
esac

browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" > /dev/null; then browser=$(command -v "$b") && break; fi
done
if [ -z "$browser" ]; then
  echo "SKIP: no Chromium here (Debian: apt-get install --no-install-recommends chromium;" \
    "scripts/install-deps.sh installs it)"
  exit 77
fi
if [ ! -x "$bin" ]; then
  echo "SKIP: $bin is not built"
  exit 77
fi
command -v python3 > /dev/null || {
  echo "SKIP: python3 is needed to read the dumped page"
  exit 77
}

mkdir -p "$out"
out=$(cd "$out" && pwd)
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT

json=${HB_BROWSER_REPORT:-}
if [ -z "$json" ]; then
  # A real sweep, small enough for a loaded 2-core machine: the reference, the baselines the
  # summary compares with and HybridGen at two lengths.
  # The planted-error case only proves the check can fail: the smallest sweep does.
  json=$out/report.json
  sweep=(--seq-len 2k,4k --strategy full-gpu,cpu-only,offload,quest,streamingllm,hybridgen
    --decode-steps 10)
  [ "$mode" = check ] || sweep=(--seq-len 1k --strategy full-gpu,cpu-only,hybridgen --decode-steps 4)
  if ! "$bin" run -q "${sweep[@]}" --out "$json" > "$out/run.log" 2>&1; then
    echo "FAIL: hybridbench run failed:" >&2
    cat "$out/run.log" >&2
    exit 1
  fi
fi
html=$out/report.html
if ! "$bin" report "$json" --html "$html" --out "$out/report.md" 2> "$out/report.log"; then
  echo "FAIL: hybridbench report failed:" >&2
  cat "$out/report.log" >&2
  exit 1
fi

# Chromium as root in a container, on a closed network: no sandbox, no GPU, and none of the
# background requests (QUIC, updates, sync) that would flood it; a fresh profile every time.
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
  --disable-background-networking --disable-component-update --disable-sync
  --disable-dev-shm-usage --hide-scrollbars --window-size=1400,1000
  --enable-logging=stderr --v=1)

# The probe: a copy of the page with an error collector injected first in <head> (the report
# itself has no scripts), which after load appends what it saw as JSON in <pre id="hb-probe">.
probe=$out/probe.html
python3 - "$html" "$probe" "$mode" << 'EOF'
import sys
src, dst, mode = sys.argv[1:4]
page = open(src, encoding="utf-8").read()
collector = r"""<script>
window.__hbErrors = [];
window.addEventListener('error', function (e) {
  __hbErrors.push('uncaught: ' + (e.message || ('failed to load ' + ((e.target && (e.target.src || e.target.href)) || e.type))));
}, true);
window.addEventListener('unhandledrejection', function (e) { __hbErrors.push('unhandled rejection: ' + e.reason); });
['error', 'warn', 'assert'].forEach(function (k) {
  var f = console[k];
  console[k] = function () {
    var a = Array.prototype.slice.call(arguments);
    if (k !== 'assert' || !a[0]) __hbErrors.push('console.' + k + ': ' + a.map(String).join(' '));
    return f.apply(console, a);
  };
});
window.addEventListener('load', function () {
  var s = document.getElementById('summary');
  var r = s ? s.getBoundingClientRect() : null;
  var chart = document.querySelector('svg');
  var c = chart ? chart.getBoundingClientRect() : null;
  var p = document.createElement('pre');
  p.id = 'hb-probe';
  p.textContent = JSON.stringify({
    errors: __hbErrors,
    sentences: s ? Array.prototype.map.call(s.querySelectorAll('li'), function (li) { return li.innerText; }) : null,
    top: r ? r.top + window.scrollY : null, bottom: r ? r.bottom + window.scrollY : null,
    chart_top: c ? c.top + window.scrollY : null,
    viewport: [window.innerWidth, window.innerHeight],
    scroll_width: document.documentElement.scrollWidth
  });
  document.body.appendChild(p);
});
</script>
"""
assert "<head>" in page, "the report has no <head>"
page = page.replace("<head>", "<head>\n" + collector, 1)
if mode == "planted-error":
    page = page.replace("</body>", "<script>hbPlantedUndefinedFunction();</script>\n</body>", 1)
open(dst, "w", encoding="utf-8").write(page)
EOF

timeout 120 "$browser" "${flags[@]}" --user-data-dir="$profile/dom" --dump-dom "file://$probe" \
  > "$out/dom.html" 2> "$out/chromium-dom.log"
rc=$?
if [ $rc -ne 0 ]; then
  echo "FAIL: chromium --dump-dom exited $rc; its log:" >&2
  tail -30 "$out/chromium-dom.log" >&2
  exit 1
fi

# Verdict: the page's own collector plus Chromium's console log (lines "CONSOLE(n)"; the report
# has no script of its own, so any console line at all is someone's error).
python3 - "$out/dom.html" "$out/chromium-dom.log" << 'EOF'
import html, json, re, sys
dom = open(sys.argv[1], encoding="utf-8", errors="replace").read()
log = open(sys.argv[2], encoding="utf-8", errors="replace").read()
problems = []
m = re.search(r'<pre id="hb-probe">(.*?)</pre>', dom, re.S)
if not m:
    print("FAIL: the page never finished loading (no probe in the dumped DOM)")
    sys.exit(1)
probe = json.loads(html.unescape(m.group(1)))
problems += probe["errors"]
problems += ["chromium console: " + l.strip() for l in log.splitlines() if "CONSOLE" in l]
# Layout depends on the width only (the page uses no vh units), so the first screen is the top
# 1000 px of the page laid out 1400 px wide, whatever height --dump-dom's window got (it
# subtracts a window frame: 857 px with Chromium 156, while --screenshot gets the full 1000).
width, height = probe["viewport"][0], 1000
if width != 1400:
    problems.append("viewport is %d px wide, not 1400: the first-screen check would be wrong" % width)
if not probe["sentences"]:
    problems.append('no summary (<ul id="summary"> with sentences) on the page')
elif not 3 <= len(probe["sentences"]) <= 8:
    problems.append("the summary has %d sentences, not 3-5 (up to 8 with several settings)" % len(probe["sentences"]))
if probe["bottom"] is not None and (probe["top"] < 0 or probe["bottom"] > height):
    problems.append("the summary spans %.0f-%.0f px: not on the first screen (0-%d)" % (probe["top"], probe["bottom"], height))
# Issue 49: the first screen (1400x900) holds the answer and a chart: the first chart starts on it.
if probe["chart_top"] is None:
    problems.append("the page has no chart")
elif probe["chart_top"] > 900 - 100:
    problems.append("the first chart starts at %.0f px: not on the first 900 px screen" % probe["chart_top"])
if probe["scroll_width"] > width:
    problems.append("the page is %d px wide: it scrolls sideways in a %d px window" % (probe["scroll_width"], width))
print("first screen summary:")
for s in probe["sentences"] or []:
    print("  - " + s)
if problems:
    print("FAIL:")
    for p in problems:
        print("  " + p)
    sys.exit(1)
EOF
verdict=$?

if [ "$mode" = planted-error ]; then
  if [ $verdict -eq 0 ]; then
    echo "FAIL: a planted script error went unnoticed" >&2
    exit 1
  fi
  if ! grep -q "hbPlantedUndefinedFunction" "$out/dom.html" "$out/chromium-dom.log"; then
    echo "FAIL: the check failed, but not on the planted error" >&2
    exit 1
  fi
  echo "ok: the planted script error was caught"
  exit 0
fi
[ $verdict -eq 0 ] || exit 1

# The first screen as a person sees it: the page itself, not the probe.
png=$out/report.png
rm -f "$png"
timeout 120 "$browser" "${flags[@]}" --user-data-dir="$profile/shot" --screenshot="$png" \
  "file://$html" > /dev/null 2> "$out/chromium-shot.log"
python3 - "$png" << 'EOF' || exit 1
import struct, sys
try:
    data = open(sys.argv[1], "rb").read(24)
except OSError:
    print("FAIL: no screenshot at " + sys.argv[1]); sys.exit(1)
if data[:8] != b"\x89PNG\r\n\x1a\n":
    print("FAIL: " + sys.argv[1] + " is not a PNG"); sys.exit(1)
w, h = struct.unpack(">II", data[16:24])
if (w, h) != (1400, 1000):
    print("FAIL: screenshot is %dx%d, not 1400x1000" % (w, h)); sys.exit(1)
EOF
echo "screenshot: $png"
echo "page: $html"
